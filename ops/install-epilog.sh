#!/usr/bin/env bash
# Installs the jobsight binaries and creates the spool the epilog hook writes into.
# Run as root: on the controller for EpilogSlurmctld (recommended), or on every node for Epilog
# (then put the spool on a file system that the pipeline host also sees).
#
#   ops/install-epilog.sh [--from DIR] [--prefix /usr/local] [--spool /var/spool/jobsight]
#                         [--owner slurm] [--group slurm]
#
#   --from    where the built binaries are (default: $CARGO_TARGET_DIR/release, else target/release)
#   --prefix  installs PREFIX/sbin/jobsight-epilog, PREFIX/bin/jobsight and the training suite
#             (jobs/training) in PREFIX/share/jobsight/training, the docs in PREFIX/share/doc/jobsight
#   --spool   spool directory to create (existing records are kept)
#   --owner   the user the hook runs as: slurm for EpilogSlurmctld, root for Epilog
#   --group   a group shared with the user that runs the pipeline (it claims from the spool)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
from="${CARGO_TARGET_DIR:-$top/target}/release"
prefix=/usr/local
spool=/var/spool/jobsight
owner=slurm
group=
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --spool) spool=$2; shift 2 ;;
    --owner) owner=$2; shift 2 ;;
    --group) group=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "install-epilog: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "install-epilog: run as root" >&2; exit 1; }
# The slurm user comes with Slurm's packages: install Slurm before the hook.
id "$owner" >/dev/null 2>&1 || { echo "install-epilog: user '$owner' does not exist: install Slurm first (its packages create the slurm user), or pass --owner" >&2; exit 1; }
group=${group:-$(id -gn "$owner")}
for bin in jobsight-epilog jobsight; do
  [ -x "$from/$bin" ] || { echo "install-epilog: $from/$bin not found: build with 'cargo build --release --workspace' or pass --from" >&2; exit 1; }
done

install -d -m 0755 "$prefix/sbin" "$prefix/bin"
install -m 0755 "$from/jobsight-epilog" "$prefix/sbin/jobsight-epilog"
install -m 0755 "$from/jobsight" "$prefix/bin/jobsight"
# The labelled training suite `jobsight model bootstrap` submits (found beside the binary).
repo=$(cd "$(dirname "$0")/.." && pwd)
# The documentation, where `jobsight sql`'s \? points (PREFIX/share/doc/jobsight).
install -d -m 0755 "$prefix/share/doc/jobsight"
install -m 0644 "$repo"/docs/*.md "$repo/README.md" "$prefix/share/doc/jobsight/"
install -d -m 0755 "$prefix/share/jobsight/training"
install -m 0755 "$repo"/jobs/training/*.sh "$repo/jobs/training/training.sbatch" "$prefix/share/jobsight/training/"
# setgid directories: records inherit the shared group, so the pipeline can read and move them.
"$prefix/bin/jobsight" spool init --spool "$spool" --mode 2770 >/dev/null
chown -R "$owner:$group" "$spool"
echo "installed $prefix/sbin/jobsight-epilog, $prefix/bin/jobsight the training suite in $prefix/share/jobsight/training and the docs in $prefix/share/doc/jobsight; spool $spool ($owner:$group, 2770)"
if [ "$spool" = /var/spool/jobsight ]; then
  echo "add to slurm.conf:  EpilogSlurmctld=$prefix/sbin/jobsight-epilog   (see ops/slurm/slurm.conf.snippet)"
else
  echo "this spool is not the default: call the hook from a wrapper, see ops/slurm/slurm.conf.snippet"
fi

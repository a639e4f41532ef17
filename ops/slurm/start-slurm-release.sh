#!/usr/bin/env bash
# A single-node Slurm of another release than the host's, for jobsight's tests: Debian 13's Slurm
# 24.11 or Debian unstable's 26.05, each of which needs a newer C library than Debian 12's, run in a
# root file system of its own Debian release (made once with mmdebstrap and cached as a tarball) and
# entered with chroot. The daemons share the host's network (loopback), process table, /sys (so
# cgroup v1 works as on the host), /tmp and /home, so the paths, users and ports of a test are the
# same inside and out.
#
# Usage: start-slurm-release.sh RELEASE     (22.05: the host's own Slurm, start-slurm-single-node.sh)
#        RELEASE is 24.11 (Debian trixie) or 26.05 (Debian sid)
# SLURM_TARBALL_ONLY=1 makes the root file system's tarball if needed, prints its path and does
# nothing else.
# Every knob of start-slurm-single-node.sh is passed on (SLURM_EPILOG_SLURMCTLD=, SLURM_CLEAN_STATE=1,
# ...); hook scripts and job files must be under a bound path (/tmp, /home, the repository).
#
# What it leaves:
#   /var/tmp/jobsight-slurm/RELEASE/root       the root file system (kept between runs)
#   /var/tmp/jobsight-slurm/RELEASE/bin/       the client commands (sacct, squeue, sbatch, scontrol,
#                                              scancel, sacctmgr, sinfo, srun): put it first in PATH.
#                                              They chroot, so they run as root only; `as-user USER
#                                              COMMAND ARGS...` runs one as another user.
# Stop with stop-slurm-release.sh RELEASE.
#
# Cache: SLURM_ROOTFS_CACHE (default $CARGO_TARGET_DIR/slurm-rootfs, or
# /var/tmp/jobsight-target/slurm-rootfs) holds trixie-<hash>.tar / sid-<hash>.tar (about 600 MB each; 30-60 s to
# make from the Debian archive, 10 s to unpack). Delete a tarball to make it anew.
#
# cgroup: this machine has cgroup v1 (hybrid), and the root file system sees the host's /sys, so
# Slurm uses cgroup/v1 here as on the host. On a cgroup v2 host, Slurm's cgroup/v2 plugin needs
# systemd's delegation (or `IgnoreSystemd=yes` in cgroup.conf with a writable
# /sys/fs/cgroup/system.slice), and 26.05 names each job's directory by its SLUID unless
# `CgroupJobIdPaths=yes`. It refuses a hybrid host such as this one: cgroup-v2-vm.sh boots this
# root file system on a cgroup v2 kernel instead.
set -euo pipefail

RELEASE=${1:?usage: start-slurm-release.sh RELEASE (22.05, 24.11 or 26.05)}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
case "$RELEASE" in
  22.05) exec bash "$HERE/start-slurm-single-node.sh" ;;
  24.11) SUITE=trixie ;;
  26.05) SUITE=sid ;;
  *) echo "start-slurm-release.sh: no recipe for Slurm $RELEASE (known: 22.05, 24.11, 26.05)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }

TOP=/var/tmp/jobsight-slurm/$RELEASE
ROOT=$TOP/root
CACHE=${SLURM_ROOTFS_CACHE:-${CARGO_TARGET_DIR:-/var/tmp/jobsight-target}/slurm-rootfs}
# python3: the test jobs' memory holders (jobs/telemetry/*.sbatch) run inside.
PACKAGES=slurm-wlm,slurmctld,slurmd,slurm-client,slurmdbd,mariadb-server,munge,bc,procps,python3
# Named by the package list, so that a changed list makes a new one.
TARBALL=$CACHE/$SUITE-$(echo "$PACKAGES" | md5sum | cut -c1-8).tar
T0=$(date +%s)
log() { printf '[slurm-%s +%3ss] %s\n' "$RELEASE" "$(( $(date +%s) - T0 ))" "$*"; }

# ------------------------------------------------------ 1. the root file system, made once
if [ ! -s "$TARBALL" ]; then
  if ! command -v mmdebstrap >/dev/null; then
    [ "${SKIP_APT_UPDATE:-0}" = 1 ] || apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
  fi
  mkdir -p "$CACHE"
  # The archive's copy of unstable may be older than its Release file's validity (seen here: 22
  # days expired); the packages are still signed and checked.
  mmdebstrap --variant=apt --format=tar --aptopt='Acquire::Check-Valid-Until "false"' \
    --include="$PACKAGES" "$SUITE" "$TARBALL.tmp" http://deb.debian.org/debian >"$CACHE/$SUITE.log" 2>&1 \
    || { tail -20 "$CACHE/$SUITE.log" >&2; exit 1; }
  mv "$TARBALL.tmp" "$TARBALL"
  rm -rf "$ROOT"
  log "made $TARBALL"
fi
# SLURM_TARBALL_ONLY=1: the tarball only, for ops/slurm/cgroup-v2-vm.sh, which boots its contents.
if [ "${SLURM_TARBALL_ONLY:-0}" = 1 ]; then echo "$TARBALL"; exit 0; fi
if [ ! -e "$ROOT/.jobsight-complete" ] || [ "$TARBALL" -nt "$ROOT/.jobsight-complete" ]; then
  bash "$HERE/stop-slurm-release.sh" "$RELEASE" >/dev/null 2>&1 || true
  rm -rf "$ROOT"; mkdir -p "$ROOT"
  tar -xf "$TARBALL" -C "$ROOT"
  touch "$ROOT/.jobsight-complete"
  log "unpacked $TARBALL"
fi

# ------------------------------------------------------ 2. what the root file system shares
bind() {  # bind <host path> [rbind]: the same path inside, mounted once
  local target=$ROOT$1
  mkdir -p "$target"
  mountpoint -q "$target" && return 0
  if [ "${2:-}" = rbind ]; then mount --rbind "$1" "$target"; mount --make-rslave "$target"
  else mount --bind "$1" "$target"; fi
}
bind /proc rbind
bind /sys rbind
bind /dev rbind
bind /tmp
bind /home
bind "$REPO"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
H=$(hostname -s)
grep -q "[[:space:]]$H\$" "$ROOT/etc/hosts" 2>/dev/null || echo "127.0.0.1 $H" >> "$ROOT/etc/hosts"
# The host's people (uid >= 1000) with the same ids inside, so that jobs, files and sacct agree;
# with a (locked) shadow entry, without which PAM refuses even root's `su - USER`, which slurmd
# runs to load a user's environment (26.05 does for `--export=ALL,VAR=...`).
if [ -n "${SLURM_TEST_USER-alice}" ] && ! id "${SLURM_TEST_USER-alice}" >/dev/null 2>&1; then
  useradd -m -s /bin/bash "${SLURM_TEST_USER-alice}"
fi
while IFS=: read -r name _ uid gid _; do
  [ "$uid" -ge 1000 ] && [ "$uid" -lt 60000 ] || continue
  grep -q "^[^:]*:[^:]*:$gid:" "$ROOT/etc/group" || getent group "$gid" >> "$ROOT/etc/group"
  grep -q "^$name:" "$ROOT/etc/passwd" || getent passwd "$name" >> "$ROOT/etc/passwd"
  grep -q "^$name:" "$ROOT/etc/shadow" || echo "$name:!:20000:0:99999:7:::" >> "$ROOT/etc/shadow"
done < /etc/passwd

# ------------------------------------------------------ 3. the client commands
mkdir -p "$TOP/bin"
for command in sacct squeue sbatch scontrol scancel sacctmgr sinfo srun salloc sstat; do
  cat > "$TOP/bin/$command" <<EOF
#!/bin/sh
# Slurm $RELEASE's $command, run in its root file system ($ROOT) in the caller's directory.
[ "\$(id -u)" = 0 ] || { echo "$command of Slurm $RELEASE runs in a chroot: run it as root, or as '$TOP/bin/as-user USER $command ...'" >&2; exit 1; }
exec /usr/sbin/chroot "$ROOT" /bin/sh -c 'cd "\$1" 2>/dev/null || cd /; shift; exec "\$@"' sh "\$PWD" /usr/bin/$command "\$@"
EOF
  chmod 755 "$TOP/bin/$command"
done
cat > "$TOP/bin/as-user" <<EOF
#!/bin/sh
# as-user USER COMMAND ARGS...: COMMAND of Slurm $RELEASE run as USER in the caller's directory.
user=\$1; shift
exec /usr/sbin/chroot "$ROOT" /usr/sbin/runuser -u "\$user" -- /bin/sh -c 'cd "\$1" 2>/dev/null || cd /; shift; exec "\$@"' sh "\$PWD" "\$@"
EOF
chmod 755 "$TOP/bin/as-user"

# ------------------------------------------------------ 4. the daemons, by the same recipe
cp "$HERE/start-slurm-single-node.sh" "$ROOT/start-slurm-single-node.sh"
chroot "$ROOT" env SKIP_APT_UPDATE=1 bash /start-slurm-single-node.sh
log "Slurm $(chroot "$ROOT" /usr/sbin/slurmctld -V) up; clients in $TOP/bin"

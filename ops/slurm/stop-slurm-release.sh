#!/usr/bin/env bash
# Stops the Slurm of start-slurm-release.sh RELEASE (its daemons by their PIDs) and unmounts what its
# root file system shares with the host. The root file system and its cached tarball stay.
# Usage: stop-slurm-release.sh RELEASE   (22.05: the host's own, stop-slurm-single-node.sh)
set -uo pipefail
RELEASE=${1:?usage: stop-slurm-release.sh RELEASE}
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$RELEASE" = 22.05 ] && exec bash "$HERE/stop-slurm-single-node.sh"
ROOT=/var/tmp/jobsight-slurm/$RELEASE/root
[ -d "$ROOT" ] || exit 0
# The host's stop script, run inside: the pid files are the root file system's /run.
if [ -x "$ROOT/bin/bash" ] && mountpoint -q "$ROOT/proc"; then
  cp "$HERE/stop-slurm-single-node.sh" "$ROOT/stop-slurm-single-node.sh"
  chroot "$ROOT" bash /stop-slurm-single-node.sh
fi
# Innermost first; lazily, so that a job's leftover process cannot keep a mount.
findmnt -rn -o TARGET | grep "^$ROOT/" | sort -r | while read -r target; do
  umount -l "$target" 2>/dev/null || true
done
exit 0

#!/usr/bin/env bash
# A real Slurm on a real cgroup v2 kernel, for the tests of what only such a node does (Slurm 26.05
# names each job's cgroup directory by its SLUID there). This machine cannot be that node: its
# cgroups are hybrid (v1 controllers, the memory one holding processes of the machine itself), and
# Slurm's cgroup/v2 plugin refuses a hybrid host ("Hybrid mode is not supported", read from
# /proc/1/cgroup, which no chroot or namespace changes). So the release's root file system
# (start-slurm-release.sh's, with its Slurm) boots as the initramfs of a QEMU virtual machine with
# Debian 12's cloud kernel; PID 1 there (cgroup-v2-vm-init.sh) mounts cgroup v2 alone, starts
# munged, slurmctld and slurmd with cgroup/v2 (start-slurm-single-node.sh, SLURM_CGROUP=v2,
# without slurmdbd), runs SCENARIO and powers off. QEMU emulates the CPU (TCG): this machine's
# /dev/kvm does not boot a stock kernel (it stops before the kernel's first line).
#
# Usage: cgroup-v2-vm.sh RELEASE SCENARIO OUT_DIR [FILE...]
#   RELEASE    24.11 or 26.05 (a root file system of start-slurm-release.sh)
#   SCENARIO   a shell script run as root in the machine once Slurm is up, with the FILEs in /vm/
#              (e.g. a jobsight-exporter binary); what it writes to /out comes back to OUT_DIR,
#              with slurmd's and slurmctld's logs and the machine's console (console.log)
# Exit status: the scenario's (or 1 if the machine never reported one; qemu's own messages are in
# OUT_DIR/qemu.log).
# Cache: beside the root file systems' tarballs (SLURM_ROOTFS_CACHE, start-slurm-release.sh): the
# kernel and the release's tarball as an initramfs (made again when the tarball changes). A first
# run also installs qemu-system-x86 and cpio and makes the release's tarball (mmdebstrap from the
# Debian archive: Debian unstable's for 26.05), a few minutes; later runs about 70 s.
# VM_MEMORY_MB (default 4096) and VM_TIMEOUT_S (default 600) tune the machine.
set -euo pipefail

RELEASE=${1:?usage: cgroup-v2-vm.sh RELEASE SCENARIO OUT_DIR [FILE...]}
SCENARIO=${2:?usage: cgroup-v2-vm.sh RELEASE SCENARIO OUT_DIR [FILE...]}
OUT=${3:?usage: cgroup-v2-vm.sh RELEASE SCENARIO OUT_DIR [FILE...]}
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
T0=$(date +%s)
log() { printf '[vm-%s +%3ss] %s\n' "$RELEASE" "$(( $(date +%s) - T0 ))" "$*"; }

need=""
command -v qemu-system-x86_64 >/dev/null || need="$need qemu-system-x86"
command -v cpio >/dev/null || need="$need cpio"
if [ -n "$need" ]; then
  [ "${SKIP_APT_UPDATE:-0}" = 1 ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

TARBALL=$(SLURM_TARBALL_ONLY=1 bash "$HERE/start-slurm-release.sh" "$RELEASE" | tail -1)
[ -s "$TARBALL" ] || { echo "no root file system of Slurm $RELEASE ($TARBALL)" >&2; exit 1; }
CACHE=${SLURM_ROOTFS_CACHE:-${CARGO_TARGET_DIR:-/var/tmp/jobsight-target}/slurm-rootfs}/vm
mkdir -p "$CACHE"
WORK=$(mktemp -d /var/tmp/jobsight-vm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# ---------------------------------------------------------------- 1. the kernel, once
KERNEL=$(ls "$CACHE"/vmlinuz-* 2>/dev/null | head -1 || true)
if [ -z "$KERNEL" ]; then
  kernel_package() { apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
  package=$(kernel_package)
  if [ -z "$package" ] && [ "${SKIP_APT_UPDATE:-0}" != 1 ]; then apt-get update -qq; package=$(kernel_package); fi
  [ -n "$package" ] || { echo "no linux-image-cloud-amd64 in the package lists" >&2; exit 1; }
  # apt's download runs as root here (its sandbox user cannot write the cache): it says so.
  (cd "$WORK" && apt-get download -qq "$package")
  dpkg-deb -x "$WORK/$package"_*.deb "$WORK/kernel"
  kernel=$(ls "$WORK"/kernel/boot/vmlinuz-* | head -1)
  cp "$kernel" "$CACHE/.$(basename "$kernel").tmp"
  mv "$CACHE/.$(basename "$kernel").tmp" "$CACHE/$(basename "$kernel")"
  KERNEL=$CACHE/$(basename "$kernel")
  log "kernel $KERNEL"
fi

# --------------------------------------- 2. the root file system as an initramfs, once per tarball
# Made from the tarball as Debian installs it, not from the chroot runs' copy, which keeps their
# users, logs, saved jobs and databases. Named by the tarball, its size and its time, so a tarball
# made anew makes a new initramfs (and the release's older one goes).
STAMP=$(basename "$TARBALL" .tar)
BASE=$CACHE/$STAMP-$(stat -c %s-%Y "$TARBALL").cpio
if [ ! -s "$BASE" ]; then
  mkdir "$WORK/root"
  tar -xf "$TARBALL" -C "$WORK/root"
  (cd "$WORK/root" && find . \( -path ./usr/share/doc -o -path ./usr/share/man -o -path ./usr/share/locale \
      -o -path ./var/cache/apt -o -path ./var/lib/apt/lists \) -prune -o -print \
    | cpio -o -H newc --quiet) > "$BASE.tmp"
  rm -rf "$WORK/root"
  rm -f "$CACHE/$STAMP"-*.cpio
  mv "$BASE.tmp" "$BASE"
  log "initramfs of $TARBALL: $(( $(stat -c %s "$BASE") / 1048576 )) MiB"
fi

# ------------------------------------------- 3. this run's files, appended as a second archive
mkdir -p "$WORK/extra/vm" "$WORK/extra/proc" "$WORK/extra/sys" "$WORK/extra/dev" "$WORK/extra/tmp" \
  "$WORK/extra/run" "$WORK/extra/home"
install -m 755 "$HERE/cgroup-v2-vm-init.sh" "$WORK/extra/init"
install -m 755 "$HERE/start-slurm-single-node.sh" "$WORK/extra/vm/start-slurm-single-node.sh"
install -m 755 "$SCENARIO" "$WORK/extra/vm/scenario.sh"
for file in "$@"; do cp -L "$file" "$WORK/extra/vm/"; done
(cd "$WORK/extra" && find . | cpio -o -H newc --quiet) > "$WORK/extra.cpio"
cat "$BASE" "$WORK/extra.cpio" > "$WORK/initrd"

# ---------------------------------------------------------------- 4. boot, run, power off
mkdir -p "$OUT"
log "booting Slurm $RELEASE's root file system on $(basename "$KERNEL") (TCG, 2 CPUs)"
# ttyS0: the console; ttyS1: the scenario's /out as base64 of a tar, between markers.
# The machine stops its scenario a minute before this limit (jobsight.limit_s: what is left after
# its boot and Slurm's start), so that a scenario that hangs still sends its files and logs back.
VM_TIMEOUT_S=${VM_TIMEOUT_S:-600}
[ "$VM_TIMEOUT_S" -ge 180 ] || { echo "VM_TIMEOUT_S=$VM_TIMEOUT_S: the machine needs 180 s or more" >&2; exit 2; }
qemu_status=0
timeout -k 10 "$VM_TIMEOUT_S" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m "${VM_MEMORY_MB:-4096}" \
  -nographic -no-reboot -nic none -kernel "$KERNEL" -initrd "$WORK/initrd" \
  -append "console=ttyS0 panic=-1 quiet random.trust_cpu=on rdinit=/init jobsight.limit_s=$VM_TIMEOUT_S" \
  -serial "file:$OUT/console.log" -serial "file:$WORK/ttyS1" -monitor none >"$OUT/qemu.log" 2>&1 || qemu_status=$?
if ! grep -q '^JOBSIGHT-VM-OUT-END' "$WORK/ttyS1" 2>/dev/null; then
  echo "the machine reported nothing (qemu's exit status $qemu_status; 124: stopped after ${VM_TIMEOUT_S} s); qemu said:" >&2
  cat "$OUT/qemu.log" >&2
  echo "its console:" >&2; tail -40 "$OUT/console.log" >&2; exit 1
fi
sed -n '/^JOBSIGHT-VM-OUT-BEGIN/,/^JOBSIGHT-VM-OUT-END/p' "$WORK/ttyS1" | sed '1d;$d' | tr -d '\r' \
  | base64 -d | tar -xzf - -C "$OUT"
status=$(sed -n 's/^JOBSIGHT-VM-OUT-END status=\([0-9]*\).*/\1/p' "$WORK/ttyS1" | tr -d '\r')
log "the scenario ended with status $status; its files in $OUT"
exit "$status"

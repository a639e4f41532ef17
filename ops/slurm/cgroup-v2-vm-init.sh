#!/bin/bash
# PID 1 of cgroup-v2-vm.sh's virtual machine: a pure cgroup v2 host (no v1 hierarchy, every
# controller in v2), Slurm's daemons started on it by start-slurm-single-node.sh (cgroup/v2,
# without slurmdbd), then /vm/scenario.sh; /out goes back to the host on the second serial port
# (base64 of a tar between markers), and the machine powers off. Nothing here may end PID 1 early:
# every failure is reported on that port too.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The release's root file system (mmdebstrap's `apt` variant: the essential packages, apt and
# Slurm's) has no mount(8), which is the non-essential package `mount`: mount(2) through Python's
# ctypes. PYTHONHASHSEED: Python seeds its hashes from getrandom(), which this early in the boot
# may not be ready, and then refuses to start.
mount() {  # mount FSTYPE TARGET [OPTIONS]
  PYTHONHASHSEED=0 python3 -c 'import ctypes, os, sys
fstype, target, options = sys.argv[1], sys.argv[2], sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(fstype.encode(), target.encode(), fstype.encode(), 0, options.encode() or None) != 0:
    sys.exit(f"mount {fstype} on {target}: {os.strerror(ctypes.get_errno())}")' "$1" "$2" "${3:-}"
}
mount proc /proc
mount sysfs /sys
mount devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount devpts /dev/pts
mount tmpfs /dev/shm mode=1777
mount tmpfs /tmp mode=1777
mount tmpfs /run mode=755
mount cgroup2 /sys/fs/cgroup
echo 1 > /proc/sys/kernel/sysrq
hostname vm
ip link set lo up
# The machine has no network card, and glibc's getaddrinfo(AI_ADDRCONFIG), with which slurmctld
# opens its ports, finds no IPv4 address in 127.0.0.1 alone: one more on the loopback.
ip addr add 192.0.2.1/32 dev lo
mkdir -p /out /home

report() {  # report STATUS: /out to the host, then power off
  cp /var/log/slurm/slurmd.log /var/log/slurm/slurmctld.log /out/ 2>/dev/null
  {
    echo "JOBSIGHT-VM-OUT-BEGIN"
    tar -czf - -C /out . | base64
    echo "JOBSIGHT-VM-OUT-END status=$1"
  } > /dev/ttyS1
  sync
  echo o > /proc/sysrq-trigger
  while :; do sleep 60; done
}

echo "cgroup v2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "/proc/1/cgroup: $(cat /proc/1/cgroup)"
# The root file system is a copy of the one the chroot runs use: their logs and saved jobs are not
# this machine's.
rm -f /var/log/slurm/*.log
if ! SLURM_CGROUP=v2 SLURM_WITH_DBD=0 SLURM_CLEAN_STATE=1 SKIP_APT_UPDATE=1 bash /vm/start-slurm-single-node.sh > /out/slurm-setup.log 2>&1; then
  cat /out/slurm-setup.log
  report 1
fi
cat /out/slurm-setup.log
# What is left of the host's limit for the machine, less a minute for the report; 30 s at least.
limit_s=$(sed -n 's/.*jobsight\.limit_s=\([0-9]*\).*/\1/p' /proc/cmdline)
up_s=$(cut -d. -f1 /proc/uptime)
scenario_s=$(( ${limit_s:-600} - up_s - 60 ))
[ "$scenario_s" -ge 30 ] || scenario_s=30
timeout -k 5 "$scenario_s" bash /vm/scenario.sh > /out/scenario.log 2>&1
status=$?
cat /out/scenario.log
report "$status"

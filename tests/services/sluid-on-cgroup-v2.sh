#!/bin/sh
# The scenario of tests/services/cgroup_v2.rs, run as root in ops/slurm/cgroup-v2-vm.sh's machine
# (Slurm up on cgroup v2, /vm/jobsight-exporter beside this file). A job that keeps a CPU busy
# runs; while it does, what Slurm itself records about it (squeue --json, scontrol), the cgroup
# directories, what each slurmstepd is called and where it runs, and one scrape of
# jobsight-exporter are written to /out; after it ends, one more scrape. The test reads /out.
set -u
job=$(cd /tmp && runuser -u alice -- sbatch --parsable -J busy -o /dev/null -c 1 --mem=200M \
  --wrap 'timeout 25 sh -c "while :; do :; done"') || exit 1
echo "$job" > /out/job
id -u alice > /out/alice-uid
running=""
for _ in $(seq 1 240); do
  [ "$(squeue -h -j "$job" -o %T)" = RUNNING ] && { running=yes; break; }
  sleep 0.5
done
[ -n "$running" ] || { echo "job $job never ran"; squeue; exit 1; }
sleep 10  # CPU time to see
squeue --json -j "$job" > /out/squeue.json
scontrol show job "$job" > /out/scontrol.txt
find /sys/fs/cgroup/system.slice -maxdepth 3 -type d > /out/dirs.txt
for pid in $(pgrep slurmstepd); do
  echo "== pid $pid uid $(stat -c %u /proc/"$pid") title $(tr '\0' ' ' < /proc/"$pid"/cmdline)"
  cat /proc/"$pid"/cgroup
done > /out/slurmstepd.txt
/vm/jobsight-exporter --once > /out/metrics.txt 2> /out/exporter-stderr.txt
ended=""
for _ in $(seq 1 240); do
  [ -z "$(squeue -h -j "$job")" ] && { ended=yes; break; }
  sleep 0.5
done
[ -n "$ended" ] || { echo "job $job did not end"; squeue; exit 1; }
sleep 3  # slurmstepd removes the job's directory as it leaves
find /sys/fs/cgroup/system.slice -maxdepth 3 -type d > /out/dirs-after.txt
/vm/jobsight-exporter --once > /out/metrics-after.txt 2>> /out/exporter-stderr.txt
echo done

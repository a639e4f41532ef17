#!/bin/bash
# anomaly.sh TYPE SECONDS DIR: runs the anomaly generator TYPE for SECONDS beside the job's
# application, on the job's own CPUs and in its own cgroup (as HPAS's generators run beside the
# application in the allocation), using DIR for the I/O ones. Each does what HPAS's generator of
# that name does, with stress-ng's matching stressor where it has one:
#   cpuoccupy    one process keeping a CPU 95 % busy (HPAS cpuoccupy -u 95)  stress-ng --cpu --cpu-load 95
#   cachecopy    one process copying arrays the size of the caches            stress-ng --cache
#   membw        one process streaming through arrays larger than the caches  stress-ng --stream
#   memleak      memory allocated and written, never freed: 40 MiB/s          perl (stress-ng has no leak)
#   memeater     a quarter of the node's memory taken at once and kept hot   stress-ng --vm --vm-keep
#   iobandwidth  large sequential writes and reads of a file                  stress-ng --hdd
#   iometadata   directories created and removed as fast as possible          stress-ng --dir
# HPAS's netoccupy needs two nodes and is not in a single-node suite.
set -u
type=$1
seconds=$2
dir=$3
stress=(stress-ng --quiet --timeout "${seconds}s" --temp-path "$dir")
case "$type" in
cpuoccupy) "${stress[@]}" --cpu 1 --cpu-load 95 ;;
cachecopy) "${stress[@]}" --cache 1 ;;
membw) "${stress[@]}" --stream 1 ;;
memleak)
  perl -e 'my ($end, @kept) = (time + $ARGV[0]);
           while (time < $end) { push @kept, "x" x (10 << 20); select(undef, undef, undef, 0.25) }' \
    "$seconds" ;;
memeater) "${stress[@]}" --vm 1 --vm-bytes 25% --vm-keep ;;
iobandwidth) "${stress[@]}" --hdd 1 --hdd-bytes 1G ;;
iometadata) "${stress[@]}" --dir 1 ;;
*)
  echo "anomaly.sh: unknown anomaly $type (cpuoccupy cachecopy membw memleak memeater iobandwidth iometadata)" >&2
  exit 2 ;;
esac

#!/bin/bash
# collect.sh DIR: the labels the suite's jobs wrote into DIR, as one CSV on stdout
# (job_id,anomaly,start,end,node), the format `jobsight label --import` and
# `jobsight model train --labels-from FILE` read. A job that wrote no label (it failed or was
# cancelled before its generator ended) is named on stderr and left out.
set -euo pipefail
dir=${1:?usage: collect.sh DIR}
echo "job_id,anomaly,start,end,node"
for out in "$dir"/*.out; do
  [ -e "$out" ] || continue
  id=$(basename "$out" .out)
  if [ -s "$dir/$id.csv" ]; then cat "$dir/$id.csv"; else echo "collect.sh: job $id wrote no label" >&2; fi
done

#!/bin/bash
# submit.sh: submits jobsight's labelled training suite to Slurm, one job per application and
# anomaly (plus healthy runs), each on whole nodes, and prints "job_id app anomaly" per job.
#   submit.sh --labels DIR [--apps "lammps gromacs hpcc nwchem openfoam"] [--seconds 100[:MAX]]
#             [--healthy 1] [--from-start 0] [--seed 1] [--nodes 1] [--user USER] [--partition P]
#             [--dry-run]
# --seconds MIN:MAX: each job runs a seeded random length from MIN to MAX seconds.
# --from-start P: each anomalous run, with a seeded chance of P %, has its anomaly from the job's
# start, with no healthy prefix; the others start in the run's second fifth.
# --nodes N (above 1): each job on N whole nodes, the MPI applications across all of them (one
# rank per CPU), the anomaly generator on the last node; GROMACS (thread-MPI) and the one-node
# applications (numpy, bwa, povray, archive, sweep, transcode, build,
# chess, database, compress, crypto, image, octave, rstats) are left out.
# Anomalies start at a random time in the run's second fifth and last a random 40-55 % of it
# (seeded, so a suite can be submitted again alike). Each job writes its label to DIR, which must
# be writable by USER; `jobsight model bootstrap` runs this and merges them into DIR/all-labels.csv.
set -euo pipefail
suite=$(cd "$(dirname "$0")" && pwd)
labels= apps="lammps gromacs hpcc nwchem openfoam" seconds=100 healthy=1 from_start=0 seed=1 nodes=1 user= partition= dry=0
anomalies="cpuoccupy cachecopy membw memleak memeater iobandwidth iometadata"
while [ $# -gt 0 ]; do
  case "$1" in
  --labels) labels=$2; shift 2 ;;
  --apps) apps=$2; shift 2 ;;
  --anomalies) anomalies=$2; shift 2 ;;
  --seconds) seconds=$2; shift 2 ;;
  --healthy) healthy=$2; shift 2 ;;
  --from-start) from_start=$2; shift 2 ;;
  --seed) seed=$2; shift 2 ;;
  --nodes) nodes=$2; shift 2 ;;
  --user) user=$2; shift 2 ;;
  --partition) partition=$2; shift 2 ;;
  --dry-run) dry=1; shift ;;
  -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "submit.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$labels" ] || { echo "submit.sh: --labels DIR is required" >&2; exit 2; }
max_seconds=${seconds#*:}
seconds=${seconds%%:*}
for v in "$seconds" "$max_seconds" "$from_start"; do
  case "$v" in ''|*[!0-9]*) echo "submit.sh: --seconds and --from-start take whole numbers (--seconds MIN or MIN:MAX)" >&2; exit 2 ;; esac
done
[ "$seconds" -ge 60 ] || { echo "submit.sh: --seconds must be at least 60" >&2; exit 2; }
[ "$max_seconds" -ge "$seconds" ] || { echo "submit.sh: --seconds $seconds:$max_seconds: the longest is below the shortest" >&2; exit 2; }
[ "$from_start" -le 100 ] || { echo "submit.sh: --from-start is a percentage (0-100)" >&2; exit 2; }
case "$nodes" in ''|*[!0-9]*|0) echo "submit.sh: --nodes must be a whole number of at least 1" >&2; exit 2 ;; esac
per_node=()
if [ "$nodes" -gt 1 ]; then
  # Only the MPI applications span nodes; the others would run on the first node while the
  # generator and its label are on the last.
  for one_node in gromacs numpy bwa povray archive sweep transcode build chess database compress crypto image octave rstats; do
    case " $apps " in *" $one_node "*)
      echo "submit.sh: $one_node runs on one node: left out of a $nodes-node suite" >&2
      apps=$(echo " $apps " | sed "s/ $one_node / /; s/^ *//; s/ *\$//") ;;
    esac
  done
  [ -n "$apps" ] || { echo "submit.sh: no application left to run on $nodes nodes" >&2; exit 2; }
  # One MPI rank per CPU of each node: the fewest CPUs of a node of the partition (the default
  # one, marked "*", unless --partition names one), as Slurm counts them ("32+" on mixed nodes).
  cpus=$( (sinfo -h -e -o '%P %c' 2>/dev/null || true) \
    | awk -v p="$partition" '(p == "" && $1 ~ /\*$/) || $1 == p { gsub(/\+/, "", $2); print $2 }' \
    | sort -n | head -1)
  per_node=(--nodes "$nodes" --ntasks-per-node "${cpus:-1}")
fi
mkdir -p "$labels"
[ -z "$user" ] || chown "$user" "$labels"
RANDOM=$seed
run=0
for app in $apps; do
  kinds=$(for _ in $(seq "$healthy"); do echo none; done; echo $anomalies)
  for anomaly in $kinds; do
    run=$((run + 1))
    # Draws beyond the first two only where asked for, so that a seed gives the suite it gave
    # before these options existed.
    job_seconds=$seconds
    [ "$max_seconds" = "$seconds" ] || job_seconds=$((seconds + RANDOM % (max_seconds - seconds + 1)))
    fifth=$((job_seconds / 5))
    start=$((fifth + RANDOM % fifth))
    length=$((job_seconds * (40 + RANDOM % 16) / 100))
    if [ "$from_start" -gt 0 ] && [ "$anomaly" != none ] && [ $((RANDOM % 100)) -lt "$from_start" ]; then
      start=0
    fi
    [ $((start + length)) -le $((job_seconds - fifth / 2)) ] || length=$((job_seconds - fifth / 2 - start))
    export_list="ALL,TRAINING_SUITE=$suite,TRAINING_APP=$app,TRAINING_SECONDS=$job_seconds,TRAINING_LABELS=$labels,TRAINING_ANOMALY=$anomaly,TRAINING_ANOMALY_START=$start,TRAINING_ANOMALY_SECONDS=$length"
    # The job's time limit from its length (training.sbatch's 30 minutes is for a job
    # submitted by hand): whole minutes, ten to spare for the application's setup and the label.
    args=(--parsable --job-name "$app-$run" --output "$labels/%j.out" --export "$export_list"
      --time $(( (job_seconds + 59) / 60 + 10 )) ${per_node[@]+"${per_node[@]}"})
    [ -z "$partition" ] || args+=(--partition "$partition")
    if [ "$dry" = 1 ]; then
      echo "dry-run $app $anomaly job=$job_seconds start=$start seconds=$length"
      continue
    fi
    if [ -n "$user" ]; then
      id=$(runuser -u "$user" -- sbatch "${args[@]}" "$suite/training.sbatch")
    else
      id=$(sbatch "${args[@]}" "$suite/training.sbatch")
    fi
    echo "${id%%;*} $app $anomaly"
  done
done

#!/usr/bin/env bash
# Runs jobsight's labelled training suite (jobs/training/) on this machine, from nothing: installs
# the applications, starts a real single-node Slurm whose EpilogSlurmctld is jobsight's hook, the
# per-job cgroup exporter (jobsight-exporter) and a real Prometheus with its node exporter, runs
# the real per-job DAG every 20 s as the daemon would, and then `jobsight model bootstrap`, which
# submits the suite as the unprivileged user alice, waits for every job to be stored, keeps the
# labels, trains and judges the models. What it leaves in OUT: the warehouse (OUT/data, with the
# labels in its `labels` table), the models and the jobs' labels (OUT/work), what bootstrap
# printed (OUT/bootstrap.txt) and the services' logs.
#
#   sudo ops/training/run-suite-here.sh OUT [model bootstrap options, e.g. --apps "lammps hpcc" --seconds 90]
#
# With `--nodes N` the suite's multi-node variant on N real nodes of this machine (Slurm started
# with SLURM_NODES=N, each slurmd in a cpuset of its own CPUs): every application but GROMACS
# across all N, the anomaly generator on the last node, each label naming it. The node
# exporter's series are this machine's, shared by the N nodes, so the jobs are judged and the
# models trained on the jobs' own per-node cgroup series alone (`metrics = []`).
#
# Env: BIN (where jobsight, jobsight-epilog and jobsight-exporter are; default
#      $CARGO_TARGET_DIR/release, else .../debug), SKIP_APT_UPDATE=1, KEEP_SERVICES=1 (leave
#      Slurm and Prometheus running), SLURM_FIRST_JOB_ID (number the jobs from it: a second run
#      to merge with a first, --seed 2). Takes about apps × (healthy + 7) jobs of (seconds + 10 s):
#      65 minutes for the default five applications at 90 s.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: run-suite-here.sh OUT [submit.sh options]}
shift
target=${CARGO_TARGET_DIR:-/var/tmp/jobsight-target}
BIN=${BIN:-$( [ -x "$target/release/jobsight" ] && echo "$target/release" || echo "$target/debug")}
for b in jobsight jobsight-epilog jobsight-exporter; do
  [ -x "$BIN/$b" ] || { echo "run-suite-here.sh: $BIN/$b missing: cargo build --workspace first" >&2; exit 1; }
done
log() { echo "[training-suite $(date +%H:%M:%S)] $*"; }
PROM_PORT=19093 NODE_PORT=19103 CGROUP_PORT=19107
nodes=1 prev=
for a in "$@"; do
  [ "$prev" = --nodes ] && nodes=$a
  case "$a" in --nodes=*) nodes=${a#--nodes=} ;; esac
  prev=$a
done
case "$nodes" in ''|*[!0-9]*|0) echo "run-suite-here.sh: --nodes must be at least 1" >&2; exit 2 ;; esac
[ "$nodes" -le "$(nproc)" ] || { echo "run-suite-here.sh: $nodes nodes need $nodes CPUs; this machine has $(nproc)" >&2; exit 2; }
node_names=$(seq -f 'node%g' 1 "$nodes" | tr '\n' ' ' | sed 's/ $//')

rm -rf "$out"; mkdir -p "$out"; chmod 755 "$out"
out=$(cd "$out" && pwd)
"$repo/ops/training/install-applications.sh"
bash "$repo/ops/install-epilog.sh" --from "$BIN" --prefix "$out/install" --spool "$out/spool" --owner slurm >/dev/null
printf '#!/bin/sh\nexec %s/sbin/jobsight-epilog --spool %s\n' "$out/install" "$out/spool" > "$out/install/sbin/epilog-slurmctld.sh"
chmod 755 "$out/install/sbin/epilog-slurmctld.sh"
SLURM_EPILOG_SLURMCTLD="$out/install/sbin/epilog-slurmctld.sh" SLURM_SMOKE_TEST=0 SLURM_CLEAN_STATE=1 \
  SLURM_NODES=$nodes bash "$repo/ops/slurm/start-slurm-single-node.sh" > "$out/slurm-setup.log" 2>&1
"$BIN/jobsight-exporter" --listen "127.0.0.1:$CGROUP_PORT" > "$out/exporter.log" 2>&1 &
exporter=$!
[ "$nodes" -gt 1 ] && export PROM_NODE_NAME=$node_names
PROM_DIR="$out/prom" PROM_PORT=$PROM_PORT NODE_EXPORTER_PORT=$NODE_PORT CGROUP_EXPORTER_PORT=$CGROUP_PORT \
  SCRAPE_INTERVAL=2s bash "$repo/ops/prometheus/start-prometheus.sh" > "$out/prometheus-setup.log" 2>&1
stop() {
  kill "$exporter" 2>/dev/null || true
  if [ "${KEEP_SERVICES:-0}" != 1 ]; then
    bash "$out/prom/stop-prometheus.sh" >/dev/null 2>&1 || true
    bash "$repo/ops/slurm/stop-slurm-single-node.sh" >/dev/null 2>&1 || true
  fi
}
trap stop EXIT
log "Slurm, jobsight-exporter and Prometheus are up"

cat > "$out/jobsight.toml" <<TOML
data = "$out/data"
[ingest]
retry_after_s = 2
retry_max_s = 5
[prometheus]
url = "http://127.0.0.1:$PROM_PORT"
step_s = 2
rate_window_s = 6
lag_s = 5
job_exporter = "jobsight"
$([ "$nodes" -gt 1 ] && echo 'metrics = []')
[features]
cores_per_node = $(( $(nproc) / nodes ))
trim_s = 5
windows = "10:5"
[rules]
min_run_s = 60
[notify]
outbox = "$out/outbox"
TOML

chmod 1777 "$out"
# The per-job DAG, as the daemon runs it (every 20 s here rather than every 2 minutes).
( while :; do
    "$BIN/jobsight" --config "$out/jobsight.toml" --spool "$out/spool" dag run per-job >> "$out/per-job.log" 2>&1 || true
    sleep 20
  done ) &
dag=$!
trap 'kill $dag 2>/dev/null || true; stop' EXIT
"$BIN/jobsight" --config "$out/jobsight.toml" model bootstrap --suite "$repo/jobs/training" \
  --work "$out/work" --user alice "$@" | tee "$out/bootstrap.txt"
log "done: warehouse $out/data, models and labels in $out/work, figures in $out/bootstrap.txt"

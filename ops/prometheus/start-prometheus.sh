#!/usr/bin/env bash
# Bring up Prometheus + prometheus-node-exporter (Debian 12 packages) on loopback only, for
# jobsight's tests and for trying the Prometheus source on one machine. Verified on Debian 12
# (bookworm), root, 2 cores, no systemd as PID 1.
#
# The node exporter's target is relabelled so that its `instance` is "<Slurm node name>:<port>"
# (PROM_NODE_NAME, default `hostname -s`, which is the node name of the single-node Slurm in
# ops/slurm/): jobsight selects a job's nodes by that label. With several names (the multi-node
# test cluster of ops/slurm/, several slurmd on this one host) the node exporter is scraped once per
# name: each node's series are then the host's, the same for every node. A per-job cgroup exporter's
# series that name their node (jobsight-exporter's `slurm_node` label) get that node as instance,
# so each node of a job has its own series.
#
# Usage:  sudo bash start-prometheus.sh          # install (if needed) + start
#         PROM_DIR=/tmp/prom bash start-prometheus.sh
# Env:    PROM_DIR          working dir (config, TSDB, logs, pids)   default /tmp/prom
#         PROM_PORT         Prometheus port                          default 9090
#         NODE_EXPORTER_PORT node exporter port                     default 9100
#         SCRAPE_INTERVAL   scrape interval                          default 5s
#         PROM_NODE_NAME    node name(s) to give the node exporter's target, separated by spaces
#                           (one target per name, the same host's series)  default hostname -s
#         CGROUP_EXPORTER_PORT  also scrape a per-job cgroup exporter (jobsight-exporter, or
#                           Princeton's) on this loopback port, its instance named like the node
#                           exporter's; unset: no such target. The exporter is started elsewhere.
#         SKIP_APT_UPDATE=1 don't run apt-get update
# Stop:   bash stop-prometheus.sh   (kills the PIDs written to $PROM_DIR/*.pid)
set -euo pipefail

PROM_DIR=${PROM_DIR:-/tmp/prom}
PROM_PORT=${PROM_PORT:-9090}
NODE_EXPORTER_PORT=${NODE_EXPORTER_PORT:-9100}
SCRAPE_INTERVAL=${SCRAPE_INTERVAL:-5s}
PROM_NODE_NAME=${PROM_NODE_NAME:-$(hostname -s)}

log() { echo "[start_prometheus $(date +%H:%M:%S)] $*"; }
T0=$(date +%s)

# --- 1. packages ----------------------------------------------------------
bash "$(dirname "$0")/install-prometheus.sh"

mkdir -p "$PROM_DIR/data" "$PROM_DIR/textfile"

# --- 2. stop instances left over from an earlier run of this script -------
for p in prometheus node_exporter; do
  if [ -s "$PROM_DIR/$p.pid" ] && kill -0 "$(cat "$PROM_DIR/$p.pid")" 2>/dev/null; then
    log "stopping old $p (pid $(cat "$PROM_DIR/$p.pid"))"
    kill "$(cat "$PROM_DIR/$p.pid")"
    for _ in $(seq 1 50); do kill -0 "$(cat "$PROM_DIR/$p.pid")" 2>/dev/null || break; sleep 0.1; done
  fi
done

# --- 3. config -------------------------------------------------------------
cat > "$PROM_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: ${SCRAPE_INTERVAL}
  evaluation_interval: ${SCRAPE_INTERVAL}
scrape_configs:
  - job_name: prometheus
    static_configs:
      - targets: ['127.0.0.1:${PROM_PORT}']
  - job_name: node
    static_configs:
EOF
for name in $PROM_NODE_NAME; do
  cat >> "$PROM_DIR/prometheus.yml" <<EOF
      - targets: ['127.0.0.1:${NODE_EXPORTER_PORT}']
        labels: {__slurm_node: '${name}'}
EOF
done
FIRST_NODE=${PROM_NODE_NAME%% *}
cat >> "$PROM_DIR/prometheus.yml" <<EOF
    relabel_configs:
      - source_labels: [__slurm_node]
        target_label: instance
        replacement: '\${1}:${NODE_EXPORTER_PORT}'
EOF
if [ -n "${CGROUP_EXPORTER_PORT:-}" ]; then
  cat >> "$PROM_DIR/prometheus.yml" <<EOF
  - job_name: cgroup
    static_configs:
      - targets: ['127.0.0.1:${CGROUP_EXPORTER_PORT}']
    relabel_configs:
      - target_label: instance
        replacement: '${FIRST_NODE}:${CGROUP_EXPORTER_PORT}'
    metric_relabel_configs:
      - source_labels: [slurm_node]
        regex: '(.+)'
        target_label: instance
        replacement: '\${1}:${CGROUP_EXPORTER_PORT}'
EOF
fi

# --- 4. node exporter --------------------------------------------------------
# textfile collector: drop *.prom files into $PROM_DIR/textfile to export custom metrics
nohup prometheus-node-exporter \
    --web.listen-address=127.0.0.1:${NODE_EXPORTER_PORT} \
    --collector.textfile.directory="$PROM_DIR/textfile" \
    --no-collector.systemd \
    > "$PROM_DIR/node_exporter.log" 2>&1 &
echo $! > "$PROM_DIR/node_exporter.pid"

# --- 5. prometheus -------------------------------------------------------------
nohup prometheus \
    --config.file="$PROM_DIR/prometheus.yml" \
    --storage.tsdb.path="$PROM_DIR/data" \
    --web.listen-address=127.0.0.1:${PROM_PORT} \
    --web.enable-admin-api \
    --web.enable-lifecycle \
    > "$PROM_DIR/prometheus.log" 2>&1 &
echo $! > "$PROM_DIR/prometheus.pid"

# --- 6. wait until ready and the node target is up ------------------------------
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:${NODE_EXPORTER_PORT}/metrics" >/dev/null 2>&1 && break; sleep 0.2
done
curl -fsS "http://127.0.0.1:${NODE_EXPORTER_PORT}/metrics" >/dev/null || { log "node exporter did not come up"; tail "$PROM_DIR/node_exporter.log"; exit 1; }
for _ in $(seq 1 150); do
  curl -fsS "http://127.0.0.1:${PROM_PORT}/-/ready" >/dev/null 2>&1 && break; sleep 0.2
done
curl -fsS "http://127.0.0.1:${PROM_PORT}/-/ready" >/dev/null || { log "prometheus not ready"; tail "$PROM_DIR/prometheus.log"; exit 1; }
# first scrape happens within one scrape interval
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:${PROM_PORT}/api/v1/query?query=up%7Bjob%3D%22node%22%7D" | grep -q '"value":\[[0-9.]*,"1"\]'; then
    log "node target is up"; break
  fi
  sleep 0.3
done

cat > "$PROM_DIR/stop-prometheus.sh" <<EOF
#!/bin/sh
# kills the PIDs started by start-prometheus.sh and waits for them to exit
for p in prometheus node_exporter; do
  f="$PROM_DIR/\$p.pid"
  if [ -s "\$f" ]; then
    pid=\$(cat "\$f"); kill "\$pid" 2>/dev/null
    for i in \$(seq 1 100); do kill -0 "\$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "\$f"
  fi
done
EOF
chmod +x "$PROM_DIR/stop-prometheus.sh"

log "ready in $(( $(date +%s) - T0 ))s: prometheus pid $(cat "$PROM_DIR/prometheus.pid") on 127.0.0.1:${PROM_PORT}, node_exporter pid $(cat "$PROM_DIR/node_exporter.pid") on 127.0.0.1:${NODE_EXPORTER_PORT}"
log "stop with: $PROM_DIR/stop-prometheus.sh"

#!/usr/bin/env bash
# Installs Debian's Prometheus, its node exporter and curl when they are missing (no service is
# started: the maintainer scripts are kept from starting them, there is no systemd here). Used by
# start-prometheus.sh and by the Prometheus bench (benches/prometheus.rs), which needs
# `prometheus` and `promtool`.
#
# Usage:  sudo bash install-prometheus.sh
# Env:    SKIP_APT_UPDATE=1 don't run apt-get update
set -euo pipefail

if command -v prometheus >/dev/null && command -v promtool >/dev/null \
    && command -v prometheus-node-exporter >/dev/null && command -v curl >/dev/null; then
  exit 0
fi
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; created_policy=1
fi
[ "${SKIP_APT_UPDATE:-0}" = 1 ] || apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    prometheus prometheus-node-exporter curl >/dev/null
[ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
echo "[install_prometheus] packages installed: $(prometheus --version 2>&1 | head -1)"

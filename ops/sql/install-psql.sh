#!/usr/bin/env bash
# Installs the PostgreSQL client (`psql`, Debian's postgresql-client) when it is missing: what an
# admin runs to query `jobsight serve --pg`, and what the endpoint's tests drive. Quick when psql
# is already there. Needs root for apt-get.
#
#   SKIP_APT_UPDATE=1   skip apt-get update (the package lists are fresh already)
set -euo pipefail
if command -v psql >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-psql.sh: psql is missing and installing it needs root (apt-get install postgresql-client)" >&2
  exit 1
fi
# Another apt-get (an unattended upgrade, another test's install) may hold dpkg's lock: wait for it
# rather than fail.
wait_lock=(-o DPkg::Lock::Timeout=600)
[ "${SKIP_APT_UPDATE:-0}" = 1 ] || apt-get "${wait_lock[@]}" update -qq
DEBIAN_FRONTEND=noninteractive apt-get "${wait_lock[@]}" install -y -qq --no-install-recommends postgresql-client >/dev/null
command -v psql >/dev/null

#!/usr/bin/env bash
# jobsight's copy of the verified recipe (shared/scripts), used by tests/services/real_slurm.rs and .ci/run.
# Single-node Slurm 22.05 cluster from Debian 12 packages, for tests/CI; also run inside the root
# file systems of other releases by start-slurm-release.sh.
# Verified on Debian 12 (bookworm), root, 2 cores, no systemd as PID 1, loopback only.
#
# Brings up: munged -> [mariadbd -> slurmdbd] -> slurmctld -> slurmd, all daemonized,
# PIDs in /run/*.pid (stop with stop-slurm-single-node.sh, which kills those PIDs).
#
# Knobs (environment):
#   SLURM_WITH_DBD=1         also install MariaDB + slurmdbd so sacct works (default 1; 0 = jobcomp/filetxt only)
#   SLURM_CGROUP=auto        auto|v1|v2|none. auto = cgroup v1 plugins if /sys/fs/cgroup/{memory,cpuset,freezer}
#                            exist, else none. v2 only when asked for: a pure cgroup v2 host whose
#                            PID 1 is not systemd, Slurm 23.02 or later (ops/slurm/cgroup-v2-vm.sh)
#   SLURM_CGROUP_JOB_ID_PATHS=yes   v2 on Slurm 26.05: name job directories job_<id>, not by SLUID
#   SLURM_HOOK_DIR=/var/spool/slurm-hooks   where the demo prolog/epilog scripts dump their environment
#   SLURM_PROLOG / SLURM_EPILOG / SLURM_PROLOG_SLURMCTLD / SLURM_EPILOG_SLURMCTLD
#                            paths of your own hook scripts (default: demo scripts that dump `env`)
#   SLURM_MAIL_SMTP=127.0.0.1:2525   if set, MailProg sends job mail there with swaks (installs swaks)
#   SLURM_TEST_USER=alice    non-root user created for submitting jobs ("" to skip)
#   SLURM_SMOKE_TEST=1       submit one job and check hooks + sacct (default 1)
#   SKIP_APT_UPDATE=1        skip apt-get update
#   SLURM_INSTALL_ONLY=1     install the packages (which create the slurm and munge users) and the test
#                            user, then stop without starting anything: for installing a hook before
#                            Slurm first starts (jobsight)
#   SLURM_CLEAN_STATE=1      forget saved jobs and node states (drained nodes, queued jobs) of an earlier
#                            run before starting: for tests, which need an empty, idle cluster (jobsight)
#   SLURM_FIRST_JOB_ID=N     number the jobs from N (default 1): a second run whose jobs must not
#                            share ids with a first one's, as when two training-suite runs are merged
#                            into one warehouse (jobsight)
#   SLURM_NODES=N            N nodes on this machine (default 1): N real slurmd (Debian's Slurm is built
#                            with --enable-multiple-slurmd), named node1..nodeN, each with its own port (6821, 6822, ...),
#                            spool, log, pid file (/run/slurmd-nodeI.pid), cgroup prefix (slurm_nodeI)
#                            and an equal share of the CPUs and memory; each slurmd is started in a
#                            cpuset of its own CPUs, so that its jobs run there (jobsight)
set -euo pipefail

SLURM_WITH_DBD=${SLURM_WITH_DBD:-1}
SLURM_CGROUP=${SLURM_CGROUP:-auto}
SLURM_HOOK_DIR=${SLURM_HOOK_DIR:-/var/spool/slurm-hooks}
SLURM_TEST_USER=${SLURM_TEST_USER-alice}
SLURM_SMOKE_TEST=${SLURM_SMOKE_TEST:-1}
SLURM_MAIL_SMTP=${SLURM_MAIL_SMTP:-}
SLURM_NODES=${SLURM_NODES:-1}
CLUSTER=${SLURM_CLUSTER_NAME:-ci}
DB_PASS=${SLURM_DB_PASS:-slurmpass}

T0=$(date +%s.%N)
log() { printf '[slurm-setup +%5.1fs] %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*"; }
wait_for() {  # wait_for <seconds> <description> <command...>
  local secs=$1 what=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$end" ]; then log "TIMEOUT waiting for $what"; return 1; fi
    sleep 0.2
  done
}
pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
stop_pidfile() {  # stop a daemon this script started earlier (by its PID), wait until gone
  local f=$1
  if pid_alive "$f"; then
    local p; p=$(cat "$f"); kill "$p"
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$f"
}

[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
H=$(hostname -s)

# ---------------------------------------------------------------- 1. packages
PKGS="slurm-wlm slurmctld slurmd slurm-client munge bc"
[ "$SLURM_WITH_DBD" = 1 ] && PKGS="$PKGS slurmdbd mariadb-server"
[ -n "$SLURM_MAIL_SMTP" ] && PKGS="$PKGS swaks"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  # No systemd here: keep maintainer scripts from trying to start the daemons.
  created_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; created_policy=1
  fi
  [ "${SKIP_APT_UPDATE:-0}" = 1 ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  [ "$created_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
  log "installed:$missing"
fi
log "slurm version: $(slurmctld -V)"
if [ "${SLURM_INSTALL_ONLY:-0}" = 1 ]; then
  if [ -n "$SLURM_TEST_USER" ] && ! id "$SLURM_TEST_USER" >/dev/null 2>&1; then
    useradd -m -s /bin/bash "$SLURM_TEST_USER"
  fi
  log "installed only (SLURM_INSTALL_ONLY=1): users $(id -un slurm) and ${SLURM_TEST_USER:-none}; nothing started"
  exit 0
fi

# ------------------------------------------------- 2. stop leftovers from an earlier run
for f in /run/slurmd.pid /run/slurmd-node*.pid /run/slurmctld.pid /run/slurmdbd.pid /run/mysqld/mysqld.pid /run/munge/munged.pid; do
  [ -e "$f" ] || continue
  stop_pidfile "$f"
done
if [ "${SLURM_CLEAN_STATE:-0}" = 1 ]; then
  # Job ids start again at 1; sacct keeps older jobs with the same ids (select by submit time).
  rm -rf /var/lib/slurm/slurmctld/* /var/lib/slurm/slurmd/*
  log "cleaned saved slurmctld/slurmd state"
fi

# ------------------------------------------------------------- 3. host, dirs, users
getent hosts "$H" >/dev/null || echo "127.0.0.1 $H" >> /etc/hosts
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/log/munge /etc/munge
install -d -o munge -g munge -m 0711 /var/lib/munge
install -d -o slurm -g slurm -m 0755 /var/lib/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
install -d -m 1777 "$SLURM_HOOK_DIR"
if [ -n "$SLURM_TEST_USER" ] && ! id "$SLURM_TEST_USER" >/dev/null 2>&1; then
  useradd -m -s /bin/bash "$SLURM_TEST_USER"
fi

# -------------------------------------------------------------------- 4. munge
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key; chmod 0600 /etc/munge/munge.key
runuser -u munge -- /usr/sbin/munged      # daemonizes, pid in /run/munge/munged.pid
wait_for 10 munged sh -c 'munge -n | unmunge'
log "munged up (pid $(cat /run/munge/munged.pid))"

# ---------------------------------------------------------- 5. hook scripts (demo)
write_hook() {  # write_hook <file> <label>
  cat > "$1" <<EOF
#!/bin/sh
# $2: dumps its environment to $SLURM_HOOK_DIR/$2.<jobid>.env
out="$SLURM_HOOK_DIR/$2.\${SLURM_JOB_ID}.env"
env | sort > "\$out.tmp"; id >> "\$out.tmp"; mv "\$out.tmp" "\$out"
exit 0
EOF
  chmod 755 "$1"
}
write_hook /etc/slurm/prolog.sh prolog
write_hook /etc/slurm/epilog.sh epilog
write_hook /etc/slurm/prolog_slurmctld.sh prolog_slurmctld
write_hook /etc/slurm/epilog_slurmctld.sh epilog_slurmctld
SLURM_PROLOG=${SLURM_PROLOG:-/etc/slurm/prolog.sh}
SLURM_EPILOG=${SLURM_EPILOG:-/etc/slurm/epilog.sh}
SLURM_PROLOG_SLURMCTLD=${SLURM_PROLOG_SLURMCTLD:-/etc/slurm/prolog_slurmctld.sh}
SLURM_EPILOG_SLURMCTLD=${SLURM_EPILOG_SLURMCTLD:-/etc/slurm/epilog_slurmctld.sh}

MAILPROG_LINE=""
if [ -n "$SLURM_MAIL_SMTP" ]; then
  cat > /etc/slurm/mailprog.sh <<EOF
#!/bin/sh
# slurmctld runs: MailProg -s "<subject>" <recipient>  (as SlurmUser; job info in SLURM_JOB_* env)
exec /usr/bin/swaks --silent 2 --server $SLURM_MAIL_SMTP --from slurm@$H --to "\$3" --header "Subject: \$2" --body "\$2"
EOF
  chmod 755 /etc/slurm/mailprog.sh
  MAILPROG_LINE="MailProg=/etc/slurm/mailprog.sh"
fi

# ------------------------------------------------------------------ 6. slurm.conf
if [ "$SLURM_CGROUP" = auto ]; then
  if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] && [ -d /sys/fs/cgroup/cpuset ] && [ -d /sys/fs/cgroup/freezer ]; then
    SLURM_CGROUP=v1
  else SLURM_CGROUP=none; fi
fi
if [ "$SLURM_CGROUP" = v1 ]; then
  PROCTRACK=proctrack/cgroup; TASK=task/cgroup,task/affinity; GATHER=jobacct_gather/cgroup
  CONSTRAIN_CORES=yes
  if [ "$SLURM_NODES" -gt 1 ]; then
    # Every slurmd of this machine numbers its CPUs from 0, so Slurm's own binding (cpuset and
    # affinity) would put every node's jobs on CPU 0 (measured: both nodes' job cpusets were
    # "0"). Without it a job's processes stay in the cpuset of the slurmd that started them,
    # which holds that node's own CPUs (below).
    TASK=task/cgroup; CONSTRAIN_CORES=no
  fi
  cat > /etc/slurm/cgroup.conf <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=$CONSTRAIN_CORES
ConstrainRAMSpace=yes
EOF
elif [ "$SLURM_CGROUP" = v2 ]; then
  # A pure cgroup v2 host (Slurm refuses a hybrid one) without systemd as PID 1: slurmd makes
  # its scope itself (system.slice/slurmstepd.scope; <node>_slurmstepd.scope where Slurm is built
  # for several slurmd per host, as Debian's is) and enables the controllers down to it.
  # Slurm 26.05 names each job's directory by its SLUID there; SLURM_CGROUP_JOB_ID_PATHS=yes
  # names it job_<id> as before.
  PROCTRACK=proctrack/cgroup; TASK=task/cgroup,task/affinity; GATHER=jobacct_gather/cgroup
  cat > /etc/slurm/cgroup.conf <<EOF
CgroupPlugin=cgroup/v2
CgroupMountpoint=/sys/fs/cgroup
IgnoreSystemd=yes
EnableControllers=yes
ConstrainCores=yes
ConstrainRAMSpace=yes
${SLURM_CGROUP_JOB_ID_PATHS:+CgroupJobIdPaths=$SLURM_CGROUP_JOB_ID_PATHS}
EOF
else
  PROCTRACK=proctrack/linuxproc; TASK=task/none; GATHER=jobacct_gather/linux
  rm -f /etc/slurm/cgroup.conf
fi
# 23.11 renamed CryptoType=crypto/munge to CredType=cred/munge; the plugin on disk says which.
if ls /usr/lib/*/slurm-wlm/cred_munge.so >/dev/null 2>&1; then CRED_LINE=CredType=cred/munge
else CRED_LINE=CryptoType=crypto/munge; fi
NCPU=$(nproc)
MEM=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p'); MEM=$(( MEM > 2048 ? MEM - 1024 : MEM ))
if [ "$SLURM_NODES" -gt 1 ]; then
  [ "$NCPU" -ge "$SLURM_NODES" ] || { echo "SLURM_NODES=$SLURM_NODES needs as many CPUs; this machine has $NCPU" >&2; exit 1; }
  NODE_CPUS=$(( NCPU / SLURM_NODES )); NODE_MEM=$(( MEM / SLURM_NODES ))
  NODE_LINES=""
  for i in $(seq 1 "$SLURM_NODES"); do
    NODE_LINES="${NODE_LINES}NodeName=node$i NodeHostname=$H NodeAddr=127.0.0.1 Port=$(( 6820 + i )) CPUs=$NODE_CPUS RealMemory=$NODE_MEM State=UNKNOWN
"
  done
  NODES="node[1-$SLURM_NODES]"
  # Every node of a job gets the job's cgroup when the job starts (its `extern` step), as at sites
  # that run pam_slurm_adopt or a per-job exporter: a node the job never ran a process on then
  # reads as idle in its own series instead of having none.
  PROLOG_FLAGS="PrologFlags=Contain"
  # A requeued job waits `cred_expire` seconds before it may start again (120 by default), so that
  # nothing of its last run (a node's late kill of the old run's steps, an old credential) reaches
  # the new one. 30 s keeps a lost-node test short without skipping that wait.
  AUTH_INFO="AuthInfo=cred_expire=30"
  # Heterogeneous jobs are started by the backfill scheduler alone, every bf_interval (30 s by
  # default): a het job on an idle cluster waited that long.
  SCHED_PARAMS="SchedulerParameters=bf_interval=5"
  SLURMD_FILES="SlurmdPidFile=/run/slurmd-%n.pid
SlurmdSpoolDir=/var/lib/slurm/slurmd/%n
SlurmdLogFile=/var/log/slurm/slurmd-%n.log"
else
  NODE_LINES="NodeName=$H NodeAddr=127.0.0.1 CPUs=$NCPU RealMemory=$MEM State=UNKNOWN
"
  NODES=$H
  PROLOG_FLAGS=""
  AUTH_INFO=""
  SCHED_PARAMS=""
  SLURMD_FILES="SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmdLogFile=/var/log/slurm/slurmd.log"
fi
if [ "$SLURM_WITH_DBD" = 1 ]; then
  ACCT="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=6819"
else
  ACCT="AccountingStorageType=accounting_storage/none"
fi
cat > /etc/slurm/slurm.conf <<EOF
ClusterName=$CLUSTER
FirstJobId=${SLURM_FIRST_JOB_ID:-1}
SlurmctldHost=$H(127.0.0.1)
SlurmUser=slurm
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
$AUTH_INFO
$CRED_LINE
StateSaveLocation=/var/lib/slurm/slurmctld
$SLURMD_FILES
SlurmctldPidFile=/run/slurmctld.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=$PROCTRACK
TaskPlugin=$TASK
MpiDefault=none
SchedulerType=sched/backfill
$SCHED_PARAMS
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
ReturnToService=2
JobAcctGatherType=$GATHER
JobAcctGatherFrequency=5
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
$ACCT
Prolog=$SLURM_PROLOG
$PROLOG_FLAGS
Epilog=$SLURM_EPILOG
PrologSlurmctld=$SLURM_PROLOG_SLURMCTLD
EpilogSlurmctld=$SLURM_EPILOG_SLURMCTLD
$MAILPROG_LINE
${NODE_LINES}PartitionName=debug Nodes=$NODES Default=YES MaxTime=INFINITE State=UP
EOF
log "slurm.conf written (nodes $NODES, CPUs=$NCPU and RealMemory=$MEM in all, cgroup=$SLURM_CGROUP, dbd=$SLURM_WITH_DBD)"

# ------------------------------------------------------ 7. MariaDB + slurmdbd (optional)
if [ "$SLURM_WITH_DBD" = 1 ]; then
  # MariaDB 11 (Debian unstable) puts its socket in /run/mariadbd and its default data in
  # /var/lib/mariadb; the data directory is named for both.
  install -d -o mysql -g mysql -m 0755 /run/mysqld /run/mariadbd
  if [ ! -d /var/lib/mysql/mysql ]; then
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  fi
  nohup /usr/sbin/mariadbd --user=mysql --datadir=/var/lib/mysql --bind-address=127.0.0.1 \
        --pid-file=/run/mysqld/mysqld.pid > /var/log/slurm/mariadbd.log 2>&1 &
  wait_for 60 mariadb mariadb-admin ping
  wait_for 10 mariadb-pidfile test -s /run/mysqld/mysqld.pid
  mariadb -u root <<EOF
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
EOF
  log "mariadb up (pid $(cat /run/mysqld/mysqld.pid))"
  cat > /etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
DbdHost=$H
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=slurm
DebugLevel=info
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=$DB_PASS
EOF
  chown slurm:slurm /etc/slurm/slurmdbd.conf; chmod 600 /etc/slurm/slurmdbd.conf
  /usr/sbin/slurmdbd                      # daemonizes, pid in /run/slurmdbd.pid
  wait_for 60 slurmdbd sacctmgr -n show cluster
  sacctmgr -i add cluster "$CLUSTER" >/dev/null 2>&1 || true
  sacctmgr -i add account research cluster="$CLUSTER" Description=ci Organization=ci >/dev/null 2>&1 || true
  sacctmgr -i add user root account=research >/dev/null 2>&1 || true
  [ -n "$SLURM_TEST_USER" ] && { sacctmgr -i add user "$SLURM_TEST_USER" account=research >/dev/null 2>&1 || true; }
  log "slurmdbd up (pid $(cat /run/slurmdbd.pid)); cluster '$CLUSTER', account 'research'"
fi

# ---------------------------------------------------------- 8. slurmctld + slurmd
/usr/sbin/slurmctld                       # daemonizes, pid in /run/slurmctld.pid
wait_for 60 slurmctld scontrol ping
# node is up when its state is one of these without a '*' (= not responding) suffix
node_up() { sinfo -h -n "$1" -o %T | grep -qxE 'idle|mixed|allocated|completing'; }
if [ "$SLURM_NODES" -gt 1 ]; then
  for i in $(seq 1 "$SLURM_NODES"); do
    install -d -o slurm -g slurm -m 0755 "/var/lib/slurm/slurmd/node$i"
    cpus="$(( (i - 1) * NODE_CPUS ))-$(( i * NODE_CPUS - 1 ))"
    # Each slurmd in a cpuset of its own CPUs: Slurm numbers every node's CPUs from 0, and
    # hwloc sees only the CPUs of the cpuset it runs in, so node i's jobs are bound to its share.
    if [ -d /sys/fs/cgroup/cpuset ]; then
      set_dir=/sys/fs/cgroup/cpuset/slurmd_node$i
      mkdir -p "$set_dir"
      echo "$cpus" > "$set_dir/cpuset.cpus"
      cat /sys/fs/cgroup/cpuset/cpuset.mems > "$set_dir/cpuset.mems"
      sh -c "echo \$\$ > $set_dir/tasks && exec /usr/sbin/slurmd -N node$i"
    else
      /usr/sbin/slurmd -N "node$i"
    fi
    wait_for 60 "node node$i up" node_up "node$i"
    log "node$i: slurmd pid $(cat "/run/slurmd-node$i.pid"), CPUs $cpus of this machine"
  done
  log "slurmctld pid $(cat /run/slurmctld.pid): $(sinfo -h -o '%P %a %D %T %N')"
else
  /usr/sbin/slurmd                          # daemonizes, pid in /run/slurmd.pid
  wait_for 60 "node $H up" node_up "$H"
  log "slurmctld pid $(cat /run/slurmctld.pid), slurmd pid $(cat /run/slurmd.pid): $(sinfo -h -o '%P %a %D %T %N')"
fi

# ------------------------------------------------------------------ 9. smoke test
if [ "$SLURM_SMOKE_TEST" = 1 ]; then
  SUBMIT=(); [ -n "$SLURM_TEST_USER" ] && SUBMIT=(runuser -u "$SLURM_TEST_USER" --)
  JOB=$(cd /tmp && "${SUBMIT[@]}" sbatch --parsable -J smoke -o /dev/null --wrap 'echo hi; exit 3')
  job_gone() { [ -z "$(squeue -h -j "$JOB" 2>/dev/null)" ]; }
  wait_for 60 "job $JOB to finish" job_gone
  smoke_fail=0
  if [ "$SLURM_EPILOG" = /etc/slurm/epilog.sh ] && [ "$SLURM_EPILOG_SLURMCTLD" = /etc/slurm/epilog_slurmctld.sh ]; then
    # the epilogs run asynchronously after the job leaves squeue: poll for their output
    wait_for 30 "epilog_slurmctld of $JOB" test -s "$SLURM_HOOK_DIR/epilog_slurmctld.$JOB.env" || true
    wait_for 30 "epilog of $JOB" test -s "$SLURM_HOOK_DIR/epilog.$JOB.env" || true
    for h in prolog epilog prolog_slurmctld epilog_slurmctld; do
      if [ -s "$SLURM_HOOK_DIR/$h.$JOB.env" ]; then log "smoke: $h ran ($SLURM_HOOK_DIR/$h.$JOB.env)"
      else log "smoke: $h did NOT run"; smoke_fail=1; fi
    done
  fi
  if [ "$SLURM_WITH_DBD" = 1 ]; then
    acct_done() { sacct -n -X -P -j "$JOB" -o State,ExitCode | grep -q '^FAILED|3:0$'; }
    if wait_for 30 "sacct record of $JOB" acct_done; then
      log "smoke: sacct -> $(sacct -n -X -P -j "$JOB" -o JobID,User,Account,State,ExitCode)"
    else smoke_fail=1; fi
  fi
  [ "$smoke_fail" = 0 ] || { log "smoke test FAILED"; exit 1; }
  log "smoke: scontrol -> $(scontrol show job -o "$JOB" | tr ' ' '\n' | grep -E '^(JobId|JobState|Reason|ExitCode)=' | tr '\n' ' ')"
fi
log "READY. Stop with: kill \$(cat /run/slurmd*.pid /run/slurmctld.pid /run/slurmdbd.pid /run/mysqld/mysqld.pid /run/munge/munged.pid 2>/dev/null)  (or stop-slurm-single-node.sh)"

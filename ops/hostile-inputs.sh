#!/usr/bin/env bash
# Runs the attacks of issue 17's classes against a built jobsight (release or debug) and fails on
# the first one that gets through: what a hostile user (job names, node lists, spool files, import
# folders) and a careless admin (SQL, settings) would try. Every attack runs in a scratch folder
# and under a time limit, so a hang is a failure, not a stuck run.
#
#   ops/hostile-inputs.sh /var/tmp/jobsight-target/release/jobsight
#
# `jobsight-epilog` is taken from beside the given binary. Exit 0: every attack was refused or
# handled as docs/security.md promises. The unit and property tests hold the same promises at the
# function level; this script holds them at the level of the shipped binaries.
set -euo pipefail

bin=${1:?usage: $0 PATH/TO/jobsight}
bin=$(readlink -f "$bin")
repo=$(readlink -f "$(dirname "$0")/..")
hook=$(dirname "$bin")/jobsight-epilog
[[ -x $bin && -x $hook ]] || { echo "need $bin and $hook" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
export JOBSIGHT_DATA=$scratch/data JOBSIGHT_SPOOL=$scratch/spool
passed=0

fail() { echo "FAILED: $*" >&2; exit 1; }
ok() { passed=$((passed + 1)); echo "ok: $*"; }
# Runs a command with a time limit; a hang is a failure.
limited() { timeout 60 "$@"; local rc=$?; [[ $rc -ne 124 ]] || fail "hung: $*"; return $rc; }
has_raw_escape() { grep -q $'\x1b' "$1"; }

hook_env=(SLURM_CLUSTER_NAME=ci SLURM_JOB_ID=7 SLURM_JOB_USER=alice SLURM_JOB_UID=1001
  SLURM_JOB_GID=1001 SLURM_JOB_PARTITION=debug SLURM_JOB_NUM_NODES=1
  SLURM_SCRIPT_CONTEXT=epilog_slurmctld SLURMD_NODENAME=ctl)

# --- 1. SQL for admins is read-only ------------------------------------------------------------
limited "$bin" simulate --nodes 4 --jobs 8 >/dev/null
before=$(find data -type f | sort | xargs sha256sum)
for sql in "INSERT INTO jobs SELECT * FROM jobs" \
  "COPY (SELECT 1) TO '$scratch/copied.csv'" \
  "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/etc/passwd'" \
  "SET datafusion.execution.batch_size = 1" \
  "WITH a AS (SELECT * FROM jobs) INSERT INTO jobs SELECT * FROM a" \
  "SELECT * INTO t FROM jobs" "DROP TABLE jobs" "select 1; delete from jobs"; do
  if limited "$bin" sql "$sql" >out 2>&1; then fail "sql accepted: $sql"; fi
done
[[ ! -e copied.csv ]] || fail "COPY wrote a file"
[[ $before == "$(find data -type f | sort | xargs sha256sum)" ]] || fail "a refused statement changed the warehouse"
ok "jobsight sql refuses every writing form and changes nothing"

# --- 2 and 3. Special files and planted links in the spool --------------------------------------
"$bin" spool init --mode 770 >/dev/null
mkfifo spool/new/00000000000000000001.ci.1.0.epilog_slurmctld.h.1.0.json
echo "keep" >victim
ln -s "$scratch/victim" spool/failed/00000000000000000002.x.json.reason
echo '{"not": "a record"}' >spool/new/00000000000000000002.x.json
limited "$bin" spool claim >out 2>&1 || fail "spool claim failed: $(cat out)"
[[ $(cat victim) == keep ]] || fail "a planted .reason link was written through"
[[ -z $(ls spool/new) ]] || fail "new/ not emptied"
ok "a FIFO is quarantined without blocking; a planted .reason link is not followed"

mkdir -p elsewhere spool2
chmod 700 elsewhere
ln -s "$scratch/elsewhere" spool2/tmp
if "$bin" spool init --spool spool2 --mode 777 >out 2>&1; then fail "spool init followed a planted link"; fi
[[ $(stat -c %a elsewhere) == 700 ]] || fail "spool init changed a link target's mode"
grep -q -- "--spool" <(bin_out=$("$bin" spool status --spool "$scratch/nope" 2>&1 || true); echo "$bin_out") ||
  fail "the spool hint does not show --spool"
ok "spool init refuses a planted link; its hint shows the right syntax"

mkdir -p store/a && ln -s . store/a/loop
limited "$bin" import ldms-store store >out 2>&1 || true
ok "a link loop in an import folder ends the walk"

# --- 5. The hook: huge node lists, hostile names, empty --spool ---------------------------------
limited env -i "${hook_env[@]}" SLURM_JOB_NODELIST='n[0000000000-9999999999]' \
  SLURM_JOB_NAME="$(head -c 100000 /dev/zero | tr '\0' 'x')" "$hook" --spool spool >out 2>&1 ||
  fail "the hook exited non-zero: $(cat out)"
# A million names in a short list, under the 100-MB address space Slurm may give a hook (it
# took 111 MB when the hook expanded what its record cannot hold anyway).
limited env -i "${hook_env[@]}" SLURM_JOB_NODELIST='n[0-999999]' \
  prlimit --as=104857600 "$hook" --spool spool >out 2>&1 ||
  fail "the hook exited non-zero on a million names under 100 MB: $(cat out)"
biggest=$(find spool/new -type f -printf '%s\n' | sort -n | tail -1)
((biggest <= 1048576)) || fail "the hook wrote a record of $biggest bytes"
limited env -i "${hook_env[@]}" SLURM_JOB_ID=8 SLURM_JOB_NAME=$'\x1b]0;owned\x07\x1b[2J' "$hook" --spool spool >/dev/null 2>&1
limited "$bin" spool claim >out 2>&1 || fail "claim failed"
grep -q "failed" out && grep -q "ci.7." <(ls spool/failed) && fail "the claim rejected what the hook wrote"
has_raw_escape out && fail "spool claim printed a raw escape"
"$bin" spool status >out 2>&1
has_raw_escape out && fail "spool status printed a raw escape"
mkdir cwd && (cd cwd && env -i "${hook_env[@]}" "$hook" --spool= >/dev/null 2>&1) ||
  fail "the hook exited non-zero on an empty --spool="
[[ -z $(ls -A cwd) ]] || fail "an empty --spool= wrote into the working directory"
ok "the hook bounds node lists and names, exits 0, escapes nothing raw"

# --- 6. Absurd settings are refused at load ----------------------------------------------------
printf '[features]\nbin_s = 1e300\n' >bad.toml
if "$bin" --config bad.toml check >out 2>&1; then fail "check accepted bin_s = 1e300"; fi
printf '[features]\nbin_s = 99999999999\n' >bad.toml
if "$bin" --config bad.toml check >out 2>&1; then fail "check accepted a huge bin_s"; fi
grep -q "bin_s" out || fail "the range error does not name the setting: $(cat out)"
ok "absurd settings are refused by check, naming the setting"

# --- 7. Numbers that would wrap ---------------------------------------------------------------
printf '1 0 0 nan 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n2 0 0 10 999999999999999999999 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n3 0 0 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n' >log.swf
limited "$bin" import swf --cluster c log.swf >out 2>&1 || fail "import swf failed: $(cat out)"
grep -qi "skipped" out || fail "bad SWF lines were not reported: $(cat out)"
{ head -c 3000000 /dev/zero | tr '\0' '1'; printf '\n3 0 0 10 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n'; } >long.swf
limited "$bin" import swf --cluster c long.swf >out 2>&1 || fail "import swf failed on a long line: $(cat out)"
grep -q "longer than" out || fail "a 3 MB line was not skipped with its length: $(cat out)"
if "$bin" simulate --first-job-id 18446744073709551615 >out 2>&1; then fail "simulate took a job id beyond 32 bits"; fi
ok "out-of-range numbers are skipped with reasons or refused"

# --- 8. Control bytes never reach the terminal raw --------------------------------------------
"$bin" sql --format table "SELECT name FROM jobs" >out 2>&1 || true
has_raw_escape out && fail "sql --format table printed a raw escape"

# U+202E turns `\u202egnp.exe` into what reads as `exe.png`: escaped like the control bytes.
"$bin" sql --format table $'SELECT \'\xe2\x80\xaegnp.exe\' AS name' >out 2>&1 || fail "sql: $(cat out)"
grep -q $'\xe2\x80\xae' out && fail "sql --format table printed a raw bidirectional control"
grep -qF 'u{202e}gnp.exe' out || fail "the bidirectional control was not shown escaped: $(cat out)"
ok "control bytes and bidirectional controls are escaped in tables"

# --- 9. Names of any length and script; trace values that cannot be ----------------------------
# A Pegasus trace named with 100 x 'e acute' (200 bytes, 600 once escaped: the import aborted
# after 4 runs), and one whose first task has a NaN run time (it was kept without a reason).
mkdir -p traces/normal
tar xJf "$repo/tests/fixtures/public/flowbench-1000genome.excerpt.tar.xz" -C . \
  parsed/normal adjacency_list_dags/1000genome.json
first=$(find parsed/normal -name '*.csv' | sort | head -1)
accents=$(printf 'é%.0s' $(seq 100))
cp "$first" "traces/normal/$accents-run0001.csv"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "runtime") c = i; if (!c) exit 1 }
  NR == 2 { $c = "nan" } { print }' "$first" >traces/normal/nan-run0002.csv ||
  fail "no runtime column in $first"
limited "$bin" import pegasus --dag adjacency_list_dags/1000genome.json traces >out 2>&1 ||
  fail "import pegasus failed: $(cat out)"
grep -q "imported 2 workflow runs" out || fail "both runs were not imported: $(cat out)"
grep -q "NaN is not a run time" out || fail "a NaN run time was not refused with its reason: $(cat out)"
# Bytes, not characters: a file name may have 255 bytes.
longest=$(find data -printf '%f\n' | LC_ALL=C awk '{ print length($0) }' | sort -n | tail -1)
((longest <= 255)) || fail "a warehouse file name of $longest characters"
ok "a trace named with 100 accented letters is stored under a name that fits; a NaN run time is refused"

# --- 10. Round two's statements: endless parses, doubling WITH chains, values too large ----------
casts="SELECT $(printf 'CAST(%.0s' $(seq 48))1$(printf ' AS BIGINT)%.0s' $(seq 48))"
calls="SELECT $(printf 'abs(%.0s' $(seq 40))1$(printf ')%.0s' $(seq 40))"
with="WITH c0 AS (SELECT 1 AS x)"
for i in $(seq 1 30); do with="$with, c$i AS (SELECT a.x FROM c$((i - 1)) a, c$((i - 1)) b)"; done
with="$with SELECT count(*) FROM c30"
for sql in "$casts" "$calls" "$with"; do
  rc=0; limited "$bin" sql "$sql" >out 2>&1 || rc=$?
  [[ $rc -eq 1 ]] || fail "sql ${sql:0:40}... ended with $rc, not a refusal: $(head -c 300 out)"
  grep -q "too complex" out || fail "sql ${sql:0:40}... was not refused as too complex: $(head -c 300 out)"
done
rc=0; limited "$bin" sql "SELECT length(replace(repeat('x', 200000000), 'x', 'xxxxxxxxxx'))" >out 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "replace(repeat(...)) ended with $rc (an abort is 134): $(head -c 300 out)"
ok "CAST( x 48, abs( x 40 and a 30-link doubling WITH chain are refused at once; replace(repeat(...)) is an error, not an abort"

# --- 11. Label files: a FIFO, a contradiction, a million copies ------------------------------------
job=$("$bin" sql --format csv "SELECT job_id FROM jobs ORDER BY job_id LIMIT 1" | tail -1)
mkfifo labels.fifo
rc=0; limited "$bin" label --by ci --import labels.fifo >out 2>&1 || rc=$?
[[ $rc -ne 0 ]] && grep -q "not a regular file" out || fail "a FIFO of labels was not refused: $(cat out)"
printf 'job_id,anomaly,start,end\n%s,healthy,,\n%s,memleak,,\n' "$job" "$job" >both.csv
if limited "$bin" label --by ci --import both.csv >out 2>&1; then fail "a job labelled healthy and memleak was kept"; fi
grep -q "both healthy and anomalous" out || fail "the contradiction was not named: $(cat out)"
{ echo 'job_id,anomaly,start,end'; awk -v l="$job,healthy,," 'BEGIN { for (i = 0; i < 1000000; i++) print l }'; } >copies.csv
limited "$bin" label --by ci --import copies.csv >out 2>&1 || fail "label --import of copies failed: $(cat out)"
grep -q "kept 1 label(s)" out && grep -q "left out 999999" out || fail "copies were kept: $(cat out)"
ok "a labels FIFO is refused at once, a contradiction refused, a million copies kept once"

# --- 12. jobsight-exporter: one spelling per job id ------------------------------------------------
exporter=$(dirname "$bin")/jobsight-exporter
for job_dir in uid_1001/job_7 uid_1000/job_0007; do
  d=cgroup/cpuacct/slurm/$job_dir
  mkdir -p "$d"
  printf 'user 100\nsystem 0\n' >"$d/cpuacct.stat"
  echo 1000000000 >"$d/cpuacct.usage"
  : >"$d/tasks"
done
echo 999000000000 >cgroup/cpuacct/slurm/uid_1000/job_0007/cpuacct.usage
limited "$exporter" --once --cgroup-root cgroup --proc-root cgroup >out 2>err || fail "exporter: $(cat err)"
grep -qx 'cgroup_uid{jobid="7"} 1001' out &&
  grep -qx 'cgroup_cpu_total_seconds{jobid="7",step="",task=""} 1' out ||
  fail "job 7 is not the real job_7 (1001, 1 s): $(grep -v '^#' out | head -c 500)"
ok "a job_0007 directory shadows no job_7 in jobsight-exporter"

echo "all $passed attack groups handled"

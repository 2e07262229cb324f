#!/usr/bin/env bash
# scripts/slurm_reproduce.sbatch on a real Slurm: a single-node cluster of its own (munged,
# slurmctld, slurmd; config, state, logs and keys in a temporary folder), run as root.
#
#   bash tests/slurm/run_slurm_test.sh        # about 2-3 minutes; prints a transcript
#
# 1. installs Debian's slurm-wlm and munge with apt-get where missing;
# 2. submits the array over the two quick cells of tests/slurm/tiny_table.yaml (tiny SBM_PATTERN
#    graphs generated on the spot: nothing is downloaded) and checks their records;
# 3. submits the third, slow cell under a one-minute time limit: the sbatch file's
#    --signal=B:TERM@SECONDS reaches the sweep before the limit, the cell saves and the task
#    exits 143; its results.json says "interrupted" and the sweep says so (never FAILED);
# 4. requeues it (scontrol requeue) and resubmits the quick cells' array: those are skipped as
#    complete, the third completes, in the interrupted run's own folder where the main scripts
#    resume runs (--resume), else rerun;
# 5. stops the daemons it started (also on failure or Ctrl-C) and removes its folder
#    (KEEP=1 keeps it).
# Exit codes: 0 passed (or SKIP: not root), 1 a check failed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
t0=$SECONDS
say() { printf '[%3ds] %s\n' $((SECONDS - t0)) "$*"; }
fail() { say "FAIL: $*"; exit 1; }

if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: the Slurm test starts its own munged, slurmctld and slurmd: run it as root"
    exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
        || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurm-wlm and munge (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
export PYTHON="${PYTHON:-$root/.venv/bin/python}"
"$PYTHON" -c "import torch" 2>/dev/null || fail "no Python with the project's packages at $PYTHON (set PYTHON)"

tmp="$(mktemp -d /tmp/autogcn-slurm.XXXXXX)"
cleanup() {
    local code=$?
    if [[ -s "$tmp/slurmctld.pid" ]]; then  # no job of ours outlives the test
        squeue -h -o %A 2>/dev/null | xargs -r scancel 2>/dev/null || true
        sleep 2
    fi
    for pidfile in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munged.pid"; do
        [[ -s "$pidfile" ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    sleep 1
    if [[ $code -ne 0 ]]; then
        for f in "$tmp"/*.log "$tmp"/work/slurm-*.out; do
            [[ -f "$f" ]] && { echo "----- $f (last lines)"; tail -n 15 "$f"; }
        done
    fi
    if [[ -n "${KEEP:-}" ]]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
    say "daemons stopped; $( [[ $code -eq 0 ]] && echo PASSED || echo "FAILED (exit $code)")"
}
trap cleanup EXIT

# ---------------------------------------------------------------- a one-node cluster
say "starting munged, slurmctld and slurmd in $tmp"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/work"
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge.key"
munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" \
    --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed"
node="$(hostname -s)"
port=$((20000 + RANDOM % 20000))
export SLURM_CONF="$tmp/slurm.conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=autogcntest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=15
MinJobAge=600
PlugStackConfig=$tmp/plugstack.conf
NodeName=$node NodeAddr=127.0.0.1 CPUs=4 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
: > "$tmp/plugstack.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N "$node"
for _ in $(seq 60); do
    sinfo -h -o %T 2>/dev/null | grep -qx idle && break
    sleep 0.5
done
sinfo -h -o %T | grep -qx idle || fail "the node did not come up: $(sinfo -h 2>&1)"
say "cluster up: $(sinfo -h -o '%P %D %T %c CPUs')"

# ---------------------------------------------------------------- the sweep's setting
cd "$tmp/work"  # relative paths in SWEEP_ARGS are relative to where the job is submitted
export TABLE="$root/tests/slurm/tiny_table.yaml" AUTOGCN_ROOT="$root"
export SWEEP_ARGS="--out_root out --data_root data --runs 1"
export CELL_ARGS="--max_graphs 8 --batch_size 4 --compile off"
export OMP_NUM_THREADS=1
cells="out/slurm_test"
say "generating the tiny SBM_PATTERN graphs once (as docs/reproducing.md says to)"
(cd "$root" && "$PYTHON" -m scripts.diagnose --sizes_only --dataset SBM_PATTERN \
    --data_dir "$tmp/work/data" --max_graphs 8 >/dev/null)

submit() {  # sbatch ARGS...: the job id
    sbatch --parsable --cpus-per-task=1 "$@" "$root/scripts/slurm_reproduce.sbatch"
}
wait_job() {  # JOBID SECONDS: until it has left the queue
    local _
    for _ in $(seq $((2 * $2))); do
        [[ -z "$(squeue -h -j "$1" 2>/dev/null)" ]] && return 0
        sleep 0.5
    done
    fail "job $1 still queued or running after $2 s: $(squeue -h -j "$1")"
}
job_field() {  # JOBID FIELD: e.g. JobState, ExitCode (the first array task's)
    scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
status_of() {  # CELL: the status in each of its results.json, one line each
    local f
    for f in "$cells/$1"/*/results.json; do
        [[ -f "$f" ]] && "$PYTHON" -c "import json,sys; d=json.load(open(sys.argv[1])); \
print(sys.argv[1], d['status'], len(d['runs']))" "$f"
    done
    return 0
}

# ---------------------------------------------------------------- two quick cells, and a third
# that a time limit stops: submitted with a long limit, cut to one minute once it trains (Slurm
# checks time limits every 30 s, so a one-minute limit from the start could fall before the cell
# has begun; cutting the limit of a running job is what an operator does too)
quick=$(submit --array=0-1)
say "submitted cells 0-1 (GCN_tiny, MLP_tiny) as array job $quick"
slow=$(submit --array=2 --time=5)
say "submitted cell 2 (AUTOGCN_long, ~50 s of training) as job $slow (--time=5; the sbatch" \
    "file's --signal=B:TERM@180)"
for _ in $(seq 120); do
    grep -q " running " <<<"$(status_of AUTOGCN_long)" && break
    sleep 0.5
done
grep -q " running " <<<"$(status_of AUTOGCN_long)" || fail "cell 2 did not start training within 60 s"
scontrol update JobId="$slow" TimeLimit=1
say "  AUTOGCN_long trains: its time limit cut to $(job_field "$slow" TimeLimit)" \
    "(started $(job_field "$slow" StartTime))"
wait_job "$quick" 90
for cell in GCN_tiny MLP_tiny; do
    rec="$(status_of $cell)"
    say "  $cell: ${rec:-no results.json}"
    grep -q " complete 1$" <<<"$rec" || fail "$cell has no complete result with 1 run"
done
grep -h "done on cpu" slurm-autogcn-reproduce-"${quick}"_*.out | sed 's/^/         /'
[[ $(grep -l "done on cpu" slurm-autogcn-reproduce-"${quick}"_*.out | wc -l) -eq 2 ]] \
    || fail "a task's output does not say its cell was done"

wait_job "$slow" 90
out1="$(cat slurm-autogcn-reproduce-"${slow}"_2.out)"
say "  job $slow: JobState=$(job_field "$slow" JobState) ExitCode=$(job_field "$slow" ExitCode)" \
    "RunTime=$(job_field "$slow" RunTime)"
grep -E "interrupted|terminated|FAILED|CANCELLED" <<<"$out1" | sed 's/^/         /'
rec="$(status_of AUTOGCN_long)"
say "  AUTOGCN_long: ${rec:-no results.json}"
grep -q " interrupted " <<<"$rec" || fail "the stopped cell's results.json does not say interrupted"
grep -q "AUTOGCN_long interrupted (exit 143" <<<"$out1" || fail "the sweep did not report the cell as interrupted"
grep -q "FAILED" <<<"$out1" && fail "the sweep reported the stopped cell as FAILED"
[[ "$(job_field "$slow" ExitCode)" == 143:0 ]] || fail "the task's exit code is not 143"
stopped="$(awk '/ interrupted /{print $1}' <<<"$rec" | head -n 1)"

# ---------------------------------------------------------------- requeued and resubmitted
# the stopped task goes back to the queue as it is (scontrol requeue; its limit raised again),
# and the whole array is resubmitted: the quick cells are complete, so their tasks skip them
# slurmd refuses to relaunch a job within the second its last run was revoked ("Job credential
# revoked"), and Slurm holds a requeued job back for a while (its BeginTime): a test waits less
sleep 3
scontrol requeue "$slow"
scontrol update JobId="$slow" TimeLimit=5 StartTime=now
say "requeued job $slow (cell 2; time limit back to 5 min, eligible now)"
again=$(submit --array=0-1)
say "resubmitted cells 0-1 as array job $again"
wait_job "$again" 90
for f in slurm-autogcn-reproduce-"${again}"_*.out; do
    grep -q "nothing to run" "$f" || fail "$f: a complete cell was run again"
done
say "  cells 0-1: $(grep -h "nothing to run" slurm-autogcn-reproduce-"${again}"_*.out | sort -u)"
wait_job "$slow" 90
rec="$(status_of AUTOGCN_long)"
say "  job $slow: JobState=$(job_field "$slow" JobState) ExitCode=$(job_field "$slow" ExitCode)" \
    "Restarts=$(job_field "$slow" Restarts)"
say "  AUTOGCN_long: $(tr '\n' ';' <<<"$rec")"
grep -q " complete 1$" <<<"$rec" || fail "the requeued cell did not complete"
jid=$slow  # its output file holds both attempts (--open-mode=append)
[[ $(grep -c "AUTOGCN_long interrupted\|AUTOGCN_long done" slurm-autogcn-reproduce-"${slow}"_2.out) -eq 2 ]] \
    || fail "the requeued task's output does not hold both attempts"
if grep -rqs -- "\"--resume\"" "$root/train"; then  # the main scripts have --resume
    grep -q "^$stopped complete 1$" <<<"$rec" \
        || fail "the main scripts resume runs, but the interrupted run ($stopped) was not continued"
    say "  resumed: the interrupted run's own results.json is now complete"
    grep -h -E "resuming|resumed after" slurm-autogcn-reproduce-"${jid}"_2.out \
        "$cells/AUTOGCN_long/stdout.log" | sed 's/^/         /'
    grep -q "resumed after epoch" "$cells/AUTOGCN_long/stdout.log" \
        || fail "the cell's log does not say from which epoch it resumed"
else
    say "  NOTE: the main scripts have no --resume yet: the cell reran its run from epoch 0"
fi
# shellcheck disable=SC2086  # the arguments as the jobs got them
listed="$("$root/scripts/reproduce.sh" "$TABLE" $SWEEP_ARGS --list -- $CELL_ARGS \
    | awk '{print $2 "=" $3}' | tr '\n' ' ')"
say "  --list: $listed"
[[ "$listed" == "GCN_tiny=complete MLP_tiny=complete AUTOGCN_long=complete " ]] \
    || fail "--list does not call every cell complete"

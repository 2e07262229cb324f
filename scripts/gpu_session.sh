#!/usr/bin/env bash
# One GPU call of at most 9 minutes (a lent H100/H200): the GPU check, the benchmark, then
# full-protocol ZINC cells of the graph table (ZINC_CELLS, all at once on the GPU) until the
# call's deadline, when they save their state and stop; the next call, or a CPU, continues them
# where they stopped (the sweep resumes unfinished cells; each run's record names the devices it
# ran on). Results: the same records as CPU runs, in OUT_ROOT/graph/<cell>/.
#
#   bash scripts/gpu_session.sh             (from anywhere; paths are the project's)
#
# Environment: ZINC_DIR (the ZINC pickles; default datasets/ZINC), OUT_ROOT (default
# out/reproduce), BUDGET_S (the whole call in seconds, default 540, at least 65), PYTHON (default
# .venv/bin/python), ZINC_CELLS (cell ids, space-separated; default "AUTOGCN_ZINC GCN_ZINC").
# The check and the benchmark run in the first call only (their output is kept in
# OUT_ROOT/gpu_session/); delete that folder to run them again.
# Bad input (checked first, GPU or not): one line, exit 2. Without a CUDA GPU: one SKIP line,
# exit 0.
set -u
cd "$(dirname "$0")/.."
start=$(date +%s)
# What stopping needs at the end: a cell acts on SIGTERM at its next batch (at most
# train/interrupts.py's GRACE_S, 5 s, during a compile), then closes its writers; timeout
# sends SIGKILL 25 s after SIGTERM; the last 10 s print the cells' state.
margin=35
shortest=30  # the least time a step is started with
bad() { echo "error: $*" >&2; exit 2; }

# Every input is checked before anything runs or is written, with or without a GPU.
budget="${BUDGET_S:-540}"
[[ "$budget" =~ ^[0-9]+$ ]] || bad "BUDGET_S must be a whole number of seconds, got '$budget'"
(( ${#budget} <= 7 )) || bad "BUDGET_S=$budget is too large (at most 9999999 s)"
budget=$((10#$budget))  # 10#: 0540 is 540, not octal
(( budget >= margin + shortest )) || bad "BUDGET_S=$budget leaves no time to run anything:" \
    "give at least $((margin + shortest)) s (${margin} s are kept to stop the runs)"
python="${PYTHON:-.venv/bin/python}"
[ -n "${PYTHON:-}" ] || [ -x "$python" ] || python=python3
command -v "$python" >/dev/null || bad "PYTHON=$python is not an executable"
cuda=$("$python" -c "import torch; print(int(torch.cuda.is_available()))" 2>/dev/null) \
    || bad "no torch in PYTHON=$python: set PYTHON to the Python with the project's packages"
zinc="${ZINC_DIR:-datasets/ZINC}"
[ -f "$zinc/train.pickle" ] || bad "no ZINC pickles in '$zinc' (set ZINC_DIR)"
out="${OUT_ROOT:-out/reproduce}"
cells="${ZINC_CELLS:-AUTOGCN_ZINC GCN_ZINC}"
zinc_ids=" MLP_ZINC GIN_ZINC GIN_ZINC_paper_text GraphSage_ZINC GAT_ZINC MoNet_ZINC ChebNet_ZINC GCN_ZINC SGC_ZINC APGCN_ZINC AUTOGCN_ZINC "
[ -n "${cells// /}" ] || bad "ZINC_CELLS is empty: name graph-table ZINC cells, e.g. 'GIN_ZINC GAT_ZINC'"
for cell in $cells; do
    [[ "$zinc_ids" == *" $cell "* ]] || bad "ZINC_CELLS: '$cell' is no ZINC cell of the graph table" \
        "(one of:$zinc_ids)"
done
parent="$out"
while [ ! -e "$parent" ]; do parent="$(dirname "$parent")"; done
[ -d "$parent" ] || bad "OUT_ROOT=$out: $parent is a file, not a folder"
[ -w "$parent" ] || bad "OUT_ROOT=$out: $parent cannot be written"

if [ "$cuda" != 1 ]; then
    echo "SKIP gpu_session no CUDA device here: nothing run"
    exit 0
fi
left() { echo $(( start + budget - margin - $(date +%s) )); }
log="$out/gpu_session"
mkdir -p "$log"

once() {  # NAME CAP_S COMMAND...: run once per output folder, within CAP_S and the deadline
    local name=$1 cap=$2 t
    shift 2
    if [ -f "$log/$name.done" ]; then
        echo "$name: done in an earlier call ($log/$name.log)"
        return
    fi
    t=$(left)
    [ "$t" -lt "$cap" ] && cap=$t
    if [ "$cap" -lt "$shortest" ]; then
        echo "SKIP $name no time left in this call"
        return
    fi
    echo "== $name (at most ${cap}s)"
    timeout -s TERM -k 20 "$cap" "$@" 2>&1 | tee "$log/$name.log"
    local rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] && touch "$log/$name.done"
    echo "== $name exit $rc after $(( $(date +%s) - start ))s of the call"
}

once gpu_check 150 "$python" -m scripts.gpu_check --quick
once benchmark 150 "$python" -m scripts.bench autogcn --device cuda --datasets ZINC \
    --zinc_dir "$zinc" --graphs 1024 --epochs 5

t=$(left)
if [ "$t" -lt 60 ]; then
    echo "SKIP zinc_runs no time left in this call (${t}s)"
else
    # One listing for all (each start of Python costs seconds): --only matches substrings, so
    # each cell's --cell index is its exact id's row; all start together and stop together.
    only=$(echo $cells | tr ' ' ',')
    listing=$("$python" -m scripts.sweep graph --only "$only" --list --out_root "$out")
    t=$(left)
    echo "== zinc_runs" $cells "until ${t}s from now"
    for cell in $cells; do
        index=$(awk -v id="$cell" '$2 == id {print $1}' <<< "$listing")
        timeout -s TERM -k 25 "$t" "$python" -m scripts.sweep graph --gpus 0 --only "$only" \
            --cell "$index" --out_root "$out" --data_dir "ZINC=$zinc" &
    done
    wait
fi
echo "== state after $(( $(date +%s) - start ))s (rerun this script to continue):"
"$python" -m scripts.sweep graph --only "$(echo $cells | tr ' ' ',')" --list --out_root "$out" |
    awk -v ids=" $cells " 'index(ids, " " $2 " ")'
exit 0

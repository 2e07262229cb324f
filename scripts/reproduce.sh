#!/usr/bin/env bash
# Reproduce one table of the AutoGCN paper: a thin wrapper over python -m scripts.sweep.
#
#   scripts/reproduce.sh TABLE [sweep options] [-- extra args for every cell]
#
# TABLE: node | heterophily | graph | ablation | depth (cells in scripts/tables/TABLE.yaml),
# or successors (GPR-GNN, BernNet, ChebNetII, JacobiConv beside AutoGCN, ChebNet and GCN at
# equal budgets on the paper's nine datasets) | successors_published (PubMed and Squirrel under
# the successors' own protocol; give --runs 10 here and to report tables).
# Examples:
#   scripts/reproduce.sh ablation --gpus 0,1,2,3
#   scripts/reproduce.sh graph --data_dir ZINC=DIR1 --data_dir MNIST=DIR2
#   scripts/reproduce.sh depth --jobs 2 --only ZINC -- --epochs 2 --max_graphs 100   # smoke run
#   scripts/reproduce.sh node --dry-run
#   scripts/reproduce.sh successors --gpus 0,1 --data_dir PUBMED=DIR1 --data_dir SQUIRREL=DIR2
# Paths given on the command line are relative to the folder you run it from.
# Results: out/reproduce/TABLE/<cell id>/ in the project (--out_root); rerunning resumes (complete cells are
# skipped, --force reruns them; a cell another sweep is running is skipped). --gpus is refused
# where no such CUDA GPU is visible. Then: python -m scripts.report tables
# Exit codes: 0 done, 1 a cell failed, 2 bad input, 130 Ctrl-C, 143 SIGTERM (also when only
# a cell was stopped, e.g. by a time limit: its finished runs are kept).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
if [[ $# -ge 1 && ( "$1" == "-h" || "$1" == "--help" ) ]]; then
    # the comment block above, without its '#'
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
    exit 0
fi
if [[ $# -lt 1 ]]; then
    echo "error: give a TABLE (node, heterophily, graph, ablation, depth, successors or" \
        "successors_published); see $0 --help" >&2
    exit 2
fi
if [[ -n "${PYTHON:-}" && ! -x "$(command -v "$PYTHON" || true)" ]]; then
    echo "error: PYTHON=$PYTHON is not an executable; set it to the Python with the" \
        "project's packages, or unset it to use $root/.venv" >&2
    exit 2
fi
python="${PYTHON:-$root/.venv/bin/python}"
if [[ ! -x "$python" ]]; then
    python="$(command -v "${PYTHON:-python3}" || true)"
fi
if [[ -z "$python" ]] || ! "$python" -c "import numpy, yaml, torch" 2>/dev/null; then
    echo "error: no Python with the project's packages at ${python:-python3}: run" \
        "scripts/setup.sh (it creates $root/.venv) or set PYTHON" >&2
    exit 2
fi
# run from the user's folder: the paths they give (--out_root, --data_root, --data_dir, a
# table file) are relative to it; the sweep runs the cells in the project itself, which
# PYTHONPATH makes importable from here
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m scripts.sweep "$@"

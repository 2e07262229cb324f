#!/usr/bin/env bash
# Reproduce one table of the AutoGCN paper: a thin wrapper over scripts/sweep.py.
#
#   scripts/reproduce.sh TABLE [sweep options] [-- extra args for every cell]
#
# TABLE: node | heterophily | graph | ablation | depth (cells in scripts/tables/TABLE.yaml).
# Examples:
#   scripts/reproduce.sh ablation --gpus 0,1,2,3
#   scripts/reproduce.sh graph --data_dir ZINC=../shared/data/zinc --data_dir MNIST=../shared/data/mnist
#   scripts/reproduce.sh depth --jobs 2 --only ZINC -- --epochs 2 --max_graphs 100   # smoke run
#   scripts/reproduce.sh node --dry-run
# Results: out/reproduce/TABLE/<cell id>/ (--out_root); rerunning resumes (complete cells are
# skipped, --force reruns them). Then: python -m scripts.make_tables
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    [[ $# -lt 1 ]] && exit 2 || exit 0
fi
python="${PYTHON:-$root/.venv/bin/python}"
[[ -x "$python" ]] || python="$(command -v python3)"
cd "$root"
exec "$python" -m scripts.sweep "$@"

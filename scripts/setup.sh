#!/usr/bin/env bash
# Build an install profile in a virtual environment (idempotent: re-running installs only what is
# missing).
#   bash scripts/setup.sh          default profile, .venv: current torch, numpy 2, no DGL
#   bash scripts/setup.sh --dgl    DGL profile, .venv-dgl: torch 2.2.1 + DGL 2.1.0 (see
#                                  requirements-dgl.txt)
# PYTHON selects the interpreter (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
requirements=requirements.txt
case "${1:-}" in
    "") ;;
    --dgl) venv=.venv-dgl; requirements=requirements-dgl.txt ;;
    *) echo "usage: bash scripts/setup.sh [--dgl]" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
    "$PYTHON" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q -r "$requirements"

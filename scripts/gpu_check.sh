#!/usr/bin/env bash
# Prove the GPU path on this machine: one PASS|FAIL|SKIP line per check, then a summary; exit
# status 1 on any failure. Without a GPU: one line, exit 0. See scripts/gpu_check.py.
#   bash scripts/gpu_check.sh [--quick]      (PYTHON=... selects the interpreter)
set -u
cd "$(dirname "$0")/.."
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
exec "$PYTHON" -m scripts.gpu_check "$@"

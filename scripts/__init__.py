"""Reproduction, benchmarking and checking tools; run them from the project root as modules,
e.g. ``python -m scripts.sweep node --dry-run`` (``scripts/reproduce.sh`` wraps the sweep), or
as files, ``python scripts/sweep.py node --dry-run`` (see :mod:`scripts._project_root`).

Every tool checks its options when the command line is parsed (``scripts/cli.py``) and exits as
the main scripts do: 0 success, 2 bad input (one line ``error: ...``), 1 failure, 130 Ctrl-C,
143 SIGTERM (``train/errors.py``)."""

"""Reproduction, benchmarking and checking tools; run them from the project root as modules,
e.g. ``python -m scripts.sweep node --dry-run`` (``scripts/reproduce.sh`` wraps the sweep, and
runs from any folder). A command that was merged into another says, in one line and exit 2,
what replaces it: ``benchmark``, ``benchmark_baselines``, ``benchmark_layers`` and
``state_cost`` are ``python -m scripts.bench autogcn|models|layers|state``, ``plot_filters`` is
``python -m scripts.diagnose --checkpoint``, and ``bash scripts/gpu_check.sh`` is
``python -m scripts.gpu_check``.

Every tool checks its options when the command line is parsed (``scripts/cli.py``) and exits as
the main scripts do: 0 success, 2 bad input (one line ``error: ...``), 1 failure, 130 Ctrl-C,
143 SIGTERM (``train/errors.py``)."""

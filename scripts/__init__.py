"""Reproduction, benchmarking and checking tools; run them from the project root as modules,
e.g. ``python -m scripts.sweep node --dry-run`` (``scripts/reproduce.sh`` wraps the sweep)."""

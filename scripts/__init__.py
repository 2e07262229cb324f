"""Reproduction, benchmarking and checking tools, run from the project root as modules
(``python -m scripts.sweep node --dry-run``; ``docs/reproducing.md``). Every tool checks its options
as it parses them and exits as the main scripts do (``train/errors.py``): 0 success, 2 bad input
(one line ``error: ...``), 1 failure, 130 Ctrl-C, 143 SIGTERM. A retired command (``make_tables``,
``benchmark``, ...) says in one line, with exit 2, what replaces it."""

"""Replaced by ``python -m scripts.bench autogcn``; this file only says so."""
import sys

sys.stderr.write("error: scripts.benchmark is now: python -m scripts.bench "
                 "autogcn (the same options)\n")
sys.exit(2)

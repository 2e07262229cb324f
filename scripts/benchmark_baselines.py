"""Replaced by ``python -m scripts.bench models``; this file only says so."""
import sys

sys.stderr.write("error: scripts.benchmark_baselines is now: python -m scripts.bench "
                 "models (the same options)\n")
sys.exit(2)

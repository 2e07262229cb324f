"""Replaced by ``python -m scripts.bench layers``; this file only says so."""
import sys

sys.stderr.write("error: scripts.benchmark_layers is now: python -m scripts.bench "
                 "layers (the same options)\n")
sys.exit(2)

"""Replaced by ``python -m scripts.bench conv``; this file only says so."""
import sys

sys.stderr.write("error: scripts.bench_conv is now: python -m scripts.bench conv (the same "
                 "options)\n")
sys.exit(2)

"""Replaced by ``python -m scripts.bench state``; this file only says so."""
import sys

sys.stderr.write("error: scripts.state_cost is now: python -m scripts.bench "
                 "state (the same options)\n")
sys.exit(2)

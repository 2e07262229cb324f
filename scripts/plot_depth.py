"""Replaced by ``python -m scripts.report depth``; this file only says so."""
import sys

sys.stderr.write("error: scripts.plot_depth is now: python -m scripts.report "
                 "depth (the same options)\n")
sys.exit(2)

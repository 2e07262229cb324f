"""Replaced by ``python -m scripts.diagnose --checkpoint``; this file only says so."""
import sys

sys.stderr.write("error: scripts.plot_filters is now: python -m scripts.diagnose "
                 "--checkpoint CKPT [CKPT ...] (the same options)\n")
sys.exit(2)

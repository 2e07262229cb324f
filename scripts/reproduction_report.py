"""Replaced by ``python -m scripts.report render``; this file only says so."""
import sys

sys.stderr.write("error: scripts.reproduction_report is now: python -m scripts.report "
                 "render (the same options; --check: check)\n")
sys.exit(2)

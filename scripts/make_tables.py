"""Replaced by ``python -m scripts.report tables``; this file only says so."""
import sys

sys.stderr.write("error: scripts.make_tables is now: python -m scripts.report "
                 "tables (the same options)\n")
sys.exit(2)

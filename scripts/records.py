"""Replaced by ``python -m scripts.report collect|check``; this file only says so."""
import sys

sys.stderr.write("error: scripts.records is now: python -m scripts.report "
                 "collect|check (the same options)\n")
sys.exit(2)

# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.make_tables is now: python -m scripts.report "
                 "tables (the same options)\n")
sys.exit(2)

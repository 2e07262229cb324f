# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.records is now: python -m scripts.report "
                 "collect|check (the same options)\n")
sys.exit(2)

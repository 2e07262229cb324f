# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.reproduction_report is now: python -m scripts.report "
                 "render (the same options; --check: check)\n")
sys.exit(2)

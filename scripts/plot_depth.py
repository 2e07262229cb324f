# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.plot_depth is now: python -m scripts.report "
                 "depth (the same options)\n")
sys.exit(2)

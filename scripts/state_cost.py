# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.state_cost is now: python -m scripts.bench "
                 "state (the same options)\n")
sys.exit(2)

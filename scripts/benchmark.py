# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.benchmark is now: python -m scripts.bench "
                 "autogcn (the same options)\n")
sys.exit(2)

# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.bench_conv is now: python -m scripts.bench conv (the same "
                 "options)\n")
sys.exit(2)

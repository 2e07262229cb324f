# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.plot_filters is now: python -m scripts.diagnose "
                 "--checkpoint CKPT [CKPT ...] (the same options)\n")
sys.exit(2)

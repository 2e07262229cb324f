# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.benchmark_layers is now: python -m scripts.bench "
                 "layers (the same options)\n")
sys.exit(2)

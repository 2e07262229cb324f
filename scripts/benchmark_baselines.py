# A retired command: it only says, in one line, what replaces it.
import sys

sys.stderr.write("error: scripts.benchmark_baselines is now: python -m scripts.bench "
                 "models (the same options)\n")
sys.exit(2)

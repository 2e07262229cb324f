"""The project's benchmarks, one command: ``python -m scripts.bench SUBCOMMAND [options]``
(:mod:`scripts.bench.__main__` lists them). Every one measures its candidates in one process,
alternating them, and prints ratios; :mod:`scripts.bench.timing` holds what they share."""

import os

# The profiler behind the CPU peak memory logs through kineto's own logger, which writes its
# start/stop markers and a failed GPU count to stderr whatever Python's settings: raise its
# threshold above every severity before torch is first imported (a user's own setting wins).
os.environ.setdefault("KINETO_LOG_LEVEL", "99")

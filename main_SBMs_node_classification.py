"""Node classification on SBM_PATTERN / SBM_CLUSTER (benchmarking-gnns protocol).

    python main_SBMs_node_classification.py \
        --config configs/SBMs_node_clustering_AUTOGCN_CLUSTER.json

The SBM graphs are generated into --data_dir (default ./datasets) on first use.
"""

import sys

from train.interrupts import startup

with startup("stopped before training started"):  # Ctrl-C while torch loads
    from train.runner import main
    from train.tasks import SBM

if __name__ == "__main__":
    sys.exit(main(SBM, description=__doc__))

"""Node classification on SBM_PATTERN / SBM_CLUSTER (benchmarking-gnns protocol).

    python main_SBMs_node_classification.py \
        --config configs/SBMs_node_clustering_AUTOGCN_CLUSTER.json

The SBM graphs are generated into --data_dir (default ./datasets) on first use.
"""

from train.entry import run

if __name__ == "__main__":
    run("SBM", __doc__)

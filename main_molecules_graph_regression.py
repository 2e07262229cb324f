"""Graph regression on ZINC (12k subset): L1 loss, mean absolute error.

    python main_molecules_graph_regression.py \\
        --config configs/molecules_graph_regression_AUTOGCN_ZINC.json --data_dir DIR

DIR holds the benchmarking-gnns molecule pickles (train.pickle, val.pickle, test.pickle); a
missing split is reported and skipped. ``--data_source dgl`` downloads DGL's ZINCDataset instead.
"""

import sys

from train.interrupts import startup

with startup("stopped before training started"):  # Ctrl-C while torch loads
    from train.runner import main
    from train.tasks import ZINC

if __name__ == "__main__":
    sys.exit(main(ZINC, description=__doc__))

"""Graph regression on ZINC (12k subset): L1 loss, mean absolute error.

    python main_molecules_graph_regression.py \\
        --config configs/molecules_graph_regression_AUTOGCN_ZINC.json --data_dir DIR

DIR holds the benchmarking-gnns molecule pickles (train.pickle, val.pickle, test.pickle); a
missing split is reported and skipped. ``--data_source dgl`` downloads DGL's ZINCDataset instead.
"""

from train.entry import run

if __name__ == "__main__":
    run("ZINC", __doc__)

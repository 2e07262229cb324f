"""Full-batch node classification on one graph: PUBMED, SQUIRREL, ARXIV_YEAR, YELPCHI.

    python main_node_classification.py --config configs/node_classification_AUTOGCN_SQUIRREL.json \\
        --data_dir DIR --runs 5

DIR is the folder holding the dataset's files (docs/data.md says which).

Each run draws its own random split (60/20/20 PubMed, 2:1:1 the others); ``--split fixed`` uses
the published split files instead (run i uses split i).
"""

from train.entry import run

if __name__ == "__main__":
    run("NODE", __doc__)

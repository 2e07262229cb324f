"""Graph classification on MNIST / CIFAR10 superpixel graphs: cross-entropy, accuracy.

    python main_superpixels_graph_classification.py \\
        --config configs/superpixels_graph_classification_AUTOGCN_MNIST.json --data_dir DIR

DIR holds the raw images (MNIST idx files, or CIFAR-10's cifar-10-batches-py); the superpixel
graphs are built once into --cache_dir (default ~/.cache/autogcn/superpixels) and reused.
``--data_source dgl`` downloads DGL's prebuilt superpixel datasets instead.
"""

from train.entry import run

if __name__ == "__main__":
    run("SUPERPIXELS", __doc__)

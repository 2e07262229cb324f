"""PubMed (Planetoid citation graph): the raw files, or DGL's or PyG's download."""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch

from autogcn.graph import Graph
from data.common import DataError, one_line
from data.interop import download_dataset, from_dgl, from_pyg
from data.node_datasets import (
    NUM_CLASSES,
    NodeDataset,
    _find,
    _index,
    make_node_dataset,
    pyg_root,
    row_normalise,
)

PLANETOID_PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph")


class _PlanetoidUnpickler(pickle.Unpickler):
    """Reads the Planetoid pickles, whose sparse matrices name scipy's old private module
    ``scipy.sparse.csr`` (deprecated: scipy warns on every load, and 2.0 removes it)."""

    def find_class(self, module: str, name: str):
        if module.startswith("scipy.sparse.") and hasattr(sp, name):
            return getattr(sp, name)
        return super().find_class(module, name)


def read_planetoid(folder: str | os.PathLike, prefix: str = "pubmed") -> dict:
    """Reconstruct a Planetoid dataset from its ``ind.<prefix>.*`` files.

    Follows the reference reconstruction (Kipf & Welling, also used by DGL and PyG): the test
    rows of ``tx``/``ty`` are stored in sorted order and moved to the node ids listed in
    ``test.index``; features are row-normalised; labels are the argmax of the one-hot rows (a row
    without any label becomes ``-1``). The public split is the ``len(y)`` training nodes, the next
    500 nodes for validation and the test-index nodes for test.
    """
    folder = Path(folder)
    objs = {}
    try:
        for part in PLANETOID_PARTS:
            with open(folder / f"ind.{prefix}.{part}", "rb") as f:
                # The original files are Python 2 pickles: latin1 decodes their numpy buffers.
                objs[part] = _PlanetoidUnpickler(f, encoding="latin1").load()
        test_idx = np.loadtxt(folder / f"ind.{prefix}.test.index", dtype=np.int64, ndmin=1)
    except Exception as exc:  # truncated pickle, bad text, unreadable file: all unusable
        raise DataError(f"cannot read Planetoid files in {folder} ({one_line(exc)})") from exc
    test_sorted = np.sort(test_idx)

    tx, ty = sp.csr_matrix(objs["tx"]), np.asarray(objs["ty"])
    span = int(test_sorted[-1] - test_sorted[0] + 1)
    if span != tx.shape[0]:
        # Citeseer-style gaps (test ids without a row): pad with empty rows at their positions.
        pad_x = sp.lil_matrix((span, tx.shape[1]), dtype=np.float32)
        pad_x[test_sorted - test_sorted[0], :] = tx
        tx = pad_x.tocsr()
        pad_y = np.zeros((span, ty.shape[1]), dtype=ty.dtype)
        pad_y[test_sorted - test_sorted[0], :] = ty
        ty = pad_y

    allx = sp.csr_matrix(objs["allx"])
    features = sp.vstack([allx, tx]).tocsr()
    onehot = np.vstack([np.asarray(objs["ally"]), ty])
    n = features.shape[0]
    if test_sorted[-1] >= n or onehot.shape[0] != n:
        raise DataError(f"Planetoid files in {folder} are inconsistent (rows vs test.index)")
    # Row r of the stacked test block belongs to node test_idx[r]: new[test_idx] = old[sorted].
    perm = np.arange(n)
    perm[test_idx] = test_sorted
    features = features[perm]
    onehot = onehot[perm]
    labels = np.where(onehot.sum(axis=1) > 0, onehot.argmax(axis=1), -1)

    graph = objs["graph"]
    src = np.fromiter((u for u, nbrs in graph.items() for _ in nbrs), dtype=np.int64)
    dst = np.fromiter((v for nbrs in graph.values() for v in nbrs), dtype=np.int64)

    n_train = np.asarray(objs["y"]).shape[0]
    # Validation is the 500 nodes after the training ones (clipped for small test fixtures).
    val_end = min(n_train + 500, allx.shape[0])
    split = (_index(np.arange(n_train)), _index(np.arange(n_train, val_end)), _index(test_sorted))
    return {"features": row_normalise(features), "labels": labels.astype(np.int64),
            "num_classes": onehot.shape[1], "src": src, "dst": dst, "split": split}


def _converted(g: Graph, masks: Sequence, labels: np.ndarray, features: sp.spmatrix,
               num_classes: int) -> dict:
    """A downloaded PubMed (a converted graph, its split masks) as :func:`read_planetoid`'s."""
    return {"features": features, "labels": np.asarray(labels).reshape(-1).astype(np.int64),
            "num_classes": num_classes, "src": g.src.numpy(), "dst": g.dst.numpy(),
            "split": tuple(_index(torch.as_tensor(m).numpy().astype(bool)) for m in masks)}


def _pubmed_from_dgl(data_dir: str | os.PathLike | None) -> dict:
    """PubMed through DGL's built-in dataset (downloads the same Planetoid files)."""
    raw_dir = None if data_dir is None else str(data_dir)
    ds = download_dataset("dgl", "PubmedGraphDataset", "PUBMED with --data_source dgl",
                          raw_dir=raw_dir, verbose=False)
    g = from_dgl(ds[0])
    masks = [g.ndata[m] for m in ("train_mask", "val_mask", "test_mask")]
    # DGL already row-normalised the features
    return _converted(g, masks, g.ndata["label"].numpy(), sp.csr_matrix(g.ndata["feat"].numpy()),
                      int(ds.num_classes))


def _pubmed_from_pyg(data_dir: str | os.PathLike | None) -> dict:
    """PubMed through PyG's ``Planetoid`` (the same Planetoid files and reconstruction)."""
    data = download_dataset("pyg", "Planetoid", "PUBMED with --data_source pyg",
                            root=pyg_root(data_dir), name="PubMed")[0]
    g = from_pyg(data)
    # PyG keeps the raw TF-IDF values: normalise the rows as the raw path does.
    return _converted(g, (data.train_mask, data.val_mask, data.test_mask),
                      torch.as_tensor(data.y).numpy(),
                      row_normalise(sp.csr_matrix(g.ndata["feat"].numpy())), NUM_CLASSES["PUBMED"])


def load_pubmed(data_dir: str | os.PathLike | None, source: str = "raw") -> NodeDataset:
    """PubMed from the Planetoid raw files in ``data_dir`` (or ``data_dir/pubmed``), or
    (``source``) from DGL's ``PubmedGraphDataset`` or PyG's ``Planetoid`` (both download)."""
    files = [f"ind.pubmed.{p}" for p in PLANETOID_PARTS] + ["ind.pubmed.test.index"]
    folder = _find(data_dir, "pubmed", files) if source == "raw" else None
    if folder is not None:
        raw, where = read_planetoid(folder, "pubmed"), f"Planetoid raw files in {folder}"
    elif source == "pyg":
        raw, where = _pubmed_from_pyg(data_dir), "torch_geometric.datasets.Planetoid"
    elif source == "dgl":
        raw, where = _pubmed_from_dgl(data_dir), "dgl.data.PubmedGraphDataset"
    else:  # raw files only: a download happens only where the data source asks for one
        raise DataError(f"PUBMED: missing {', '.join(files)} in {data_dir} (or its pubmed/ "
                        "subfolder); copy the Planetoid raw files there, or download them with "
                        "--data_source pyg (pip install torch_geometric) or --data_source dgl "
                        "(DGL profile: bash scripts/setup.sh --dgl)")
    if int(raw["num_classes"]) != NUM_CLASSES["PUBMED"]:
        what = "ind.pubmed.ally/ty" if folder is not None else "labels"
        raise DataError(f"PUBMED: the {what} of {where} are one-hot over "
                        f"{raw['num_classes']} classes; PubMed has {NUM_CLASSES['PUBMED']}")
    # Planetoid's reconstruction gives a node without a one-hot label -1 (not from the file).
    return make_node_dataset(
        "PUBMED", where, (raw["src"], raw["dst"]), raw["labels"].shape[0], raw["features"],
        torch.from_numpy(raw["labels"]), splits=[raw["split"]], unlabelled=True,
        info={"features": "TF-IDF, row-normalised, sparse",
              "fixed_split": "public Planetoid split (20 per class train, 500 val, 1000 test)",
              "note": "PubMed has 3 classes; the paper's dataset table says 7"})

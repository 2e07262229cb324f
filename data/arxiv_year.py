"""Arxiv-year (ogbn-arxiv, labelled by publication year in five even quantiles, as LINKX)."""

from __future__ import annotations

import os

import numpy as np
import torch

from data.common import DataError, one_line
from data.node_datasets import NodeDataset, linkx_fixed_splits, make_node_dataset


def even_quantile_labels(values: np.ndarray, num_classes: int) -> np.ndarray:
    """Bucket ``values`` into ``num_classes`` classes at the k/num_classes quantiles (LINKX).

    Class k holds ``q_k <= v < q_{k+1}`` with ``q_0 = -inf``, ``q_C = +inf`` and ``q_k`` the
    ``np.nanquantile`` at ``k / C`` (linear interpolation); NaN values get ``-1``. Ties with a
    threshold go up, so with integer years the classes are only near-equal in size.
    """
    vals = np.asarray(values, dtype=np.float64).reshape(-1)
    qs = np.nanquantile(vals, [(k + 1) / num_classes for k in range(num_classes - 1)])
    # side="right" counts thresholds <= v: exactly LINKX's half-open intervals.
    labels = np.searchsorted(qs, vals, side="right").astype(np.int64)
    labels[np.isnan(vals)] = -1
    return labels


def load_arxiv_year(data_dir: str | os.PathLike | None, num_classes: int = 5,
                    source: str = "raw") -> NodeDataset:
    """Arxiv-year: ogbn-arxiv (via the optional ``ogb`` package), labels = year in 5 quantiles.

    The citation graph is symmetrised (LINKX's default); features are the 128-d dense ogb
    embeddings. LINKX's ``arxiv-year-splits.npy`` is used as ``fixed_splits`` when present in
    ``data_dir`` (or ``data_dir/splits``).
    """
    try:
        from ogb.nodeproppred import NodePropPredDataset
    except ImportError as exc:
        raise DataError(
            "ARXIV_YEAR needs the ogb package: pip install ogb (it then downloads ogbn-arxiv,"
            " ~80 MB, into data_dir)"
        ) from exc
    root = "dataset" if data_dir is None else str(data_dir)
    try:
        graph, _ = NodePropPredDataset(name="ogbn-arxiv", root=root)[0]
    except Exception as exc:  # ogb raises assorted errors when offline or on a bad archive
        raise DataError(
            f"ARXIV_YEAR: ogb could not load or download ogbn-arxiv into {root} ({one_line(exc)})"
        ) from exc
    n = int(graph["num_nodes"])
    edge_index = torch.as_tensor(np.asarray(graph["edge_index"]), dtype=torch.int64)
    labels = even_quantile_labels(np.asarray(graph["node_year"]).reshape(-1), num_classes)
    # a node without a year is -1 (even_quantile_labels), left out of every split
    return make_node_dataset(
        "ARXIV_YEAR", f"ogb ogbn-arxiv under {root}", (edge_index[0], edge_index[1]), n,
        torch.as_tensor(np.asarray(graph["node_feat"]), dtype=torch.float32),
        torch.from_numpy(labels), splits=linkx_fixed_splits("ARXIV_YEAR", data_dir, n),
        where=f"ogbn-arxiv under {root}", unlabelled=True, num_classes=num_classes,
        info={"labels": f"node_year in {num_classes} even-quantile classes (LINKX)",
              "features": "128-d ogb embeddings, dense, unnormalised"})

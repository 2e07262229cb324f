"""YelpChi (CARE-GNN's review graph, three relations merged)."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from data.common import DataError, one_line
from data.interop import download_dataset
from data.node_datasets import NodeDataset, _find, linkx_fixed_splits, make_node_dataset

YELP_RELATIONS = ("net_rsr", "net_rtr", "net_rur")
Relations = dict[str, tuple[Tensor, Tensor]]


def merge_relations(relations: Relations) -> tuple[Tensor, Tensor, dict[str, int]]:
    """The edge lists ``{name: (src, dst)}`` of several relations over the same nodes as one
    (int64) edge list, and each relation's edge count. Its symmetrised graph is the union of the
    edge sets, LINKX's (the ``homo`` adjacency of ``YelpChi.mat``)."""
    srcs = [torch.as_tensor(s, dtype=torch.int64).reshape(-1) for s, _ in relations.values()]
    dsts = [torch.as_tensor(d, dtype=torch.int64).reshape(-1) for _, d in relations.values()]
    src = torch.cat(srcs) if srcs else torch.zeros(0, dtype=torch.int64)
    dst = torch.cat(dsts) if dsts else torch.zeros(0, dtype=torch.int64)
    return src, dst, {name: int(s.numel()) for name, s in zip(relations, srcs, strict=True)}


def read_yelpchi_mat(path: str | os.PathLike) -> dict:
    """The ``YelpChi.mat`` of CARE-GNN / LINKX / DGL, read with scipy: ``relations``
    (``{name: (src, dst)}`` int64 for the three review relations), ``features`` float32 (N, 32),
    ``labels`` int64 (N,) and ``num_nodes``."""
    from scipy import io as sio

    try:
        mat = sio.loadmat(str(path))
        n = int(mat["features"].shape[0])
        relations = {}
        for name in YELP_RELATIONS:
            adj = sp.coo_matrix(mat[name])
            if adj.shape != (n, n):
                raise ValueError(f"{name} has shape {adj.shape} for {n} nodes")
            relations[name] = (torch.from_numpy(adj.row.astype(np.int64)),
                               torch.from_numpy(adj.col.astype(np.int64)))
        feats = mat["features"]
        feats = feats.toarray() if sp.issparse(feats) else np.asarray(feats)
        labels = np.asarray(mat["label"]).reshape(-1).astype(np.int64)
    except Exception as exc:  # scipy/key/shape errors alike mean a file we cannot use
        raise DataError(f"YELPCHI: cannot read {path} ({one_line(exc)})") from exc
    return {"relations": relations, "features": torch.from_numpy(feats.astype(np.float32)),
            "labels": torch.from_numpy(labels), "num_nodes": n}


def _yelpchi_from_dgl(data_dir: str | os.PathLike | None) -> dict:
    """YelpChi through DGL's ``FraudYelpDataset`` (downloads the same ``YelpChi.mat``)."""
    hg = download_dataset("dgl", "FraudYelpDataset", "YELPCHI with --data_source dgl",
                          raw_dir=None if data_dir is None else str(data_dir), verbose=False)[0]
    relations = {etype[1]: tuple(t.to(torch.int64) for t in hg.edges(etype=etype))
                 for etype in hg.canonical_etypes}
    return {"relations": relations, "features": hg.ndata["feature"].to(torch.float32),
            "labels": hg.ndata["label"].to(torch.int64), "num_nodes": hg.num_nodes()}


def load_yelpchi(data_dir: str | os.PathLike | None, source: str = "raw") -> NodeDataset:
    """YelpChi from ``YelpChi.mat`` in ``data_dir`` (or ``data_dir/yelp``), read with scipy, or
    (``source="dgl"``) ``dgl.data.FraudYelpDataset`` (downloads into ``data_dir``). The three
    review relations (R-U-R, R-T-R, R-S-R) are merged into one graph; the 32 features are kept
    raw, as LINKX does. LINKX's ``yelp-chi-splits.npy`` is used as ``fixed_splits`` when present
    in ``data_dir`` (or ``data_dir/splits``).
    """
    folder = _find(data_dir, "yelp", ["YelpChi.mat"]) if source == "raw" else None
    if folder is not None:
        raw, where = read_yelpchi_mat(folder / "YelpChi.mat"), str(folder / "YelpChi.mat")
    elif source == "dgl":
        raw, where = _yelpchi_from_dgl(data_dir), "dgl.data.FraudYelpDataset"
    else:  # raw files only: a download happens only where the data source asks for one
        raise DataError(f"YELPCHI: no YelpChi.mat in {data_dir} (or its yelp/ subfolder); copy "
                        "it there, or download it with --data_source dgl (DGL profile: bash "
                        "scripts/setup.sh --dgl)")
    src, dst, counts = merge_relations(raw["relations"])
    n = raw["num_nodes"]
    return make_node_dataset(
        "YELPCHI", where, (src, dst), n, raw["features"], raw["labels"],
        splits=linkx_fixed_splits("YELPCHI", data_dir, n),
        info={"relations": counts,
              "features": "32 handcrafted review features, raw (as LINKX)"})

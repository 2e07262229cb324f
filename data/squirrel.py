"""Squirrel (Wikipedia network, heterophilous) and Platonov et al. (2023)'s filtered Squirrel."""

from __future__ import annotations

import os
import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from autogcn.graph import Graph
from data.common import SPLITS, DataError, one_line
from data.interop import download_dataset, from_pyg
from data.node_datasets import (
    Ints,
    NodeDataset,
    _find,
    _index,
    load_linkx_splits,
    make_node_dataset,
    pyg_root,
)

SQUIRREL_FILE = "squirrel_directed.npz"
SQUIRREL_LINKX_SPLITS = "squirrel-splits.npy"


def _edge_pairs(edges: np.ndarray, where: str) -> np.ndarray:
    """The ``(E, 2)`` (source, target) rows of an npz ``edges`` array; a ``(2, E)`` array (PyG's
    edge_index layout) is transposed. Any other shape is a DataError: flattening it into pairs
    would join endpoints of different edges without a sign."""
    if edges.ndim == 2 and edges.shape[1] == 2:
        return edges
    if edges.ndim == 2 and edges.shape[0] == 2:
        return edges.T.copy()
    raise DataError(f"{where}: edges has shape {edges.shape}; expected (edges, 2) "
                    "(source, target) rows")


def _masks(arrays: dict, n: int, where: str) -> list[np.ndarray]:
    """The ``train/val/test_masks`` of a geom-gcn npz as boolean ``(splits, n)`` arrays, each
    checked to cover exactly the ``n`` nodes (0/1 integers are taken as booleans)."""
    masks = []
    for name in SPLITS:
        if f"{name}_masks" not in arrays:
            raise DataError(f"{where} has no {name}_masks (keys: {', '.join(sorted(arrays))})")
        m = np.atleast_2d(np.asarray(arrays[f"{name}_masks"]))
        if m.dtype != np.bool_:
            if m.dtype.kind not in "iu" or not np.isin(m, (0, 1)).all():
                raise DataError(f"{where}: {name}_masks holds {m.dtype} values other than 0/1; "
                                "expected boolean masks")
            m = m.astype(bool)
        if m.ndim != 2 or m.shape[1] != n:
            raise DataError(f"{where}: {name}_masks has shape {m.shape}; expected (splits, {n}) "
                            f"for the {n} nodes of node_features")
        masks.append(m)
    if len({m.shape[0] for m in masks}) != 1:
        raise DataError(f"{where}: train/val/test_masks hold {[m.shape[0] for m in masks]} "
                        "splits; expected the same number of each")
    return masks


def _squirrel_from_pyg(data_dir: str | os.PathLike | None) -> NodeDataset:
    """Squirrel through PyG's ``WikipediaNetwork(geom_gcn_preprocess=True)``: geom-gcn's release,
    the same data as ``squirrel_directed.npz`` (docs/data.md)."""
    data = download_dataset("pyg", "WikipediaNetwork", "SQUIRREL with --data_source pyg",
                            root=pyg_root(data_dir), name="squirrel",
                            geom_gcn_preprocess=True)[0]
    g = from_pyg(data)
    n = g.num_nodes()
    masks = [torch.as_tensor(m).reshape(n, -1).numpy().astype(bool)
             for m in (data.train_mask, data.val_mask, data.test_mask)]
    splits = [tuple(_index(m[:, i]) for m in masks) for i in range(masks[0].shape[1])]
    return make_node_dataset(
        "SQUIRREL", "torch_geometric.datasets.WikipediaNetwork (geom-gcn)", (g.src, g.dst), n,
        sp.csr_matrix(g.ndata["feat"].float().numpy()),
        torch.as_tensor(data.y).reshape(-1).long(), splits=splits,
        where="PyG's WikipediaNetwork squirrel", info={"features": "binary, sparse"})


def load_squirrel(data_dir: str | os.PathLike | None, source: str = "raw") -> NodeDataset:
    """Squirrel from ``squirrel_directed.npz`` in ``data_dir`` (or ``data_dir/squirrel``).

    The directed geom-gcn edge list is symmetrised (self-loops and duplicates dropped). The 10
    published masks become ``fixed_splits``; when LINKX's ``squirrel-splits.npy`` sits next to the
    npz it is compared with them and the outcome stored in ``info['linkx_splits_match']``.
    ``source="pyg"`` reads the same release through PyG's ``WikipediaNetwork`` instead.
    """
    if source == "pyg":
        return _squirrel_from_pyg(data_dir)
    folder = _find(data_dir, "squirrel", [SQUIRREL_FILE])
    if folder is None:
        raise DataError(
            f"SQUIRREL: {SQUIRREL_FILE} not found in {data_dir} (or its squirrel/ subfolder);"
            " get it from the geom-gcn / heterophily-benchmark releases (see data README), or"
            " use --data_source pyg (pip install torch_geometric; downloads it)"
        )
    where = str(folder / SQUIRREL_FILE)
    try:
        with np.load(where) as z:
            arrays = {k: z[k] for k in z.files}
        x, y = arrays["node_features"], np.asarray(arrays["node_labels"]).reshape(-1)
        n = x.shape[0]
        edges = np.asarray(arrays["edges"], dtype=np.int64)
        if y.dtype.kind == "f" and np.isfinite(y).all() and (y == np.round(y)).all():
            y = y.astype(np.int64)
        if y.dtype.kind not in "iu":
            raise ValueError(f"node_labels are {y.dtype}, not integer classes")
    except Exception as exc:  # bad zip, missing key or unreadable file: all unusable data
        raise DataError(f"SQUIRREL: cannot read {where}: {one_line(exc)}") from exc
    edges = _edge_pairs(edges, where)
    masks = _masks(arrays, n, where)
    splits = [tuple(_index(m[i]) for m in masks) for i in range(masks[0].shape[0])]
    info = {"features": "binary, sparse"}
    linkx = folder / SQUIRREL_LINKX_SPLITS
    if linkx.is_file():
        theirs = load_linkx_splits(linkx, n)
        info["linkx_splits_match"] = len(theirs) == len(splits) and all(
            torch.equal(a, b) for s, t in zip(theirs, splits) for a, b in zip(s, t, strict=True))
        if not info["linkx_splits_match"]:
            warnings.warn(f"{linkx} differs from the masks in the npz; using the npz masks",
                          stacklevel=2)
    return make_node_dataset("SQUIRREL", where, (edges[:, 0], edges[:, 1]), n, sp.csr_matrix(x),
                             torch.from_numpy(np.asarray(y, dtype=np.int64)),
                             splits=splits, info=info)


def outlink_groups(src: Ints, dst: Ints, labels: Ints,
                   num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Group ids of the nodes with the same set of out-neighbours *and* the same label in the
    directed edge list (repeated edges count once; equal keys, equal id), and every node's
    in-degree."""
    s, d = (torch.as_tensor(t).reshape(-1).numpy().astype(np.int64) for t in (src, dst))
    y = torch.as_tensor(labels).reshape(-1).numpy().astype(np.int64)
    out = sp.coo_matrix((np.ones(s.size), (s, d)), shape=(num_nodes, num_nodes)).tocsr()
    out.sum_duplicates()
    out.sort_indices()
    ind = out.indices.astype(np.int64)
    keys = [(ind[out.indptr[v]:out.indptr[v + 1]].tobytes(), int(y[v])) for v in range(num_nodes)]
    seen: dict[tuple[bytes, int], int] = {}
    groups = np.fromiter((seen.setdefault(k, len(seen)) for k in keys), dtype=np.int64,
                         count=num_nodes)
    return groups, np.bincount(d, minlength=num_nodes)


def outlink_copies(src: Ints, dst: Ints, labels: Ints, num_nodes: int) -> np.ndarray:
    """Nodes that :func:`filtered_squirrel` removes (boolean mask), from the *directed* edges.

    Node ``v`` is a copy when it has no incoming edge and some node ``u`` with an incoming edge
    has exactly ``v``'s set of out-neighbours and ``v``'s label (:func:`outlink_groups`). On the
    directed Wikipedia graph: a page nothing links to that links to exactly what a linked-to page
    of the same class links to. A self-loop is an in- and an out-edge.
    """
    gid, indeg = outlink_groups(src, dst, labels, num_nodes)
    linked = np.zeros(int(gid.max()) + 1 if gid.size else 0, bool)
    linked[gid[indeg > 0]] = True
    return (indeg == 0) & linked[gid]


def induced_node_dataset(ds: NodeDataset, keep: np.ndarray, name: str, info: dict) -> NodeDataset:
    """``ds`` restricted to the nodes with ``keep`` True, renumbered in their order, named
    ``name``, ``info`` added: the induced subgraph (and edge list as given), the kept feature rows
    and labels, and every fixed split restricted to kept nodes."""
    keep = np.asarray(keep, dtype=bool)
    new_id = np.full(ds.num_nodes, -1, dtype=np.int64)
    new_id[keep] = np.arange(int(keep.sum()))
    idx = torch.from_numpy(np.flatnonzero(keep))
    remap = torch.from_numpy(new_id)

    def edges(src: Tensor, dst: Tensor) -> tuple[Tensor, Tensor]:
        both = (remap[src] >= 0) & (remap[dst] >= 0)
        return remap[src[both]], remap[dst[both]]

    feats = ds.features
    feats = feats.index_select(0, idx).coalesce() if feats.is_sparse else feats[idx]
    splits = None
    if ds.fixed_splits is not None:
        splits = [tuple(torch.sort(remap[t[remap[t] >= 0]]).values for t in split)
                  for split in ds.fixed_splits]
    return replace(
        ds, graph=Graph(*edges(ds.graph.src, ds.graph.dst), int(keep.sum())), features=feats,
        labels=ds.labels[idx], fixed_splits=splits, name=name, info={**ds.info, **info},
        edges_as_given=None if ds.edges_as_given is None else edges(*ds.edges_as_given))


def filtered_squirrel(ds: NodeDataset,
                      directed_edges: tuple[Ints, Ints] | None = None) -> NodeDataset:
    """Platonov et al. (2023)'s filtered Squirrel, ``SQUIRREL_FILTERED``: ``ds`` without the
    nodes of :func:`outlink_copies` on the directed edge list (``directed_edges``, else
    ``ds.edges_as_given``). On ``squirrel_directed.npz`` it is node by node their released
    ``squirrel_filtered.npz`` (2223 of 5201 nodes, 46,998 undirected edges); why this rule and
    not the paper's wording: docs/data.md."""
    if directed_edges is None:
        directed_edges = ds.edges_as_given
    if directed_edges is None:
        raise DataError(f"{ds.name}: filtered_squirrel needs the directed edge list "
                        f"({SQUIRREL_FILE} as stored); this dataset does not keep it")
    removed = outlink_copies(*directed_edges, ds.labels, ds.num_nodes)
    note = {"filtered": "nodes without in-edges whose out-neighbour set and label equal those "
                        "of a node with in-edges removed (Platonov et al. 2023's filtered "
                        "Squirrel)",
            "filtered_from_nodes": ds.num_nodes, "filtered_removed_nodes": int(removed.sum())}
    return induced_node_dataset(ds, ~removed, "SQUIRREL_FILTERED", note)


def load_squirrel_filtered(data_dir: str | os.PathLike | None,
                           source: str = "raw") -> NodeDataset:
    """:func:`filtered_squirrel` of :func:`load_squirrel`."""
    return filtered_squirrel(load_squirrel(data_dir, source))

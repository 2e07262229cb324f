"""Single-graph node-classification datasets (PubMed, Squirrel, Arxiv-year, YelpChi): the
:class:`NodeDataset` every loader returns, the one path from a source's edges, features and labels
to a checked dataset (:func:`make_node_dataset`), and the splits (:func:`get_split`). Conventions,
sources and split modes: docs/data.md, "Single-graph node classification".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from autogcn.graph import Graph
from data.common import DEFAULT_DATA_ROOT, SPLITS, DataError, check_finite, check_range

NODE_DATASETS = ("PUBMED", "SQUIRREL", "SQUIRREL_FILTERED", "ARXIV_YEAR", "YELPCHI")
# Which ``source`` values each dataset accepts (the first is the default).
NODE_SOURCES: dict[str, tuple[str, ...]] = {
    "PUBMED": ("raw", "dgl", "pyg"), "SQUIRREL": ("raw", "pyg"),
    "SQUIRREL_FILTERED": ("raw", "pyg"), "ARXIV_YEAR": ("raw",), "YELPCHI": ("raw", "dgl")}
# Random-split ratios per dataset: PubMed as in the paper, the others 2:1:1 as in LINKX.
SPLIT_RATIOS: dict[str, tuple[float, float, float]] = {
    name: (0.6, 0.2, 0.2) if name == "PUBMED" else (0.5, 0.25, 0.25) for name in NODE_DATASETS}
# Classes of each dataset, by definition: labels outside them are an error, never a wider model.
NUM_CLASSES = {"PUBMED": 3, "SQUIRREL": 5, "SQUIRREL_FILTERED": 5, "ARXIV_YEAR": 5, "YELPCHI": 2}

Split = tuple[Tensor, Tensor, Tensor]
Ints = Tensor | np.ndarray  # node ids or labels, as torch or numpy integers
# LINKX ships fixed splits for these two; they are used when the user drops them into data_dir.
LINKX_SPLIT_FILES = {"ARXIV_YEAR": "arxiv-year-splits.npy", "YELPCHI": "yelp-chi-splits.npy"}


@dataclass
class NodeDataset:
    """One graph with node features, node labels and (optionally) published splits."""

    name: str
    graph: Graph
    features: Tensor
    labels: Tensor
    num_classes: int
    fixed_splits: list[Split] | None = None
    info: dict = field(default_factory=dict)
    # the source's edge list before symmetrisation (src -> dst as stored), for edge_direction
    edges_as_given: tuple[Tensor, Tensor] | None = None

    @property
    def num_nodes(self) -> int:
        return self.graph.num_nodes()

    @property
    def in_dim(self) -> int:
        return int(self.features.shape[1])


def build_graph(src: Ints, dst: Ints, num_nodes: int) -> tuple[Graph, dict]:
    """The symmetric int64 :class:`Graph` of any (possibly directed) edge list: both directions
    of every edge, without self-loops or duplicates, sorted by (src, dst); and the counts of what
    was dropped (for ``info``)."""
    src = torch.as_tensor(src, dtype=torch.int64).reshape(-1)
    dst = torch.as_tensor(dst, dtype=torch.int64).reshape(-1)
    if src.shape != dst.shape:
        raise DataError(f"edge lists differ in length: {src.numel()} sources, "
                        f"{dst.numel()} targets")
    if src.numel() and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= num_nodes):
        raise DataError(f"edge endpoint outside [0, {num_nodes}): the edge list does not fit")
    loops = src == dst
    src, dst = src[~loops], dst[~loops]
    # One int64 key per ordered pair: N^2 stays far below 2^63 for every graph here
    # (ogbn-arxiv: 1.7e5^2 ~ 3e10), and torch.unique both dedupes and sorts.
    keys = torch.unique(torch.cat([src * num_nodes + dst, dst * num_nodes + src]))
    g = Graph(keys // num_nodes, keys % num_nodes, num_nodes)
    return g, {
        "input_edges": int(loops.numel()),
        "self_loops_removed": int(loops.sum()),
        # Distinct directed non-loop pairs of the input, before adding reverse edges.
        "input_edges_unique": int(torch.unique(src * num_nodes + dst).numel()),
        "directed_edges": g.num_edges(),
        "undirected_edges": g.num_edges() // 2,
    }


def make_node_dataset(name: str, source: str, given: tuple[Ints, Ints], num_nodes: int,
                      features: Tensor | sp.spmatrix, labels: Tensor, *, info: dict,
                      splits: list[Split] | None = None, where: str | None = None,
                      unlabelled: bool = False, num_classes: int | None = None) -> NodeDataset:
    """The path every loader ends in: the symmetrised graph of the edge list ``given`` (which is
    kept, for ``edge_direction``), the features (a scipy matrix becomes sparse COO), labels over
    the dataset's classes and published ``splits``, checked once (:func:`check_node_dataset`,
    naming ``where``, by default ``source``). ``info``: the source, the graph's counts, then
    ``info``."""
    given = (torch.as_tensor(given[0], dtype=torch.int64),
             torch.as_tensor(given[1], dtype=torch.int64))
    g, stats = build_graph(*given, num_nodes)
    ds = NodeDataset(name, g, to_torch_sparse(features) if sp.issparse(features) else features,
                     labels, NUM_CLASSES[name] if num_classes is None else num_classes, splits,
                     {"source": source, **stats, **info}, given)
    return check_node_dataset(ds, where or source, unlabelled)


def to_torch_sparse(matrix: sp.spmatrix | np.ndarray) -> Tensor:
    """A coalesced float32 torch sparse COO tensor from a scipy matrix or dense array."""
    coo = sp.coo_matrix(matrix, dtype=np.float32)
    indices = torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64))
    values = torch.from_numpy(coo.data.astype(np.float32))
    return torch.sparse_coo_tensor(indices, values, coo.shape, check_invariants=True).coalesce()


def row_normalise(matrix: sp.spmatrix) -> sp.csr_matrix:
    """Each row divided by its sum (all-zero rows stay zero), as Planetoid loaders do."""
    csr = sp.csr_matrix(matrix, dtype=np.float64)
    sums = np.asarray(csr.sum(axis=1)).reshape(-1)
    inv = np.zeros_like(sums)
    np.divide(1.0, sums, out=inv, where=sums != 0)
    return sp.csr_matrix(sp.diags(inv) @ csr, dtype=np.float32)


def _index(mask_or_idx: np.ndarray | Sequence[int] | Tensor) -> Tensor:
    """Sorted int64 index tensor from a boolean mask or an index list."""
    arr = np.asarray(mask_or_idx)
    if arr.dtype == np.bool_:
        arr = np.flatnonzero(arr)
    return torch.from_numpy(np.sort(arr.astype(np.int64)))


def _find(data_dir: str | os.PathLike | None, subdir: str, names: Sequence[str]) -> Path | None:
    """The folder holding every file in ``names``: ``data_dir``, ``data_dir/subdir`` or DGL's
    download folder ``data_dir/subdir_<url hash>``."""
    if data_dir is None:
        return None
    base = Path(data_dir).expanduser()
    for folder in (base, base / subdir, *sorted(base.glob(f"{subdir}_*"))):
        if all((folder / n).is_file() for n in names):
            return folder
    return None


def load_linkx_splits(path: str | os.PathLike, num_nodes: int) -> list[Split]:
    """Splits from a LINKX ``*-splits.npy`` file (array of dicts 'train'/'valid'/'test')."""
    try:
        raw = np.load(path, allow_pickle=True)
        splits = [(_index(s["train"]), _index(s["valid"]), _index(s["test"])) for s in raw]
    except Exception as exc:  # any malformed file: pickle, key or shape errors alike
        raise DataError(f"cannot read LINKX splits {path}: {exc}") from exc
    check_fixed_splits(splits, num_nodes, f"LINKX splits {path}")
    return splits



def check_fixed_splits(splits: Sequence[Split], num_nodes: int, where: str,
                       labels: Tensor | None = None) -> None:
    """Every published split: node ids in range, train/val/test disjoint, a non-empty training
    part, and (given ``labels``) only labelled nodes. DataError naming the split and the node."""
    for r, split in enumerate(splits):
        for name, idx in zip(SPLITS, split, strict=True):
            check_range(idx, 0, num_nodes, where, "node id", item=f"split {r}'s {name} entry")
        if split[0].numel() == 0:
            raise DataError(f"{where}: fixed split {r} has no training nodes")
        owner = torch.full((num_nodes,), -1, dtype=torch.int64)
        for k, idx in enumerate(split):
            clash = (owner[idx] >= 0).nonzero()
            if clash.numel():
                node = int(idx[clash[0, 0]])
                raise DataError(f"{where}: fixed split {r}: node {node} is in both "
                                f"{SPLITS[int(owner[node])]} and {SPLITS[k]}")
            dup = idx.numel() - torch.unique(idx).numel()
            if dup:
                raise DataError(f"{where}: fixed split {r} lists {dup} {SPLITS[k]} "
                                "node(s) twice")
            owner[idx] = k
            unlabelled = (labels[idx] < 0).nonzero() if labels is not None else idx[:0]
            if unlabelled.numel():
                raise DataError(f"{where}: fixed split {r}'s {SPLITS[k]} part holds node "
                                f"{int(idx[unlabelled[0, 0]])}, which has no label")


def check_node_dataset(ds: NodeDataset, where: str, unlabelled: bool = False) -> NodeDataset:
    """``ds`` after one vectorised check of its values: one label per node, labels in the
    dataset's ``num_classes`` (``-1`` = no label only where the source itself produces it,
    ``unlabelled=True``), finite features with one row per node, valid fixed splits."""
    n, labels, feats = ds.num_nodes, ds.labels, ds.features
    if labels.dim() != 1 or labels.numel() != n:
        raise DataError(f"{where}: {labels.numel()} labels for {n} nodes")
    check_range(labels, -1 if unlabelled else 0, ds.num_classes, where, "label", item="node",
                note=f" ({ds.name} has {ds.num_classes} classes)")
    # Checked on the whole labelled set, not on one run's training split: that split depends on
    # the seed, while one distinct label in the file leaves nothing to classify in any run.
    present = torch.unique(labels[labels >= 0])
    if present.numel() < 2:
        raise DataError(f"{where}: the labelled nodes hold {present.numel()} distinct label(s) "
                        f"{present.tolist()}; classification needs at least 2 classes")
    if feats.dim() != 2 or feats.shape[0] != n:
        raise DataError(f"{where}: features of shape {tuple(feats.shape)} for {n} nodes")
    if feats.is_sparse:  # the stored values, row by row, each row holding its nonzeros
        values = feats.coalesce()
        check_finite(values.values(), where, "a feature", item="node",
                     sizes=torch.bincount(values.indices()[0], minlength=n))
    else:
        check_finite(feats, where, "a feature", item="node")
    if ds.fixed_splits:
        check_fixed_splits(ds.fixed_splits, n, where, labels)
    return ds


def check_split_sizes(ds: NodeDataset, mode: str = "random",
                      ratios: Sequence[float] | None = None) -> None:
    """DataError, before any run starts, when a run's split would have no training nodes (or
    none for a validation/test fraction above 0): the sizes depend on the node count and the
    ratios only, not on the seed."""
    if mode == "fixed":
        if not ds.fixed_splits:
            raise DataError(f"{ds.name} has no published fixed splits: use --split random")
        return
    ratios = tuple(ratios) if ratios else SPLIT_RATIOS.get(ds.name, SPLIT_RATIOS["SQUIRREL"])
    n = int((ds.labels >= 0).sum())
    sizes = _split_sizes(n, ratios)
    if mode == "balanced" and int(round(ratios[0] * n / ds.num_classes)) == 0:
        sizes = (0, *sizes[1:])
    for name, ratio, size in zip(SPLITS, ratios, sizes, strict=True):
        if size == 0 and (ratio > 0 or name == "train"):
            raise DataError(f"{ds.name}: split ratio {name} {ratio:g} gives 0 of its {n} "
                            f"labelled nodes; use a larger {name} fraction (--split_ratio)")


def _split_sizes(n: int, ratios: Sequence[float]) -> tuple[int, int, int]:
    """LINKX's sizes: ``floor(n * ratio)`` for train and val, the rest for test."""
    # The epsilon guards against products like 0.29 * 100 = 28.999999999999996.
    n_train = int(n * ratios[0] + 1e-9)
    n_val = int(n * ratios[1] + 1e-9)
    return n_train, n_val, n - n_train - n_val


# --------------------------------------------------------------------------------------------
# Splits
# --------------------------------------------------------------------------------------------


def random_split(num_nodes: int, ratios: tuple[float, float, float], seed: int,
                 labels: Tensor | None = None) -> Split:
    """A seeded random (train, val, test) split of the labelled nodes.

    Sizes follow LINKX: ``floor(n * ratio)`` for train and val, the rest for test, so the three
    are disjoint and cover every node whose label is not ``-1``. Index tensors come back sorted.
    """
    if len(ratios) != 3 or min(ratios) < 0 or abs(sum(ratios) - 1.0) > 1e-6:
        raise ValueError(f"ratios must be three non-negative numbers summing to 1, got {ratios}")
    nodes = torch.arange(num_nodes)
    if labels is not None:
        nodes = nodes[torch.as_tensor(labels).reshape(-1) >= 0]
    n = nodes.numel()
    gen = torch.Generator().manual_seed(int(seed))
    perm = nodes[torch.randperm(n, generator=gen)]
    n_train, n_val, _ = _split_sizes(n, ratios)
    parts = (perm[:n_train], perm[n_train : n_train + n_val], perm[n_train + n_val :])
    return tuple(torch.sort(p).values for p in parts)  # type: ignore[return-value]


def balanced_split(labels: Tensor | np.ndarray, ratios: Sequence[float], seed: int,
                   num_classes: int) -> Split:
    """The successors' "dense" split (GPR-GNN, BernNet, ChebNetII, JacobiConv's
    ``random_planetoid_splits``): with ``n`` labelled nodes and ``C`` classes (the dataset's
    count, empty classes included), each class gives ``round(ratios[0] * n / C)`` random nodes
    to training (all of its nodes if it has fewer), then ``round(ratios[1] * n)`` validation
    nodes are drawn uniformly from the rest; the remainder is the test set (``ratios[2]`` only
    documents it). The draws follow BernNet's and ChebNetII's code step by step (numpy
    ``RandomState(seed).choice`` per class in class order, then on the sorted rest), so a seed
    gives their split. Unlabelled nodes (``-1``) are in no part; index tensors come back sorted.
    """
    if len(ratios) != 3 or min(ratios) < 0 or abs(sum(ratios) - 1.0) > 1e-6:
        raise ValueError(f"ratios must be three non-negative numbers summing to 1, got {ratios}")
    y = np.asarray(torch.as_tensor(labels).reshape(-1).cpu().numpy())
    labelled = np.flatnonzero(y >= 0)
    n = labelled.size
    per_class = int(round(ratios[0] * n / num_classes))
    n_val = int(round(ratios[1] * n))
    rng = np.random.RandomState(int(seed) % 2**32)
    train: list[int] = []
    for c in range(num_classes):
        members = np.flatnonzero(y == c)  # a smaller class gives all, with no draw
        take = members if members.size < per_class else rng.choice(members, per_class, False)
        train.extend(take.tolist())
    rest = np.setdiff1d(labelled, np.asarray(train, dtype=np.int64))
    val = rng.choice(rest, min(n_val, rest.size), replace=False)
    test = np.setdiff1d(rest, val)
    parts = (np.asarray(train, dtype=np.int64), val.astype(np.int64), test.astype(np.int64))
    return tuple(torch.sort(torch.from_numpy(p)).values for p in parts)  # type: ignore[return-value]


def get_split(ds: NodeDataset, run: int, seed: int, mode: str = "random",
              ratios: Sequence[float] | None = None) -> Split:
    """The split of one run.

    ``"random"``: :func:`random_split` with ``ratios`` (train, val, test; default the dataset's,
    :data:`SPLIT_RATIOS`), seeded by ``seed`` alone (the protocol draws one seed per run, so
    ``run`` is not mixed in). ``"balanced"``: :func:`balanced_split` with ``ratios``, seeded the
    same way. ``"fixed"``: the published split ``fixed_splits[run % len(fixed_splits)]``
    (Squirrel's: the 10 geom-gcn 48/32/20 splits).
    """
    if mode in ("random", "balanced"):
        ratios = tuple(ratios) if ratios else SPLIT_RATIOS.get(ds.name, SPLIT_RATIOS["SQUIRREL"])
        if mode == "balanced":
            return balanced_split(ds.labels, ratios, seed, ds.num_classes)
        return random_split(ds.num_nodes, ratios, seed, ds.labels)
    if mode == "fixed":
        if not ds.fixed_splits:
            raise DataError(f"{ds.name} has no published fixed splits: use mode='random'")
        return ds.fixed_splits[run % len(ds.fixed_splits)]
    raise ValueError(f"unknown split mode {mode!r}: use one of {SPLIT_MODES}")


EDGE_DIRECTIONS = ("symmetrised", "as_given")
SPLIT_MODES = ("random", "balanced", "fixed")


def with_edge_direction(ds: NodeDataset, direction: str = "symmetrised") -> NodeDataset:
    """``ds`` on its symmetrised graph (the loaders' default: the paper calls these graphs
    undirected) or on the source's edge list ``"as_given"`` — each stored edge ``u → v`` once
    as stored, self-loops and repeats included, as the authors' release built it (in-degree
    normalisation then leaves nodes without stored in-edges without messages)."""
    if direction == "symmetrised":
        return ds
    if direction != "as_given":
        raise ValueError(f"edge_direction must be one of {EDGE_DIRECTIONS}, got {direction!r}")
    if ds.edges_as_given is None:
        raise DataError(f"{ds.name}: this source does not keep its edge list as given")
    g = Graph(*ds.edges_as_given, ds.num_nodes)
    info = {**ds.info, "edge_direction": "as_given", "directed_edges": g.num_edges(),
            "self_loops": int((g.src == g.dst).sum()),
            "nodes_without_in_edges": int((g.in_degrees() == 0).sum())}
    return replace(ds, graph=g, info=info)


def with_row_normalised_features(ds: NodeDataset) -> NodeDataset:
    """``ds`` with each node's features divided by their sum where that sum exceeds 1: PyG's
    ``NormalizeFeatures`` (``x / max(rowsum, 1)``), which the successors' code applies to every
    dataset. Rows summing to at most 1 (PubMed's row-normalised TF-IDF, empty rows) stay as
    they are; sparse features stay sparse."""
    x = ds.features
    if x.is_sparse:
        x = x.coalesce()
        rows = x.indices()[0]
        sums = torch.zeros(x.shape[0], dtype=x.dtype).index_add_(0, rows, x.values())
        scaled = x.values() / sums.clamp(min=1)[rows]
        features = torch.sparse_coo_tensor(x.indices(), scaled, x.shape,
                                           check_invariants=True).coalesce()
    else:
        features = x / x.sum(dim=1, keepdim=True).clamp(min=1)
    info = {**ds.info, "feature_normalisation": "rows divided by max(row sum, 1)"}
    return replace(ds, features=features, info=info)


def pyg_root(data_dir: str | os.PathLike | None) -> str:
    """Where PyG's downloads go: ``<data_dir>/pyg``."""
    base = DEFAULT_DATA_ROOT if data_dir is None else data_dir
    return str(Path(base).expanduser() / "pyg")


def linkx_fixed_splits(name: str, data_dir: str | os.PathLike | None, n: int) -> list | None:
    """LINKX's fixed splits of ``name`` where the user dropped its file into ``data_dir``."""
    folder = _find(data_dir, "splits", [LINKX_SPLIT_FILES[name]])
    return None if folder is None else load_linkx_splits(folder / LINKX_SPLIT_FILES[name], n)


if __name__ == "__main__":  # it printed statistics once; scripts/diagnose.py does that now
    from data.common import retired_command

    retired_command("data.node_datasets", "--dataset PUBMED")

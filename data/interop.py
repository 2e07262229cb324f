"""Where graphs cross the project's edge: DGL and PyG graphs and datasets.

DGL and PyG are optional: nothing here imports them at module level, and a missing one is a
one-line :class:`MissingDependency` naming its install. What each adapter keeps: docs/data.md,
"DGL and PyG". Graph files on disk are in :mod:`data.files`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import torch

from autogcn.graph import Graph
from data.common import SPLITS, DataError, one_line

DGL_HINT = ("it is in the DGL profile: bash scripts/setup.sh --dgl, then run with "
            ".venv-dgl/bin/python")
PYG_HINT = "pip install torch_geometric"


class MissingDependency(DataError, ImportError):
    """An optional package (DGL, PyG) is needed for what was asked and is not installed."""


def _require(module: str, purpose: str, hint: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(
            f"{purpose} needs {module.split('.')[0]}, which this environment does not have; "
            f"{hint}") from exc
    except Exception as exc:  # installed but broken (missing shared library, ABI mismatch)
        raise MissingDependency(
            f"{purpose} needs {module.split('.')[0]}, which failed to import ({one_line(exc)}); "
            f"{hint}") from exc


def require_dgl(purpose: str = "this") -> ModuleType:
    """``import dgl`` (with ``dgl.data``), or a one-line :class:`MissingDependency`. The package
    comes first: a submodule already imported is found even where the package is blocked."""
    dgl = _require("dgl", purpose, DGL_HINT)
    _require("dgl.data", purpose, DGL_HINT)
    return dgl


def require_pyg(purpose: str = "this") -> ModuleType:
    """``import torch_geometric.datasets``, or a one-line :class:`MissingDependency` saying
    ``pip install torch_geometric``."""
    _require("torch_geometric", purpose, PYG_HINT)
    return _require("torch_geometric.datasets", purpose, PYG_HINT)


def download_dataset(package: str, cls: str, purpose: str, offline: str = "",
                     **kwargs: Any) -> Any:
    """``dgl.data.<cls>(**kwargs)`` (``package`` "dgl") or ``torch_geometric.datasets.<cls>``
    ("pyg"): a dataset that downloads on first use. Any failure (offline, a blocked or corrupt
    download) becomes one :class:`DataError` naming the call; ``offline`` says what to use
    instead. A missing package keeps its own one-line message."""
    module = require_dgl(purpose).data if package == "dgl" else require_pyg(purpose)
    what = f"{module.__name__}.{cls}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    hint = f"; offline, {offline}" if offline else ""
    if not hasattr(module, cls):
        raise DataError(f"{module.__name__}.{cls} does not exist in this {package} version{hint}")
    try:
        return getattr(module, cls)(**kwargs)
    except DataError:
        raise
    except Exception as exc:  # network, HTTP, archive and library errors all mean "no data"
        raise DataError(f"{what} failed ({one_line(exc)}); it downloads the data, which needs "
                        f"internet{hint}") from exc


def dataset_splits(package: str, cls: str, purpose: str, offline: str, max_graphs: int | None,
                   **kwargs: Any) -> Iterator[tuple[str, list]]:
    """Train, val and test of :func:`download_dataset`, each as its first ``max_graphs`` samples
    (None: all)."""
    key = "mode" if package == "dgl" else "split"  # DGL's keyword, which calls val "valid"
    for split in SPLITS:
        name = "valid" if package == "dgl" and split == "val" else split
        ds = download_dataset(package, cls, purpose, offline, **kwargs, **{key: name})
        n = len(ds) if max_graphs is None else min(int(max_graphs), len(ds))
        yield split, [ds[i] for i in range(n)]


# --------------------------------------------------------------------------------------------
# DGL
# --------------------------------------------------------------------------------------------


def from_dgl(g: Any) -> Graph:
    """A :class:`Graph` with the edges, node/edge features and batch counts of a homogeneous
    DGL graph (ids become int64; feature tensors are shared, not copied)."""
    if len(g.ntypes) != 1 or len(g.canonical_etypes) != 1:
        raise ValueError(f"from_dgl converts homogeneous graphs; this one has node types "
                         f"{g.ntypes} and edge types {g.canonical_etypes}")
    src, dst = g.edges()
    return Graph(src.to(torch.int64), dst.to(torch.int64), g.num_nodes(),
                 ndata=dict(g.ndata.items()), edata=dict(g.edata.items()),
                 batch_num_nodes=g.batch_num_nodes().to(torch.int64),
                 batch_num_edges=g.batch_num_edges().to(torch.int64))


def to_dgl(g: Graph) -> Any:
    """The :class:`Graph` ``g`` as a ``dgl.DGLGraph`` (int64 ids, same features and batch
    counts). Needs DGL (the DGL profile)."""
    dgl = require_dgl("data.interop.to_dgl")
    h = dgl.graph((g.src, g.dst), num_nodes=g.num_nodes(), idtype=torch.int64,
                  device=g.device)
    for key, value in g.ndata.items():
        h.ndata[key] = value
    for key, value in g.edata.items():
        h.edata[key] = value
    h.set_batch_num_nodes(g.batch_num_nodes())
    h.set_batch_num_edges(g.batch_num_edges())
    return h


# --------------------------------------------------------------------------------------------
# PyG
# --------------------------------------------------------------------------------------------


def _attr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except (KeyError, AttributeError):  # PyG storages raise on some missing keys
        return None


def from_pyg(data: Any) -> Graph:
    """A :class:`Graph` from a PyG ``Data``/``Batch`` (or any object with its attributes).

    ``x`` -> ``ndata['feat']``, ``pos`` -> ``ndata['pos']``, ``edge_attr`` -> ``edata['feat']``
    (tensors shared, not copied); a batch (``ptr`` or ``batch``) keeps its member graphs. Edges of
    a batch are put in member order (stable) if they are not already.
    """
    edge_index = _attr(data, "edge_index")
    if edge_index is None:
        src = dst = torch.zeros(0, dtype=torch.int64)
    else:
        edge_index = torch.as_tensor(edge_index)
        if edge_index.dim() != 2 or edge_index.shape[0] != 2:
            raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
        src, dst = edge_index[0].to(torch.int64), edge_index[1].to(torch.int64)
    x, pos, edge_attr = _attr(data, "x"), _attr(data, "pos"), _attr(data, "edge_attr")
    num_nodes = _attr(data, "num_nodes")
    if num_nodes is None:
        num_nodes = x.shape[0] if x is not None else None
    ndata = {k: torch.as_tensor(v) for k, v in (("feat", x), ("pos", pos)) if v is not None}
    edata = {"feat": torch.as_tensor(edge_attr)} if edge_attr is not None else {}

    batch_nodes = batch_edges = None
    ptr, batch = _attr(data, "ptr"), _attr(data, "batch")
    if ptr is not None or batch is not None:
        if ptr is not None:
            ptr = torch.as_tensor(ptr, dtype=torch.int64)
            batch_nodes = ptr[1:] - ptr[:-1]
            if num_nodes is None:
                num_nodes = int(ptr[-1])
            node_graph = torch.repeat_interleave(torch.arange(batch_nodes.numel()), batch_nodes)
        else:
            node_graph = torch.as_tensor(batch, dtype=torch.int64)
            num_graphs = _attr(data, "num_graphs")
            size = int(num_graphs) if num_graphs is not None else (
                int(node_graph.max()) + 1 if node_graph.numel() else 0)
            batch_nodes = torch.bincount(node_graph, minlength=size)
            if bool((node_graph[1:] < node_graph[:-1]).any()):
                raise ValueError("the batch vector is not sorted: nodes of a member graph "
                                 "must be contiguous")
        if num_nodes is None:
            num_nodes = node_graph.numel()
        if int(batch_nodes.sum()) != int(num_nodes):
            raise ValueError(f"the batch holds {int(batch_nodes.sum())} nodes but the graph "
                             f"{int(num_nodes)}")
        edge_graph = node_graph[src]
        if not torch.equal(edge_graph, node_graph[dst]):
            raise ValueError("an edge joins two member graphs of the batch")
        if edge_graph.numel() > 1 and bool((edge_graph[1:] < edge_graph[:-1]).any()):
            order = torch.sort(edge_graph, stable=True).indices
            src, dst, edge_graph = src[order], dst[order], edge_graph[order]
            edata = {k: v[order] for k, v in edata.items()}
        batch_edges = torch.bincount(edge_graph, minlength=batch_nodes.numel())
    return Graph(src, dst, None if num_nodes is None else int(num_nodes), ndata=ndata,
                 edata=edata, batch_num_nodes=batch_nodes, batch_num_edges=batch_edges)

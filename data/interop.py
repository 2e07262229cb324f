"""Where graphs cross the project's edge: DGL and PyG graphs, and graph files on disk.

Adapters (DGL and PyG are optional; nothing here imports them at module level):

* :func:`from_dgl` turns a homogeneous ``dgl.DGLGraph`` (single or batched) into a
  :class:`~data.graph.Graph`: its edges (int64), every ``ndata``/``edata`` tensor under the same
  key, and the per-graph node and edge counts of a batch.
* :func:`to_dgl` goes the other way (same edges, features and batch counts). It imports DGL when
  called; without DGL it raises :class:`MissingDependency` in one line naming
  ``bash scripts/setup.sh --dgl`` (the DGL profile).
* :func:`from_pyg` reads a ``torch_geometric.data.Data`` or ``Batch`` -- or any object with the
  same attributes, so it needs no PyG installed: ``edge_index`` (2, E) gives the edges, ``x`` the
  node feature ``ndata['feat']``, ``pos`` the node feature ``ndata['pos']``, ``edge_attr`` the
  edge feature ``edata['feat']`` (each only when present), ``num_nodes`` (or the rows of ``x``)
  the node count, and ``ptr`` or ``batch`` (plus ``num_graphs``) the member graphs of a batch.
  Targets (``y``) and masks are left to the dataset loaders, which know what they mean.

:func:`require_dgl` / :func:`require_pyg` import the optional package or raise a one-line
:class:`MissingDependency` (a :class:`~data.common.DataError` and an ``ImportError``) saying
which install provides it.

Graph packs (the project's DGL-free file format for a list of graphs, used by the SBM files and
the superpixel cache; each of those modules documents its own keys): one **uncompressed** ``.npz``
(``np.savez``) holding

* ``format`` (a string naming the kind of file) and ``version`` (int64 scalar);
* ``num_nodes``, ``num_edges``: int64 ``(G,)``, the node and edge count of every graph;
* ``src``, ``dst``: ``(sum num_edges,)`` the edges of all graphs one after the other, as node ids
  *local to their graph* (0 .. num_nodes-1), in the smallest unsigned integer type that holds
  them (uint8 for graphs of up to 256 nodes);
* ``node_<key>``: ``(sum num_nodes, ...)`` node arrays, graphs one after the other;
* ``edge_<key>``: ``(sum num_edges, ...)`` edge arrays, in edge order;
* ``graph_<key>``: ``(G, ...)`` one row per graph (e.g. graph labels).

It is read with ``np.load(..., allow_pickle=False)`` (no object arrays, no code) and checked
before use: format and version, counts against the array lengths, every edge endpoint inside its
graph. Anything else raises :class:`PackError` naming the file. :func:`write_graph_pack` writes to
a temporary name and moves the file into place with ``os.replace``, so a crash never leaves a
partial file under the real name.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
import torch
from torch import Tensor

from data.common import DataError, one_line
from data.graph import Graph

DGL_HINT = ("it is in the DGL profile: bash scripts/setup.sh --dgl, then run with "
            ".venv-dgl/bin/python")
PYG_HINT = "pip install torch_geometric"


class MissingDependency(DataError, ImportError):
    """An optional package (DGL, PyG) is needed for what was asked and is not installed."""



T = TypeVar("T")

def download(what: str, call: Callable[[], T], offline: str = "") -> T:
    """``call()``: a dataset constructor that may download. Any failure (offline, a blocked or
    corrupt download) becomes one :class:`DataError` naming ``what``; ``offline`` says what to
    use instead. A missing package keeps its own one-line message."""
    try:
        return call()
    except DataError:
        raise
    except Exception as exc:  # network, HTTP, archive and library errors all mean "no data"
        hint = f"; offline, {offline}" if offline else ""
        raise DataError(f"{what} failed ({one_line(exc)}); it downloads the data, which needs "
                        f"internet{hint}") from exc


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
    """``import dgl`` (with ``dgl.data``), or a one-line :class:`MissingDependency`."""
    dgl = _require("dgl", purpose, DGL_HINT)
    _require("dgl.data", purpose, DGL_HINT)
    return dgl


def require_pyg(purpose: str = "this", module: str = "torch_geometric.datasets") -> ModuleType:
    """``import torch_geometric.datasets`` (or ``module``), or a one-line
    :class:`MissingDependency` saying ``pip install torch_geometric``."""
    _require("torch_geometric", purpose, PYG_HINT)
    return _require(module, purpose, PYG_HINT)


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


# --------------------------------------------------------------------------------------------
# Graph packs (npz)
# --------------------------------------------------------------------------------------------


class PackError(DataError):
    """A graph pack cannot be read, or is not the kind/version asked for (one-line message)."""


@dataclass
class GraphPack:
    """The arrays of a graph pack (see the module docstring); ids as stored (local, unsigned)."""

    num_nodes: np.ndarray
    num_edges: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    node: dict[str, np.ndarray] = field(default_factory=dict)
    edge: dict[str, np.ndarray] = field(default_factory=dict)
    graph: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.num_nodes.shape[0])


def smallest_uint(max_value: int) -> np.dtype:
    """The smallest unsigned integer dtype that holds ``max_value``."""
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if max_value <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(f"{max_value} does not fit in 64 bits")


def pack_graphs(graphs: Sequence[Graph], node_keys: Sequence[str] = (),
                edge_keys: Sequence[str] = ()) -> GraphPack:
    """The pack arrays of ``graphs`` (their ``node_keys`` / ``edge_keys`` features)."""
    num_nodes = np.array([g.num_nodes() for g in graphs], dtype=np.int64)
    num_edges = np.array([g.num_edges() for g in graphs], dtype=np.int64)
    id_type = smallest_uint(max(int(num_nodes.max()) - 1, 0) if len(graphs) else 0)

    def cat(tensors: list[Tensor], empty: Tensor) -> np.ndarray:
        return torch.cat(tensors).numpy() if tensors else empty.numpy()

    none = torch.zeros(0, dtype=torch.int64)
    src = cat([g.src.cpu() for g in graphs], none).astype(id_type)
    dst = cat([g.dst.cpu() for g in graphs], none).astype(id_type)
    node = {k: cat([g.ndata[k].cpu() for g in graphs], none) for k in node_keys}
    edge = {k: cat([g.edata[k].cpu() for g in graphs], none) for k in edge_keys}
    return GraphPack(num_nodes, num_edges, src, dst, node, edge)


def write_graph_pack(path: str | os.PathLike, pack: GraphPack, fmt: str, version: int) -> None:
    """Write ``pack`` as an uncompressed npz at ``path``, atomically (temporary file +
    ``os.replace``; the temporary file is removed if anything fails)."""
    path = Path(path)
    arrays = {"format": np.array(fmt), "version": np.array(version, dtype=np.int64),
              "num_nodes": np.asarray(pack.num_nodes, dtype=np.int64),
              "num_edges": np.asarray(pack.num_edges, dtype=np.int64),
              "src": pack.src, "dst": pack.dst}
    for prefix, group in (("node", pack.node), ("edge", pack.edge), ("graph", pack.graph)):
        arrays.update({f"{prefix}_{k}": np.ascontiguousarray(v) for k, v in group.items()})
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_graph_pack(path: str | os.PathLike, fmt: str, version: int,
                    take: int | None = None) -> GraphPack:
    """The first ``take`` graphs (all when None) of the pack at ``path``, checked.

    Raises :class:`PackError` (one line, naming the file) when the file is unreadable, of another
    format or version, or inconsistent.
    """
    path = Path(path)
    try:
        with open(path, "rb") as f, np.load(f, allow_pickle=False) as z:  # closed on errors too
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # truncated zip, garbage, pickled data, unreadable: all unusable
        raise PackError(f"{path} is not a readable graph file ({one_line(exc)})") from exc
    try:
        found = (str(arrays["format"]), int(arrays["version"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise PackError(f"{path} has no format/version entry: not a graph pack") from exc
    if found != (fmt, version):
        raise PackError(f"{path} is format {found[0]!r} version {found[1]}, expected {fmt!r} "
                        f"version {version}")
    try:
        pack = GraphPack(
            arrays["num_nodes"], arrays["num_edges"], arrays["src"], arrays["dst"],
            node={k[5:]: v for k, v in arrays.items() if k.startswith("node_")},
            edge={k[5:]: v for k, v in arrays.items() if k.startswith("edge_")},
            graph={k[6:]: v for k, v in arrays.items() if k.startswith("graph_")})
        _check_pack(pack)
    except (KeyError, ValueError) as exc:
        raise PackError(f"{path} is inconsistent ({one_line(exc)})") from exc
    return pack if take is None else _prefix(pack, take)


def _check_pack(pack: GraphPack) -> None:
    nodes, edges = pack.num_nodes, pack.num_edges
    if nodes.ndim != 1 or edges.shape != nodes.shape or nodes.dtype.kind not in "iu" \
            or edges.dtype.kind not in "iu" or (nodes.size and min(nodes.min(), edges.min()) < 0):
        raise ValueError("bad per-graph counts")
    total_n, total_e = int(nodes.sum()), int(edges.sum())
    if pack.src.shape != (total_e,) or pack.dst.shape != (total_e,) \
            or pack.src.dtype.kind != "u" or pack.dst.dtype.kind != "u":
        raise ValueError(f"edge arrays do not hold the {total_e} edges the counts say")
    if total_e:  # the largest endpoint of every graph with edges, below its node count
        has = edges > 0
        starts = (np.cumsum(edges) - edges)[has]
        for ids in (pack.src, pack.dst):
            if np.any(np.maximum.reduceat(ids, starts).astype(np.int64) >= nodes[has]):
                raise ValueError("an edge endpoint lies outside its graph")
    for group, rows, what in ((pack.node, total_n, "node"), (pack.edge, total_e, "edge"),
                              (pack.graph, nodes.size, "graph")):
        for key, value in group.items():
            if value.dtype.hasobject or value.ndim < 1 or value.shape[0] != rows:
                raise ValueError(f"{what}_{key} has shape {value.shape}, expected {rows} rows")


def _prefix(pack: GraphPack, take: int) -> GraphPack:
    g = min(int(take), len(pack))
    n_end, e_end = int(pack.num_nodes[:g].sum()), int(pack.num_edges[:g].sum())
    return GraphPack(pack.num_nodes[:g], pack.num_edges[:g], pack.src[:e_end], pack.dst[:e_end],
                     {k: v[:n_end] for k, v in pack.node.items()},
                     {k: v[:e_end] for k, v in pack.edge.items()},
                     {k: v[:g] for k, v in pack.graph.items()})


def unpack_graphs(pack: GraphPack, node_dtypes: Mapping[str, torch.dtype] | None = None,
                  edge_dtypes: Mapping[str, torch.dtype] | None = None) -> list[Graph]:
    """The graphs of ``pack`` (int64 ids; features cast to the given dtypes, else kept).

    The graphs' tensors are views into one tensor per array, so unpacking costs one copy.
    """
    node_dtypes, edge_dtypes = dict(node_dtypes or {}), dict(edge_dtypes or {})
    n_counts, e_counts = pack.num_nodes.tolist(), pack.num_edges.tolist()

    def tensor(a: np.ndarray, dtype: torch.dtype | None) -> Tensor:
        if a.dtype.kind == "u" and a.dtype != np.uint8:  # older torch lacks uint16..uint64
            a = a.astype(np.int64)
        t = torch.from_numpy(np.ascontiguousarray(a))
        return t.to(dtype) if dtype is not None else t

    src = torch.split(torch.from_numpy(pack.src.astype(np.int64)), e_counts)
    dst = torch.split(torch.from_numpy(pack.dst.astype(np.int64)), e_counts)
    node = {k: torch.split(tensor(v, node_dtypes.get(k)), n_counts) for k, v in pack.node.items()}
    edge = {k: torch.split(tensor(v, edge_dtypes.get(k)), e_counts) for k, v in pack.edge.items()}
    return [Graph(src[i], dst[i], n, ndata={k: v[i] for k, v in node.items()},
                  edata={k: v[i] for k, v in edge.items()})
            for i, n in enumerate(n_counts)]

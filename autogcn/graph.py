"""The project's graph type: a (batched) directed graph in plain torch tensors.

A :class:`Graph` holds the edge list (``src → dst``, int64), the node count, node and edge
feature dicts and, for a batch, the node and edge counts of every member graph (edges grouped by
graph, nodes renumbered with offsets). The index structures message passing needs are built on
first use and travel with the graph to another device. The constructor checks ids and row counts
once, graphs derived from checked ones skip it, and an in-place edit of ``src`` or ``dst`` drops
what was built from them (``docs/layer.md``, *Checks*).

Example::

    g = Graph([0, 1, 2], [1, 2, 0], num_nodes=3, ndata={"feat": torch.rand(3, 4)})
    g = Graph.from_edge_index(torch.tensor([[0, 1, 2], [1, 2, 0]]), 3)   # the same edges
    batch = Graph.batch([g, g])              # 6 nodes, 6 edges, batch_size 2
    batch.in_degrees(), batch.batch_num_nodes()
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

_STRUCTURE = ("in_degrees", "out_degrees", "csc", "csr", "node_graph_ids")
#: How id errors name the endpoints and what to do: the constructor's arguments, or PyG's rows.
_OWN_NAMES = (("src", "pass num_nodes, or fix the edge list"),
              ("dst", "pass num_nodes, or fix the edge list"))
_EDGE_INDEX_NAMES = (("edge_index[0] (sources)", "fix edge_index, or pass every node's row in x"),
                     ("edge_index[1] (targets)", "fix edge_index, or pass every node's row in x"))


class Graph:
    """A directed graph, or a batch of graphs, as torch tensors.

    Args:
        src, dst: edge endpoints, one integer node id per edge (``src[i] → dst[i]``); repeated
            edges and self-loops are kept as given.
        num_nodes: node count (default: one more than the largest endpoint, 0 without edges).
        ndata, edata: feature tensors with one row per node / per edge.
        batch_num_nodes, batch_num_edges: per-graph counts of a batch (default: one graph).
        validate: check the node ids and counts (reads values back to the host). ``False`` only
            for graphs built from checked ones (see the module docstring).

    Raises:
        ValueError: an id outside ``[0, num_nodes)``, ``src`` and ``dst`` of different lengths,
            non-integer ids, a feature tensor without one row per node / edge, or member counts
            that do not add up.
    """

    def __init__(
        self,
        src: Tensor | Sequence[int],
        dst: Tensor | Sequence[int],
        num_nodes: int | None = None,
        *,
        ndata: dict[str, Tensor] | None = None,
        edata: dict[str, Tensor] | None = None,
        batch_num_nodes: Tensor | None = None,
        batch_num_edges: Tensor | None = None,
        validate: bool = True,
        names: tuple[tuple[str, str], tuple[str, str]] = _OWN_NAMES,
    ) -> None:
        src, dst = _edge_ends(src, "src"), _edge_ends(dst, "dst")
        dst = dst.to(src.device)
        if src.shape != dst.shape:
            raise ValueError(f"src has {src.numel()} entries but dst has {dst.numel()}")
        if num_nodes is None:
            num_nodes = int(torch.maximum(src.max(), dst.max())) + 1 if src.numel() else 0
        self.src, self.dst, self._num_nodes = src, dst, int(num_nodes)
        self.ndata: dict[str, Tensor] = dict(ndata or {})
        self.edata: dict[str, Tensor] = dict(edata or {})
        # None: one graph; its counts are made on first use (a copy to the device, which the
        # convolutions' per-call graphs never need)
        self._batch_num_nodes, self._batch_num_edges = (
            None if c is None else torch.as_tensor(c, dtype=torch.int64, device=src.device)
            for c in (batch_num_nodes, batch_num_edges))
        self._names = names
        if validate:
            self._validate()
        self._cache: dict[str, Tensor | tuple[Tensor, ...]] = {}  # index structure
        self._derived: dict[object, object] = {}  # what layers derive from it, see cached()
        self._built_version = self._version

    @property
    def _version(self) -> int | None:
        """Changes whenever ``src`` or ``dst`` is modified in place (torch's version counters,
        which only grow: their sum changes with either); ``None`` where none is kept or read
        (inference tensors, a compiled graph)."""
        if compiling() or self.src.is_inference() or self.dst.is_inference():
            return None
        return self.src._version + self.dst._version

    def _drop_if_edited(self) -> None:
        """Forget what was built from ``src``/``dst`` before an in-place edit (module
        docstring); re-check the ids where they can be read without a device sync."""
        if compiling() or self._built_version == self._version:
            return
        self._cache.clear()
        self._derived.clear()
        self._built_version = self._version
        if can_read_values(self.src):
            self._validate()

    def _validate(self) -> None:
        """The constructor's check (module docstring; ``Raises`` in the class docstring)."""
        n, e = self._num_nodes, self.src.numel()
        if n < 0:
            raise ValueError(f"num_nodes must be >= 0, got {n}")
        for (name, hint), ends in zip(self._names, (self.src, self.dst)):
            if e and (int(ends.min()) < 0 or int(ends.max()) >= n):
                bad = ends[(ends < 0) | (ends >= n)][0]
                raise ValueError(f"{name} holds node id {int(bad)}, outside [0, {n}) for a graph "
                                 f"of {n} nodes ({hint})")
        for kind, data, rows in (("ndata", self.ndata, n), ("edata", self.edata, e)):
            for key, value in data.items():
                if not isinstance(value, Tensor) or value.dim() == 0 or value.shape[0] != rows:
                    got = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
                    raise ValueError(f"{kind}[{key!r}] must have one row per "
                                     f"{'node' if kind == 'ndata' else 'edge'} ({rows}), got "
                                     f"{got}")
        for what, counts, total in (("batch_num_nodes", self._batch_num_nodes, n),
                                    ("batch_num_edges", self._batch_num_edges, e)):
            if counts is None:
                continue
            if counts.dim() != 1 or int(counts.sum()) != total or bool((counts < 0).any()):
                raise ValueError(f"{what} {counts.tolist()} must be non-negative counts adding "
                                 f"up to {total}")

    @classmethod
    def from_edge_index(cls, edge_index: Tensor, num_nodes: int | None = None,
                        **features) -> Graph:
        """A graph from a ``(2, E)`` edge index (row 0 sources, row 1 destinations), PyG's
        layout; ``features`` are the constructor's keyword arguments (``ndata``, ``validate``)."""
        if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 \
                or edge_index.shape[0] != 2:
            shape = tuple(edge_index.shape) if isinstance(edge_index, Tensor) else \
                type(edge_index).__name__
            raise ValueError(f"edge_index must be a (2, num_edges) tensor, got {shape}")
        return cls(edge_index[0], edge_index[1], num_nodes, names=_EDGE_INDEX_NAMES, **features)

    @property
    def edge_index(self) -> Tensor:
        """The edges as a ``(2, E)`` int64 tensor, sources in row 0 (PyG's layout)."""
        return torch.stack([self.src, self.dst])

    # ------------------------------------------------------------------ sizes
    def num_nodes(self) -> int:
        return self._num_nodes

    def num_edges(self) -> int:
        return self.src.numel()

    @property
    def batch_size(self) -> int:
        return 1 if self._batch_num_nodes is None else self._batch_num_nodes.numel()

    def batch_num_nodes(self) -> Tensor:
        """Nodes of each member graph, ``(batch_size,)`` int64."""
        if self._batch_num_nodes is None:
            self._batch_num_nodes = self.src.new_tensor([self._num_nodes])
        return self._batch_num_nodes

    def batch_num_edges(self) -> Tensor:
        """Edges of each member graph, ``(batch_size,)`` int64."""
        if self._batch_num_edges is None:
            self._batch_num_edges = self.src.new_tensor([self.num_edges()])
        return self._batch_num_edges

    @property
    def device(self) -> torch.device:
        return self.src.device

    def edges(self) -> tuple[Tensor, Tensor]:
        return self.src, self.dst

    # ------------------------------------------------------------------ structure (cached)
    def cached(self, key: object, build):
        """``build()`` computed once per graph and kept with it (e.g. a normalised adjacency
        shared by every layer of a forward pass). Dropped when the graph moves device, and when
        ``src`` or ``dst`` is edited in place (module docstring)."""
        return self._memo(self._derived, key, build)

    def _memo(self, store: dict, key: object, build):
        self._drop_if_edited()  # clears the stores in place
        if key not in store:
            with torch.no_grad():
                store[key] = build()
        return store[key]

    def in_degrees(self) -> Tensor:
        """Incoming edges per node (repeated edges counted), ``(N,)`` int64."""
        return self._memo(self._cache, "in_degrees", lambda: _degrees(self.dst, self._num_nodes))

    def out_degrees(self) -> Tensor:
        """Outgoing edges per node, ``(N,)`` int64."""
        return self._memo(self._cache, "out_degrees", lambda: _degrees(self.src, self._num_nodes))

    def csc(self) -> tuple[Tensor, Tensor, Tensor]:
        """In-edges grouped by destination: ``(indptr (N+1,), sources (E,), edge ids (E,))``.

        Row ``v`` of the compressed structure lists the sources of the edges into ``v``, in edge
        order; ``edge ids`` maps each position back to the edge list.
        """
        return self._memo(self._cache, "csc",
                          lambda: _compress(self.dst, self.src, self.in_degrees()))

    def csr(self) -> tuple[Tensor, Tensor, Tensor]:
        """Out-edges grouped by source: ``(indptr (N+1,), destinations (E,), edge ids (E,))``."""
        return self._memo(self._cache, "csr",
                          lambda: _compress(self.src, self.dst, self.out_degrees()))

    def node_graph_ids(self) -> Tensor:
        """The member graph of every node, ``(N,)`` int64 (all 0 for a single graph)."""
        return self._memo(self._cache, "node_graph_ids", lambda: torch.repeat_interleave(
            torch.arange(self.batch_size, device=self.device), self.batch_num_nodes(),
            output_size=self._num_nodes))

    def build_structure(self) -> Graph:
        """Build every cached index structure now (e.g. in a data-loader worker); returns self."""
        for key in _STRUCTURE:
            getattr(self, key)()
        return self

    # ------------------------------------------------------------------ copies
    def _map(self, fn) -> Graph:
        """A new graph with ``fn`` applied to every tensor (features and cached structure)."""
        self._drop_if_edited()
        out = Graph.__new__(Graph)
        out.src, out.dst, out._num_nodes = fn(self.src), fn(self.dst), self._num_nodes
        out.ndata = {k: fn(v) for k, v in self.ndata.items()}
        out.edata = {k: fn(v) for k, v in self.edata.items()}
        out._batch_num_nodes = fn(self.batch_num_nodes())
        out._batch_num_edges = fn(self.batch_num_edges())
        out._cache = {k: tuple(fn(t) for t in v) if isinstance(v, tuple) else fn(v)
                      for k, v in self._cache.items()}
        out._derived = {}
        out._names, out._built_version = self._names, out._version
        return out

    def to(self, device: torch.device | str, non_blocking: bool = False) -> Graph:
        """This graph with every tensor on ``device`` (itself when already there).

        ``"cuda"`` means the current CUDA device, as for tensors: a graph on ``cuda:1`` is
        copied by ``to("cuda")`` while ``cuda:0`` is current.
        """
        if resolve_device(device) == self.device:
            return self
        return self._map(lambda t: t.to(device, non_blocking=non_blocking))

    def pin_memory(self) -> Graph:
        """A copy in page-locked memory, for asynchronous host-to-GPU copies."""
        return self._map(lambda t: t.pin_memory())

    # ------------------------------------------------------------------ batching
    @staticmethod
    def batch(graphs: Sequence[Graph]) -> Graph:
        """One graph holding ``graphs`` as disjoint members (nodes renumbered with offsets)."""
        if not graphs:
            raise ValueError("cannot batch an empty list of graphs")
        first = graphs[0]
        for g in graphs[1:]:
            if g.ndata.keys() != first.ndata.keys() or g.edata.keys() != first.edata.keys():
                raise ValueError("graphs of a batch must carry the same node and edge features")
        device = first.device
        if any(g.device != device for g in graphs):
            raise ValueError("graphs of a batch must be on one device, got "
                             f"{sorted({str(g.device) for g in graphs})}")
        node_counts = [g.num_nodes() for g in graphs]  # host integers: no device read
        edge_counts = [g.num_edges() for g in graphs]
        sizes = torch.tensor(node_counts, device=device)
        shift = torch.repeat_interleave(torch.cumsum(sizes, 0) - sizes,
                                        torch.tensor(edge_counts, device=device),
                                        output_size=sum(edge_counts))
        return Graph(
            torch.cat([g.src for g in graphs]) + shift,
            torch.cat([g.dst for g in graphs]) + shift,
            sum(node_counts),
            ndata={k: torch.cat([g.ndata[k] for g in graphs]) for k in first.ndata},
            edata={k: torch.cat([g.edata[k] for g in graphs]) for k in first.edata},
            batch_num_nodes=torch.cat([g.batch_num_nodes() for g in graphs]),
            batch_num_edges=torch.cat([g.batch_num_edges() for g in graphs]),
            validate=False,  # the members were checked when they were built
        )

    def unbatch(self) -> list[Graph]:
        """The member graphs of a batch, renumbered from 0."""
        node_ends = torch.cumsum(self.batch_num_nodes(), 0).tolist()
        edge_ends = torch.cumsum(self.batch_num_edges(), 0).tolist()
        graphs, n0, e0 = [], 0, 0
        for n1, e1 in zip(node_ends, edge_ends, strict=True):
            graphs.append(Graph(
                self.src[e0:e1] - n0, self.dst[e0:e1] - n0, n1 - n0,
                ndata={k: v[n0:n1] for k, v in self.ndata.items()},
                edata={k: v[e0:e1] for k, v in self.edata.items()}, validate=False))
            n0, e0 = n1, e1
        return graphs

    # ------------------------------------------------------------------ edits
    def remove_self_loops(self) -> Graph:
        """A copy without edges ``v → v`` (edge features of the others kept)."""
        keep = self.src != self.dst
        counts = torch.zeros_like(self.batch_num_edges()).index_add_(
            0, self.node_graph_ids()[self.src[keep]], torch.ones_like(self.src[keep]))
        return Graph(self.src[keep], self.dst[keep], self._num_nodes, ndata=self.ndata,
                     edata={k: v[keep] for k, v in self.edata.items()},
                     batch_num_nodes=self.batch_num_nodes(), batch_num_edges=counts,
                     validate=False)

    def add_self_loops(self) -> Graph:
        """A copy with one edge ``v → v`` per node appended after each member graph's edges.

        Features of the new edges are zero (DGL's ``add_self_loop`` fills 1 by default; no net
        of this project reads edge features).
        """
        n = self._num_nodes
        loops = torch.arange(n, device=self.device)
        graph_of_edge = torch.cat([self.node_graph_ids()[self.src], self.node_graph_ids()])
        order = torch.sort(graph_of_edge, stable=True).indices  # keep each member's edges together
        edata = {k: torch.cat([v, v.new_zeros((n, *v.shape[1:]))])[order]
                 for k, v in self.edata.items()}
        return Graph(torch.cat([self.src, loops])[order], torch.cat([self.dst, loops])[order], n,
                     ndata=self.ndata, edata=edata, batch_num_nodes=self.batch_num_nodes(),
                     batch_num_edges=self.batch_num_edges() + self.batch_num_nodes(),
                     validate=False)

    def __getstate__(self) -> dict:  # derived objects are rebuilt where the graph is used
        self._drop_if_edited()
        return {**self.__dict__, "_derived": {}}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_names", _OWN_NAMES)  # graphs pickled before names existed
        self._built_version = self._version  # fresh tensors: their counters start again

    def __repr__(self) -> str:
        def shapes(d: dict[str, Tensor]) -> str:
            return "{" + ", ".join(f"{k}: {tuple(v.shape)}" for k, v in d.items()) + "}"

        return (f"Graph(num_nodes={self._num_nodes}, num_edges={self.num_edges()}, "
                f"batch_size={self.batch_size}, ndata={shapes(self.ndata)}, "
                f"edata={shapes(self.edata)})")


def can_read_values(tensor: Tensor) -> bool:
    """Whether a check may read ``tensor``'s values: only in eager mode (a read would break a
    ``torch.compile`` graph) and only on the CPU (elsewhere it would wait for the device). The
    convolutions check ids and edge weights where this holds; a graph on a GPU is checked once,
    where it is built (:class:`Graph`), as PyG leaves such checks to where data enters."""
    return tensor.device.type == "cpu" and not compiling()


def compiling() -> bool:
    """Whether ``torch.compile`` is tracing the calling code."""
    is_compiling = getattr(torch.compiler, "is_compiling", None)  # torch >= 2.3
    return bool(is_compiling and is_compiling())


def resolve_device(device: torch.device | str) -> torch.device:
    """``device`` with its index filled in (``"cuda"`` → the current CUDA device), so that two
    names of one device compare equal."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return device


def _edge_ends(ends: Tensor | Sequence[int], name: str) -> Tensor:
    """``ends`` as a flat int64 tensor; floats (a likely mix-up with features) are refused."""
    tensor = torch.as_tensor(ends) if not isinstance(ends, Tensor) else ends
    if not tensor.numel() and not isinstance(ends, Tensor):
        tensor = tensor.long()  # Graph([], []): an empty list comes out as float
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        raise ValueError(f"{name} must hold integer node ids, got dtype {tensor.dtype}")
    return tensor.to(torch.int64).reshape(-1)


def _degrees(ends: Tensor, n: int) -> Tensor:
    # index_add, not bincount: bincount's output length depends on the values (a host read)
    return ends.new_zeros(n).index_add_(0, ends, torch.ones_like(ends))


def _compress(rows: Tensor, cols: Tensor, counts: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Compressed sparse rows of the (rows, cols) edge list: indptr, column per entry, edge ids."""
    indptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    # Always sorted (stable: edge order within a row): testing whether the rows are already
    # grouped would read a value back to the host.
    perm = torch.sort(rows, stable=True).indices
    return indptr, cols[perm], perm

r"""Message passing over a :class:`~data.graph.Graph`: every layer's aggregation, in plain torch.

Degree-normalised propagation (AutoGCN, GCN, ChebNet, SGC, APGCN):

.. math::
    P(x)_v = s^{dst}_v \sum_{u \to v} s^{src}_u\, x_u, \qquad
    s^{dst}_v = \max(\deg^{in}(v), 1)^{-1/2}

with :math:`s^{src} = s^{dst}` (the in-degree on both sides, as in the authors' release: on a
symmetric graph without self-loops this is :math:`\tilde A = D^{-1/2} A D^{-1/2}`) or
:math:`s^{src}_u = \max(\deg^{out}(u), 1)^{-1/2}` (DGL's ``norm="both"``; differs only on
directed graphs). Nodes without incoming edges receive zero, never a division by zero. With an
``edge_weight`` per edge the sum carries :math:`w_{u \to v}` and the degrees are weighted degrees
(a node whose weighted degree is 0 gets the factor 1, as an unweighted node of degree 0). The
factors are computed in the feature dtype (float32 for float32 features, as the release did;
float64 for float64 features).

:class:`Adjacency` holds such a scaled adjacency and its transpose as CSR matrices, built once
per graph (cached on it, so every layer of a forward pass and every epoch on one graph shares
them): each propagation is then one sparse product forward and one backward.

The other aggregations over incoming edges: :func:`aggregate` (sum, mean or max of the
neighbours' features: GIN, GraphSAGE), :func:`weighted_aggregate` (a weight per edge and head:
GAT, MoNet), :func:`edge_softmax` (GAT's attention) and :func:`readout` (per-graph pooling).
Every maximum goes through :func:`scatter_amax`, which switches to a deterministic segment
reduction when ``torch.use_deterministic_algorithms(True)`` is on (``--deterministic``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from data.graph import Graph
from layers.autograd_functions import EdgeWeightedSum, SegmentMax, SparseProduct, csr_matrix

SOURCE_DEGREES = ("in", "out")
READOUTS = ("mean", "sum", "max")
ORDERS = ("auto", "propagate", "project")


def degree_scale(degrees: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """``deg^(-1/2)`` of ``dtype``, 1 where ``deg <= 0`` (``max(deg, 1)^(-1/2)`` for counts).

    Computed in the feature dtype (at least float32: half-precision inputs get float32 factors
    rounded once), so a float64 run is float64 throughout and float32 factors are the ones the
    release computed.
    """
    d = degrees.to(_factor_dtype(dtype))
    return d.masked_fill(d <= 0, 1).rsqrt().to(dtype)


def _factor_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.promote_types(dtype, torch.float32)


#: Per-node factors of an :class:`Adjacency`, computed for the dtype of the features they scale.
Scale = Callable[[torch.dtype], Tensor]


class Adjacency:
    r""":math:`M = \mathrm{diag}(r)\, W\, \mathrm{diag}(c)` (rows: destinations) and
    :math:`M^\top`, as CSR matrices ready for :func:`~layers.autograd_functions.sparse_mm`.

    :math:`W_{vu}` sums the weights of the edges ``u → v`` (``edge_weight``, or 1 per edge:
    repeated edges count once each). ``row_scale`` / ``col_scale``: the per-node factors ``r``
    and ``c`` as functions of the feature dtype (``None``: ones). Edge weights are constants
    here: no gradient flows to them.
    """

    def __init__(self, g: Graph, row_scale: Scale | None = None, col_scale: Scale | None = None,
                 edge_weight: Tensor | None = None) -> None:
        self.num_nodes = g.num_nodes()
        self.row_scale, self.col_scale = row_scale, col_scale
        self.edge_weight = None if edge_weight is None else edge_weight.detach()
        self._structure = (g.csc(), g.csr())
        self._matrices: dict[torch.dtype, tuple[Tensor, Tensor]] = {}

    def _scale(self, scale: Scale | None, dtype: torch.dtype, device: torch.device) -> Tensor:
        if scale is None:
            return torch.ones(self.num_nodes, dtype=dtype, device=device)
        return scale(dtype)

    def matrices(self, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        """``(M, Mᵀ)`` as CSR tensors of ``dtype`` (built on first use, then kept)."""
        if dtype not in self._matrices:
            (in_ptr, in_idx, in_perm), (out_ptr, out_idx, out_perm) = self._structure
            r = self._scale(self.row_scale, dtype, in_ptr.device)
            c = self._scale(self.col_scale, dtype, in_ptr.device)
            n = self.num_nodes
            # M[v, u] = r_v w_e c_u for every edge e = u -> v; Mᵀ[u, v] the same value.
            values = _expand_rows(r, in_ptr, in_idx.numel()) * c[in_idx]
            values_t = _expand_rows(c, out_ptr, out_idx.numel()) * r[out_idx]
            if self.edge_weight is not None:
                w = self.edge_weight.to(dtype)
                values, values_t = values * w[in_perm], values_t * w[out_perm]
            m, mt = csr_matrix(in_ptr, in_idx, values, n), csr_matrix(out_ptr, out_idx, values_t, n)
            self._matrices[dtype] = (m, mt)
        return self._matrices[dtype]

    def __call__(self, x: Tensor) -> Tensor:
        """``M x`` for ``x`` of shape ``(N, ...)``, differentiable in ``x``."""
        flat = x.reshape(x.shape[0], -1).contiguous()
        return SparseProduct.apply(flat, *self.matrices(flat.dtype)).view(x.shape)


def _expand_rows(scale: Tensor, indptr: Tensor, nnz: int) -> Tensor:
    return torch.repeat_interleave(scale, indptr[1:] - indptr[:-1], output_size=nnz)


def weighted_degrees(g: Graph, edge_weight: Tensor | None, side: str) -> Tensor:
    """Per-node sums of the weights of the incoming (``side="in"``) or outgoing (``"out"``)
    edges; the plain int64 degrees without ``edge_weight``."""
    if edge_weight is None:
        return g.in_degrees() if side == "in" else g.out_degrees()
    ends = g.dst if side == "in" else g.src
    w = edge_weight.detach()
    w = w.to(_factor_dtype(w.dtype))
    return w.new_zeros(g.num_nodes()).index_add_(0, ends, w)


def normalized_adjacency(g: Graph, source_degree: str = "in",
                         edge_weight: Tensor | None = None) -> Adjacency:
    """The degree-normalised adjacency :math:`P` above as an :class:`Adjacency` operator of
    ``g``: ``op = normalized_adjacency(g)``, then ``op(x)`` is :math:`P(x)` (the CSR matrices
    are built on the first call per dtype); ``source_degree`` is ``"in"`` or ``"out"``.

    Without ``edge_weight`` it is cached on ``g`` (one per graph, shared by every layer). With
    ``edge_weight`` (``(E,)``, non-negative, a constant: no gradient flows to it) the degrees are
    weighted degrees and :math:`P_{vu}` carries the weight of ``u → v``; the result is not
    cached (the caller keeps it, e.g. :class:`~layers.autogcn_layer.AutoGCNConv` with
    ``cached=True``).
    """
    if source_degree not in SOURCE_DEGREES:
        raise ValueError(f"source_degree must be one of {SOURCE_DEGREES}, got {source_degree!r}")
    if edge_weight is not None:
        edge_weight = check_edge_weight(g, edge_weight)

    def build() -> Adjacency:
        d_in = weighted_degrees(g, edge_weight, "in")
        d_src = d_in if source_degree == "in" else weighted_degrees(g, edge_weight, "out")
        return Adjacency(g, lambda dtype: degree_scale(d_in, dtype),
                         lambda dtype: degree_scale(d_src, dtype), edge_weight)

    if edge_weight is not None:
        with torch.no_grad():
            return build()
    return g.cached(("normalized_adjacency", source_degree), build)


def check_edge_weight(g: Graph, edge_weight: Tensor) -> Tensor:
    """``edge_weight`` as a flat tensor of one weight per edge of ``g``; a clear error
    otherwise (weights that need a gradient are refused: they would silently get none)."""
    if not isinstance(edge_weight, Tensor) or not edge_weight.is_floating_point():
        raise ValueError("edge_weight must be a floating-point tensor with one weight per edge")
    if edge_weight.numel() != g.num_edges() or edge_weight.dim() > 2 \
            or (edge_weight.dim() == 2 and edge_weight.shape[1] != 1):
        raise ValueError(f"edge_weight must have shape ({g.num_edges()},), one weight per edge, "
                         f"got {tuple(edge_weight.shape)}")
    if edge_weight.requires_grad and torch.is_grad_enabled():
        raise ValueError("edge_weight requires a gradient, but the normalised adjacency treats "
                         "edge weights as constants: pass edge_weight.detach()")
    return edge_weight.reshape(-1).to(g.device)


def as_graph(graph: Graph | Tensor, num_nodes: int) -> Graph:
    """``graph`` itself, or the :class:`Graph` of a ``(2, E)`` edge index over ``num_nodes``
    nodes (PyG's layout), checked like any graph."""
    if isinstance(graph, Graph):
        if graph.num_nodes() != num_nodes:
            raise ValueError(f"the graph has {graph.num_nodes()} nodes but the features have "
                             f"{num_nodes} rows")
        return graph
    return Graph.from_edge_index(graph, num_nodes)


def propagate(g: Graph, x: Tensor, source_degree: str = "in",
              edge_weight: Tensor | None = None) -> Tensor:
    """``P(x)``: one normalised sum over incoming edges; ``x`` is ``(N, ...)``."""
    return normalized_adjacency(g, source_degree, edge_weight)(x)


def cheaper_to_propagate_first(x: Tensor, propagate_columns: int, project_columns: int,
                               order: str = "auto") -> bool:
    """The decision whether a layer propagates its input before its linear maps (``True``) or
    projects it first (``False``).

    Propagation commutes with the linear maps, so both orders give the same output; the cheaper
    one moves fewer columns through the sparse products. Sparse input is always projected first
    (propagating it would densify it). ``order`` ``"propagate"``/``"project"`` forces one.
    """
    if x.is_sparse:
        return False
    if order != "auto":
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        return order == "propagate"
    return propagate_columns <= project_columns


def aggregate(g: Graph, x: Tensor, how: str = "sum") -> Tensor:
    """Sum, mean or max of ``x`` over each node's in-neighbours (0 where there are none)."""
    if how == "sum":
        return g.cached(("adjacency", "sum"), lambda: Adjacency(g))(x)
    if how == "mean":
        def inverse_degree(dtype: torch.dtype) -> Tensor:
            return (1.0 / g.in_degrees().to(_factor_dtype(dtype)).clamp(min=1)).to(dtype)

        return g.cached(("adjacency", "mean"), lambda: Adjacency(g, inverse_degree))(x)
    if how == "max":
        src, dst = g.edges()
        return scatter_amax(x[src], dst, g.num_nodes())
    raise ValueError(f"unknown aggregation {how!r}; use sum, mean or max")


def weighted_aggregate(g: Graph, x: Tensor, weight: Tensor) -> Tensor:
    """``out_v = Σ_{e: u→v} weight_e · x_u``: ``x`` (N, H, d) with ``weight`` (E, H), or
    ``x`` (N, d) with ``weight`` (E,)."""
    squeeze = x.dim() == 2
    if squeeze:
        x, weight = x.unsqueeze(1), weight.reshape(-1, 1)
    structure = (g.csc(), g.csr(), *g.edges())
    out = EdgeWeightedSum.apply(x.contiguous(), weight.to(x.dtype), structure)
    return out.squeeze(1) if squeeze else out


def edge_softmax(g: Graph, scores: Tensor) -> Tensor:
    """Softmax of per-edge ``scores`` (E, ...) over the incoming edges of each destination."""
    src, dst = g.edges()
    shape = (g.num_nodes(), *scores.shape[1:])
    # The shift only stabilises exp(): the result does not depend on it, so no gradient flows.
    peak = scatter_amax(scores.detach(), dst, g.num_nodes())
    exp = torch.exp(scores - peak[dst])
    return exp / exp.new_zeros(shape).index_add(0, dst, exp)[dst]


def readout(g: Graph, h: Tensor, how: str = "mean") -> Tensor:
    """One row per member graph of ``g``: the mean, sum or max of its nodes' ``h`` (0 for a
    graph without nodes)."""
    ids = g.node_graph_ids()
    if how == "max":
        return scatter_amax(h, ids, g.batch_size)
    total = h.new_zeros((g.batch_size, *h.shape[1:])).index_add(0, ids, h)
    if how == "sum":
        return total
    if how == "mean":
        counts = g.batch_num_nodes().to(h.dtype).clamp(min=1)
        return total / counts.view(-1, *([1] * (h.dim() - 1)))
    raise ValueError(f"unknown readout {how!r}; use one of {READOUTS}")


def aggregate_edges(g: Graph, messages: Tensor, how: str = "sum") -> Tensor:
    """Sum, mean or max over each node's incoming edges of per-edge ``messages`` (E, ...):
    ``(N, ...)``, 0 where a node has no incoming edge (e.g. MoNet's ``"max"`` aggregator)."""
    dst = g.edges()[1]
    if how == "max":
        return scatter_amax(messages, dst, g.num_nodes())
    if how not in ("sum", "mean"):
        raise ValueError(f"unknown aggregation {how!r}; use sum, mean or max")
    total = messages.new_zeros((g.num_nodes(), *messages.shape[1:])).index_add(0, dst, messages)
    if how == "sum":
        return total
    counts = g.in_degrees().clamp(min=1).to(messages.dtype)
    return total / counts.view(-1, *([1] * (messages.dim() - 1)))


def scatter_amax(values: Tensor, index: Tensor, num_rows: int) -> Tensor:
    """``out[i] = max{values[e] : index[e] = i}`` of shape ``(num_rows, ...)``, 0 for a row no
    entry reaches; ``values`` is ``(E, ...)``, ``index`` ``(E,)``.

    Gradients go to the entries equal to their row's maximum, shared between ties as torch's
    backward shares them (:class:`~layers.autograd_functions.SegmentMax` says how). torch's
    ``scatter_reduce(..., "amax")`` has no deterministic CUDA kernel: under
    ``torch.use_deterministic_algorithms(True)`` it raises. With that setting on (any device, so
    the CPU tests exercise it), the entries are sorted by row and reduced per segment instead,
    which gives the same values and the same gradients.
    """
    if not torch.are_deterministic_algorithms_enabled():
        expanded = index.view(-1, *([1] * (values.dim() - 1))).expand_as(values)
        out = values.new_zeros((num_rows, *values.shape[1:]))
        return out.scatter_reduce(0, expanded, values, "amax", include_self=False)
    return _segment_amax(values, index, num_rows)


def _segment_amax(values: Tensor, index: Tensor, num_rows: int) -> Tensor:
    """:func:`scatter_amax` by sorting the entries by row and reducing each row's segment
    (:class:`~layers.autograd_functions.SegmentMax`); the row lengths come from
    ``searchsorted``, which, unlike ``bincount``, needs no host sync."""
    rows, order = torch.sort(index, stable=True)
    bounds = torch.searchsorted(rows, torch.arange(num_rows + 1, device=index.device))
    return SegmentMax.apply(values[order], rows, bounds[1:] - bounds[:-1])

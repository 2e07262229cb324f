r"""Message passing over a :class:`~data.graph.Graph`: every layer's aggregation, in plain torch.

Degree-normalised propagation (AutoGCN, GCN, ChebNet, SGC, APGCN):

.. math::
    P(x)_v = s^{dst}_v \sum_{u \to v} s^{src}_u\, x_u, \qquad
    s^{dst}_v = \max(\deg^{in}(v), 1)^{-1/2}

with :math:`s^{src} = s^{dst}` (the in-degree on both sides, as in the authors' release: on a
symmetric graph without self-loops this is :math:`\tilde A = D^{-1/2} A D^{-1/2}`) or
:math:`s^{src}_u = \max(\deg^{out}(u), 1)^{-1/2}` (DGL's ``norm="both"``; differs only on
directed graphs). Nodes without incoming edges receive zero, never a division by zero.

:class:`Adjacency` holds such a scaled adjacency and its transpose as CSR matrices, built once
per graph (cached on it, so every layer of a forward pass and every epoch on one graph shares
them): each propagation is then one sparse product forward and one backward.

The other aggregations over incoming edges: :func:`aggregate` (sum, mean or max of the
neighbours' features: GIN, GraphSAGE), :func:`weighted_aggregate` (a weight per edge and head:
GAT, MoNet), :func:`edge_softmax` (GAT's attention) and :func:`readout` (per-graph pooling).
"""

from __future__ import annotations

import torch
from torch import Tensor

from data.graph import Graph
from layers.kernels import EdgeWeightedSum, SparseProduct, csr_matrix

SOURCE_DEGREES = ("in", "out")
READOUTS = ("mean", "sum", "max")
ORDERS = ("auto", "propagate", "project")


def degree_scale(degrees: Tensor) -> Tensor:
    """``max(deg, 1)^(-1/2)`` as float32."""
    return degrees.float().clamp(min=1).rsqrt()


class Adjacency:
    r""":math:`M = \mathrm{diag}(r)\, A\, \mathrm{diag}(c)` (rows: destinations) and
    :math:`M^\top`, as CSR matrices ready for :func:`~layers.kernels.sparse_mm`.

    ``row_scale`` / ``col_scale``: per-node factors ``r`` and ``c`` (``None``: ones). Repeated
    edges count once each.
    """

    def __init__(self, g: Graph, row_scale: Tensor | None = None,
                 col_scale: Tensor | None = None) -> None:
        self.num_nodes = g.num_nodes()
        ones = torch.ones(g.num_nodes(), device=g.device)
        self.row_scale = ones if row_scale is None else row_scale
        self.col_scale = ones if col_scale is None else col_scale
        self._structure = (g.csc(), g.csr())
        self._matrices: dict[torch.dtype, tuple[Tensor, Tensor]] = {}

    def matrices(self, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        """``(M, Mᵀ)`` as CSR tensors of ``dtype`` (built on first use, then kept)."""
        if dtype not in self._matrices:
            r, c = self.row_scale.to(dtype), self.col_scale.to(dtype)
            (in_ptr, in_idx, _), (out_ptr, out_idx, _) = self._structure
            n = self.num_nodes
            # M[v, u] = r_v c_u for every edge u -> v; Mᵀ[u, v] the same value.
            values = _expand_rows(r, in_ptr, in_idx.numel()) * c[in_idx]
            values_t = _expand_rows(c, out_ptr, out_idx.numel()) * r[out_idx]
            m, mt = csr_matrix(in_ptr, in_idx, values, n), csr_matrix(out_ptr, out_idx, values_t, n)
            self._matrices[dtype] = (m, mt)
        return self._matrices[dtype]

    def __call__(self, x: Tensor) -> Tensor:
        """``M x`` for ``x`` of shape ``(N, ...)``, differentiable in ``x``."""
        flat = x.reshape(x.shape[0], -1).contiguous()
        return SparseProduct.apply(flat, *self.matrices(flat.dtype)).view(x.shape)


def _expand_rows(scale: Tensor, indptr: Tensor, nnz: int) -> Tensor:
    return torch.repeat_interleave(scale, indptr[1:] - indptr[:-1], output_size=nnz)


def normalized_adjacency(g: Graph, source_degree: str = "in") -> Adjacency:
    """:math:`P` above for ``g`` (cached on ``g``); ``source_degree`` is ``"in"`` or ``"out"``."""
    if source_degree not in SOURCE_DEGREES:
        raise ValueError(f"source_degree must be one of {SOURCE_DEGREES}, got {source_degree!r}")

    def build() -> Adjacency:
        s_dst = degree_scale(g.in_degrees())
        s_src = s_dst if source_degree == "in" else degree_scale(g.out_degrees())
        return Adjacency(g, s_dst, s_src)

    return g.cached(("normalized_adjacency", source_degree), build)


def propagate(g: Graph, x: Tensor, source_degree: str = "in") -> Tensor:
    """``P(x)``: one normalised sum over incoming edges; ``x`` is ``(N, ...)``."""
    return normalized_adjacency(g, source_degree)(x)


def propagate_first(x: Tensor, propagate_columns: int, project_columns: int,
                    order: str = "auto") -> bool:
    """Whether a layer should propagate its input before its linear maps (else project first).

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
        mean = g.cached(("adjacency", "mean"),
                        lambda: Adjacency(g, 1.0 / g.in_degrees().float().clamp(min=1)))
        return mean(x)
    if how == "max":
        src, dst = g.edges()
        out = x.new_zeros(x.shape)
        index = dst.view(-1, *([1] * (x.dim() - 1))).expand(-1, *x.shape[1:])
        return out.scatter_reduce(0, index, x[src], "amax", include_self=False)
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
    index = dst.view(-1, *([1] * (scores.dim() - 1))).expand_as(scores)
    shape = (g.num_nodes(), *scores.shape[1:])
    # The shift only stabilises exp(): the result does not depend on it, so no gradient flows.
    peak = scores.new_zeros(shape).scatter_reduce(0, index, scores.detach(), "amax",
                                                   include_self=False)
    exp = torch.exp(scores - peak[dst])
    return exp / exp.new_zeros(shape).index_add(0, dst, exp)[dst]


def readout(g: Graph, h: Tensor, how: str = "mean") -> Tensor:
    """One row per member graph of ``g``: the mean, sum or max of its nodes' ``h`` (0 for a
    graph without nodes)."""
    ids = g.node_graph_ids()
    out = h.new_zeros((g.batch_size, *h.shape[1:]))
    if how == "max":
        index = ids.view(-1, *([1] * (h.dim() - 1))).expand_as(h)
        return out.scatter_reduce(0, index, h, "amax", include_self=False)
    total = out.index_add(0, ids, h)
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
    out = messages.new_zeros((g.num_nodes(), *messages.shape[1:]))
    if how == "max":
        index = dst.view(-1, *([1] * (messages.dim() - 1))).expand_as(messages)
        return out.scatter_reduce(0, index, messages, "amax", include_self=False)
    if how not in ("sum", "mean"):
        raise ValueError(f"unknown aggregation {how!r}; use sum, mean or max")
    total = out.index_add(0, dst, messages)
    if how == "sum":
        return total
    counts = g.in_degrees().clamp(min=1).to(messages.dtype)
    return total / counts.view(-1, *([1] * (messages.dim() - 1)))

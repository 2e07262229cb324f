r"""Degree-normalised propagation over a :class:`~autogcn.graph.Graph`:

.. math::
    P(x)_v = s^{dst}_v \sum_{u \to v} s^{src}_u\, x_u, \qquad
    s^{dst}_v = \max(\deg^{in}(v), 1)^{-1/2}

with :math:`s^{src} = s^{dst}` (the in-degree on both sides, as in the AutoGCN authors' release:
on a symmetric graph without self-loops this is :math:`\tilde A = D^{-1/2} A D^{-1/2}`) or
:math:`s^{src}_u = \max(\deg^{out}(u), 1)^{-1/2}` (DGL's ``norm="both"``; differs only on
directed graphs). Nodes without incoming edges receive zero, never a division by zero. With an
``edge_weight`` per edge the sum carries :math:`w_{u \to v}` and the degrees are weighted degrees
(a node whose weighted degree is 0 gets the factor 1, as an unweighted node of degree 0).

:class:`Adjacency` holds such a scaled adjacency and its transpose as CSR parts, built once per
graph and cached on it: each propagation is one sparse product forward and one backward
(:func:`~autogcn.sparse.sparse_product`). Weights that require a gradient (:func:`learns`) get
it exactly, the degrees being sums of the weights; their operator is built per call, never
cached (``docs/layer.md``, *Learned edge weights*).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from autogcn.graph import Graph, can_read_values
from autogcn.inputs import to_graph
from autogcn.sparse import CSRParts, sparse_product

SOURCE_DEGREES = ("in", "out")
ORDERS = ("auto", "propagate", "project")


def degree_scale(degrees: Tensor, dtype: torch.dtype = torch.float32,
                 empty: float = 1.0) -> Tensor:
    """``deg^(-1/2)`` of ``dtype``, ``empty`` where ``deg <= 0`` (1: ``max(deg, 1)^(-1/2)`` for
    counts; 0: PyG's ``inf -> 0``), computed in the feature dtype (at least float32:
    :func:`factor_dtype`), so a float64 run is float64 throughout and float32 factors are the
    release's."""
    d = degrees.to(factor_dtype(dtype))
    none = d <= 0
    return d.masked_fill(none, 1).rsqrt().masked_fill(none, empty).to(dtype)


def factor_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype per-node factors are computed in: ``dtype``, at least float32."""
    return torch.promote_types(dtype, torch.float32)


#: Per-node factors of an :class:`Adjacency`, computed for the dtype of the features they scale.
Scale = Callable[[torch.dtype], Tensor]


class Adjacency:
    r""":math:`M = \mathrm{diag}(r)\, W\, \mathrm{diag}(c)` (rows: destinations) and
    :math:`M^\top`, as CSR parts ready for :func:`~autogcn.sparse.sparse_product`.

    :math:`W_{vu}` sums the weights of the edges ``u → v`` (``edge_weight``, or 1 per edge:
    repeated edges count once each). ``row_scale`` / ``col_scale``: the per-node factors ``r``
    and ``c`` as functions of the feature dtype (``None``: ones). Gradients flow to
    ``edge_weight`` and to whatever the scales are computed from, when they require one (build
    under ``torch.no_grad()`` for a constant operator).
    """

    def __init__(self, g: Graph, row_scale: Scale | None = None, col_scale: Scale | None = None,
                 edge_weight: Tensor | None = None) -> None:
        self.num_nodes = g.num_nodes()
        self.row_scale, self.col_scale = row_scale, col_scale
        self.edge_weight = edge_weight
        self._structure = (g.csc(), g.csr())
        self._matrices: dict[torch.dtype, tuple[CSRParts, CSRParts]] = {}

    def _scale(self, scale: Scale | None, dtype: torch.dtype, device: torch.device) -> Tensor:
        if scale is None:
            return torch.ones(self.num_nodes, dtype=dtype, device=device)
        return scale(dtype)

    def parts(self, dtype: torch.dtype) -> tuple[CSRParts, CSRParts]:
        """The CSR parts of ``M`` and ``Mᵀ`` in ``dtype`` (built on first use, then kept)."""
        if dtype not in self._matrices:
            (in_ptr, in_idx, in_perm), (out_ptr, out_idx, out_perm) = self._structure
            r = self._scale(self.row_scale, dtype, in_ptr.device)
            c = self._scale(self.col_scale, dtype, in_ptr.device)
            # M[v, u] = r_v w_e c_u for every edge e = u -> v; Mᵀ[u, v] the same value.
            values = _expand_rows(r, in_ptr, in_idx.numel()) * c[in_idx]
            values_t = _expand_rows(c, out_ptr, out_idx.numel()) * r[out_idx]
            if self.edge_weight is not None:
                w = self.edge_weight.to(dtype)
                values, values_t = values * w[in_perm], values_t * w[out_perm]
            self._matrices[dtype] = (_csr_parts(in_ptr, in_idx, values),
                                     _csr_parts(out_ptr, out_idx, values_t))
        return self._matrices[dtype]

    def __call__(self, x: Tensor) -> Tensor:
        """``M x`` for ``x`` of shape ``(N, ...)``, differentiable in ``x``."""
        flat = x.reshape(x.shape[0], math.prod(x.shape[1:])).contiguous()  # N = 0 included
        return sparse_product(flat, *self.parts(flat.dtype)).view(x.shape)


def _csr_parts(indptr: Tensor, indices: Tensor, values: Tensor) -> CSRParts:
    if indices.numel() < 2**31:  # 32-bit indices spare the sparse kernel a conversion per call
        indptr, indices = indptr.int(), indices.int()
    return indptr, indices, values


def _expand_rows(scale: Tensor, indptr: Tensor, nnz: int) -> Tensor:
    return torch.repeat_interleave(scale, indptr[1:] - indptr[:-1], output_size=nnz)


def weighted_degrees(g: Graph, edge_weight: Tensor | None, side: str) -> Tensor:
    """Per-node sums of the weights of the incoming (``side="in"``) or outgoing (``"out"``)
    edges (differentiable in the weights); the plain int64 degrees without ``edge_weight``."""
    if edge_weight is None:
        return g.in_degrees() if side == "in" else g.out_degrees()
    ends = g.dst if side == "in" else g.src
    w = edge_weight.to(factor_dtype(edge_weight.dtype))
    return w.new_zeros(g.num_nodes()).index_add(0, ends, w)


def learns(edge_weight: Tensor | None) -> bool:
    """Whether ``edge_weight`` is learned in this call: it requires a gradient and autograd
    records. Such weights get an operator of their own per call (module docstring)."""
    return edge_weight is not None and edge_weight.requires_grad and torch.is_grad_enabled()


def normalized_adjacency(g: Graph, source_degree: str = "in",
                         edge_weight: Tensor | None = None) -> Adjacency:
    """:math:`P` above as an :class:`Adjacency` of ``g`` (``op(x)`` is :math:`P(x)`);
    ``source_degree`` is ``"in"`` or ``"out"``. Cached on ``g`` without ``edge_weight``; with
    one (``(E,)``, non-negative: weighted degrees) built per call, the caller keeping it."""
    if source_degree not in SOURCE_DEGREES:
        raise ValueError(f"source_degree must be one of {SOURCE_DEGREES}, got {source_degree!r}")
    if edge_weight is not None:
        edge_weight = check_edge_weight(g, edge_weight)

    def build() -> Adjacency:
        d_in = weighted_degrees(g, edge_weight, "in")
        d_src = d_in if source_degree == "in" else weighted_degrees(g, edge_weight, "out")
        return Adjacency(g, lambda dtype: degree_scale(d_in, dtype),
                         lambda dtype: degree_scale(d_src, dtype), edge_weight)

    if edge_weight is None:
        return g.cached(("normalized_adjacency", source_degree), build)
    return constant_unless_learned(edge_weight, build)


def constant_unless_learned(edge_weight: Tensor | None, build: Callable[[], Adjacency]) \
        -> Adjacency:
    """``build()`` as a differentiable operator where ``edge_weight`` :func:`learns`, else as a
    constant one (built without recording autograd, its weights detached)."""
    if learns(edge_weight):
        return build()
    with torch.no_grad():
        op = build()
    if op.edge_weight is not None:
        op.edge_weight = op.edge_weight.detach()
    return op


def check_edge_weight(g: Graph, edge_weight: Tensor) -> Tensor:
    """``edge_weight`` as a flat tensor of one weight per edge of ``g`` on ``g``'s device; a
    clear error otherwise. Negative or non-finite weights are refused where their values can be
    read without a device sync (:func:`~autogcn.graph.can_read_values`)."""
    if not isinstance(edge_weight, Tensor) or not edge_weight.is_floating_point():
        raise ValueError("edge_weight must be a floating-point tensor with one weight per edge")
    if edge_weight.numel() != g.num_edges() or edge_weight.dim() > 2 \
            or (edge_weight.dim() == 2 and edge_weight.shape[1] != 1):
        raise ValueError(f"edge_weight must have shape ({g.num_edges()},), one weight per edge, "
                         f"got {tuple(edge_weight.shape)}")
    if edge_weight.device != g.device:
        raise ValueError(f"edge_weight is on {edge_weight.device} but the graph is on "
                         f"{g.device}; move one of them")
    if can_read_values(edge_weight):
        w = edge_weight.detach()
        if not bool(torch.isfinite(w).all()):
            raise ValueError("edge_weight holds NaN or infinite values; expected finite weights")
        if bool((w < 0).any()):
            raise ValueError("edge_weight holds negative values; the degree normalisation needs "
                             "non-negative weights")
    return edge_weight.reshape(-1)


def as_graph(graph: Graph | Tensor, num_nodes: int) -> Graph:
    """``graph`` itself, or the :class:`Graph` of a ``(2, E)`` edge index over ``num_nodes``
    nodes (PyG's layout), checked as :func:`~autogcn.inputs.to_graph` checks it. For layers
    that take edge weights apart: a sparse adjacency, whose values are weights, is refused."""
    g, weight = to_graph(graph, num_nodes)
    if weight is not None:
        raise ValueError("pass the graph as edge_index (with edge_weight) here, not as a sparse "
                         "adjacency")
    return g


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

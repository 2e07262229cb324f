r"""What the learned polynomial filters (GPR-GNN, BernNet, ChebNetII, JacobiConv) share: each
computes :math:`F(N)\,x` channel by channel, :math:`F` a polynomial of order ``K`` with learned
coefficients in a normalised adjacency :math:`N`. The basis and the parameterisation live in
:mod:`autogcn.gprgnn`, :mod:`autogcn.bernnet`, :mod:`autogcn.chebnetii`, :mod:`autogcn.jacobi`;
here, :func:`filter_operator` builds the three operators they use, once per graph:

==============  ==========================================================  ==================
kind            :math:`N`                                                   used by
==============  ==========================================================  ==================
``"gcn"``       :math:`\tilde D^{-1/2}(A + I)\tilde D^{-1/2}`, in-degrees    GPR-GNN
                with the loop (PyG ``gcn_norm``; existing loops replaced by
                one of weight 1)
``"laplacian"`` :math:`D^{-1/2} A D^{-1/2}` without self-loops, out-degrees  BernNet, ChebNetII
                on both sides, :math:`0` for a node without out-edges (PyG
                ``get_laplacian(..., "sym")`` gives :math:`L = I - N`)
``"undirected"`` :math:`D^{-1/2} S D^{-1/2}` of the graph made undirected,    JacobiConv
                :math:`S_{vu} = S_{uv}` the largest weight of the edges
                :math:`u \to v` and :math:`v \to u` (:func:`undirected`),
                degree 0 counted as 1
==============  ==========================================================  ==================

:math:`A_{vu}` sums the weights of the edges ``u → v`` (1 per edge without ``edge_weight``); the
degrees are weighted degrees (``docs/layer.md``: weights, symmetrisation). Steps that depend on
the graph's values (which edges are loops or reverses of each other) are fixed-size tensor
operations done once where the graph enters (loops weigh 0, pairs are found by sorting), so
the filters compile into one graph and run on the meta device.

:class:`PolynomialFilter` is the bare filter ``filter(x, graph)`` with
:meth:`~PolynomialFilter.frequency_response` in :math:`\lambda = 1 - \mu`, :math:`\mu` an
eigenvalue of :math:`N`: on a symmetric :math:`N = U \mathrm{diag}(\mu) U^\top` the output is
:math:`U \mathrm{diag}(F(1 - \mu)) U^\top x` (for GPR-GNN :math:`\lambda` is an eigenvalue of
the Laplacian of the graph *with* self-loops). The benchmark's layer around it is
``layers.poly_filter.PolyFilterLayer``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn

from autogcn.explain import Explainable
from autogcn.graph import Graph, compiling
from autogcn.inputs import GraphInput, check_features, check_size, to_graph
from autogcn.propagation import (
    Adjacency,
    check_edge_weight,
    constant_unless_learned,
    degree_scale,
    factor_dtype,
)

OPERATORS = ("gcn", "laplacian", "undirected")
#: The key of :meth:`PolynomialFilter.frequency_response`'s one entry.
RESPONSE_KEY = "filter"
#: The largest polynomial order: far above the papers' (10), below where a filter's constants
#: stop being finite (BernNet's 2^-K) or its tables memory-sized (ChebNetII's (K+1)^2).
MAX_ORDER = 1000

#: ``v -> N v`` on ``(N, C)`` signals (or, for a response, ``v -> μ v`` on a grid of μ).
Apply = Callable[[Tensor], Tensor]


class Pairs:
    """The undirected graph of ``g`` (module docstring): every edge and its reverse, grouped by
    node pair. ``graph`` holds one edge per group (compacted) or all ``2E`` entries;
    ``group[i]`` is the group of entry ``i`` of ``[edges, reversed edges]``; ``share`` (or
    ``None`` when compacted) the share of its group's weight each stored entry carries."""

    def __init__(self, g: Graph) -> None:
        n, src, dst = g.num_nodes(), *g.edges()
        both_src, both_dst = torch.cat([src, dst]), torch.cat([dst, src])
        keys, order = torch.sort(both_dst * n + both_src)  # row-major: the CSR order
        first = torch.ones_like(keys, dtype=torch.bool)
        first[1:] = keys[1:] != keys[:-1]
        self.group = torch.empty_like(keys).scatter_(0, order, torch.cumsum(first, 0) - 1)
        if compiling() or g.device.type == "meta":  # fixed size: every entry stays stored
            counts = torch.zeros_like(keys).index_add_(0, self.group, torch.ones_like(keys))
            self.graph = Graph(both_src, both_dst, n, validate=False)
            self.size, self.share = keys.numel(), 1.0 / counts[self.group]
        else:  # one entry per pair: a value-dependent size, known here in eager mode
            pairs = keys[first]
            self.graph = Graph(pairs % n, pairs // n, n, validate=False)
            self.size, self.share = pairs.numel(), None

    def weights(self, edge_weight: Tensor | None) -> Tensor:
        """The weight of every stored entry: its pair's largest weight (or 1), shared out."""
        if edge_weight is None:
            top = torch.ones(self.size, device=self.group.device)
        else:
            both = torch.cat([edge_weight, edge_weight])
            top = both.new_zeros(self.size).scatter_reduce(0, self.group, both, "amax",
                                                           include_self=False)
        if self.share is None:
            return top
        return top[self.group] * self.share.to(top.dtype)


def undirected(g: Graph) -> Graph:
    """The undirected graph of ``g`` as JacobiConv's operator uses it (module docstring): one
    edge each way for every pair of nodes linked in either direction (self-loops once), as
    PyG's ``to_undirected``; in eager mode on a real device, compacted to one edge per pair and
    direction. Member graphs of a batch stay apart (edges only join nodes of one member); the
    result holds no features and no member counts."""
    return g.cached(("polynomial_filter", "pairs"), lambda: Pairs(g)).graph


def _degree_scale(ends: Tensor, weight: Tensor, n: int,
                  empty: float = 1.0) -> Callable[[torch.dtype], Tensor]:
    """:func:`~autogcn.propagation.degree_scale` of the weighted degrees counted at ``ends``."""
    degrees = weight.new_zeros(n).index_add(0, ends, weight)
    return lambda dtype: degree_scale(degrees, dtype, empty)


def _with_loops(g: Graph) -> Graph:
    n = g.num_nodes()
    loops = torch.arange(n, device=g.device)
    return Graph(torch.cat([g.src, loops]), torch.cat([g.dst, loops]), n, validate=False)


def filter_operator(g: Graph, kind: str, edge_weight: Tensor | None = None) -> Adjacency:
    """The normalised adjacency :math:`N` of ``kind`` (module docstring) for ``g`` and its
    ``edge_weight`` (``(E,)``, non-negative; ``None``: 1 per edge). Unweighted, it is built
    once per graph and kept on it (every layer of a forward pass, every epoch on one graph);
    weighted, per call, on the graph's structure kept on it."""
    if kind not in OPERATORS:
        raise ValueError(f"unknown filter operator {kind!r}; expected one of {OPERATORS}")
    if edge_weight is None:
        return g.cached(("polynomial_filter", kind), lambda: _build(g, kind, None))
    edge_weight = check_edge_weight(g, edge_weight)
    return constant_unless_learned(edge_weight, lambda: _build(g, kind, edge_weight))


def _build(g: Graph, kind: str, edge_weight: Tensor | None) -> Adjacency:
    if kind == "undirected":
        pairs = g.cached(("polynomial_filter", "pairs"), lambda: Pairs(g))
        w = pairs.weights(None if edge_weight is None
                          else edge_weight.to(factor_dtype(edge_weight.dtype)))
        scale = _degree_scale(pairs.graph.dst, w, g.num_nodes())
        return Adjacency(pairs.graph, scale, scale, w)
    # self-loops weigh 0 rather than being removed: a fixed-size step (module docstring)
    not_loop = g.cached(("polynomial_filter", "not_loop"), lambda: g.src != g.dst)
    w = not_loop.to(torch.float32) if edge_weight is None else \
        edge_weight.to(factor_dtype(edge_weight.dtype)) * not_loop
    if kind == "gcn":
        looped = g.cached(("polynomial_filter", "with_loops"), lambda: _with_loops(g))
        w = torch.cat([w, w.new_ones(g.num_nodes())])
        scale = _degree_scale(looped.dst, w, g.num_nodes())
        return Adjacency(looped, scale, scale, w)
    scale = _degree_scale(g.src, w, g.num_nodes(), empty=0.0)
    return Adjacency(g, scale, scale, w)


class PolynomialFilter(Explainable):
    """Base of the four filters: ``forward(x, edge_index, edge_weight=None)`` computes
    ``F(N) x`` per channel.

    Subclasses set :attr:`operator` (a kind of :func:`filter_operator`) and implement
    :meth:`polynomial`, the filter written in terms of one operation ``apply(v) = N v``; the
    same code then gives the graph filter (``apply`` = the sparse product) and the frequency
    response (``apply`` = multiplication by μ).

    Graph inputs, edge weights and checks are :class:`~autogcn.conv.AutoGCNConv`'s
    (``docs/layer.md``); unweighted, every form gives the official operator.

    Args:
        K (int): polynomial order (hops), at most :data:`MAX_ORDER`.
        channels (int): signal width; only filters with per-channel weights (JacobiConv) use
            it, and for them ``-1`` takes it from the first input.
    """

    operator = "gcn"
    #: Whether the filter has one response per channel (and so a fixed width).
    per_channel = False

    def __init__(self, K: int, channels: int = 1) -> None:
        super().__init__()
        check_size("K (the polynomial order)", K, MAX_ORDER)
        check_size("channels", channels, lazy=self.per_channel)
        self.K, self.channels = K, channels
        self.attach_explain_hooks()

    def explain_hops(self) -> int:
        return self.K

    def polynomial(self, apply: Apply, x: Tensor) -> Tensor:
        """``F(N) x`` with ``apply(v) = N v``."""
        raise NotImplementedError

    def coefficient_groups(self) -> dict[str, list[nn.Parameter]]:
        """The filter's parameters by optimiser group: ``"prop"`` (the coefficients, the
        papers' own learning rate and weight decay) and, for JacobiConv, ``"channel"``."""
        return {"prop": list(self.parameters())}

    def initialize_channels(self, channels: int) -> None:
        """Materialise the per-channel parameters of a filter built with ``channels=-1``."""
        raise NotImplementedError

    def forward(self, x: Tensor, edge_index: GraphInput,
                edge_weight: Tensor | None = None) -> Tensor:
        """``x`` (N, C) on the graph ``edge_index`` (any accepted form), with optional
        ``edge_weight`` (E,) → (N, C)."""
        _, op, x = self.prepare(x, edge_index, edge_weight)
        return self.polynomial(op, x)

    def prepare(self, x: Tensor, edge_index: GraphInput,
                edge_weight: Tensor | None) -> tuple[Graph, Adjacency, Tensor]:
        """The steps before the polynomial: the lazy width, the checks, the graph with the
        explainer's mask, its operator and ``x`` dense."""
        if self.channels == -1 and isinstance(x, Tensor) and x.dim() == 2 and not compiling():
            self.initialize_channels(x.shape[1])
        param = next(self.parameters())
        width = x.shape[-1] if isinstance(x, Tensor) and x.dim() == 2 else 1
        check_features(x, self.channels if self.per_channel else width, param.dtype,
                       "channels", param.device)
        g, weight = to_graph(edge_index, x.shape[0], edge_weight, x.device)
        weight = self.explained_weight(weight, g, x)
        return g, filter_operator(g, self.operator, weight), x.to_dense() if x.is_sparse else x

    def response_rows(self) -> int:
        """Rows of :meth:`frequency_response`: 1 (one filter for all channels) by default."""
        return 1

    def frequency_response(self, lam: Tensor | Sequence[float]) -> dict[str, Tensor]:
        """``{"filter": F(λ)}`` of shape ``(rows, len(lam))`` from the current coefficients
        (rows: 1, or one per channel for JacobiConv), λ = 1 − μ (module docstring)."""
        dtype = next(self.parameters()).dtype
        mu = (1.0 - torch.as_tensor(lam).detach().to(dtype)).reshape(-1, 1)
        with torch.no_grad():
            resp = self.polynomial(lambda v: mu * v, mu.new_ones(mu.shape[0],
                                                                 self.response_rows()))
        return {RESPONSE_KEY: resp.T.contiguous()}

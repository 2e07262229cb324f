r"""What the learned polynomial filters (GPR-GNN, BernNet, ChebNetII, JacobiConv) share.

Each of the four computes :math:`F(N)\,x` for a polynomial :math:`F` of order ``K`` in a
normalised adjacency :math:`N` of the graph, channel by channel, with learned coefficients. They
differ in :math:`N` (as each official implementation builds it), in the polynomial basis and in
how the coefficients are parameterised; those live in one module per model:
:mod:`autogcn.gprgnn`, :mod:`autogcn.bernnet`, :mod:`autogcn.chebnetii`,
:mod:`autogcn.jacobi`. Here:

* :func:`filter_operator`: the three operators :math:`N` the four use, built on the project's
  cached sparse products (:class:`~autogcn.propagation.Adjacency`), once per graph:

  ==============  ==========================================================  ==================
  kind            :math:`N`                                                   used by
  ==============  ==========================================================  ==================
  ``"gcn"``       :math:`\tilde D^{-1/2}(A + I)\tilde D^{-1/2}`, in-degrees    GPR-GNN
                  with the loop (PyG ``gcn_norm``; existing loops replaced by
                  one of weight 1)
  ``"laplacian"`` :math:`D^{-1/2} A D^{-1/2}` without self-loops, out-degrees  BernNet, ChebNetII
                  on both sides, :math:`0` for a node without out-edges (PyG
                  ``get_laplacian(..., "sym")`` gives :math:`L = I - N`)
  ``"undirected"`` :math:`D^{-1/2} A D^{-1/2}` of the graph made undirected    JacobiConv
                  (:func:`undirected`), degree 0 counted as 1
  ==============  ==========================================================  ==================

  No model symmetrises a directed graph except JacobiConv, whose pipeline always does; on a
  directed graph the other operators are not symmetric, as in the official code.
* :class:`PolynomialFilter`: the bare filter ``filter(x, graph)``, and
  :meth:`~PolynomialFilter.frequency_response`. Every response is written in
  :math:`\lambda = 1 - \mu` for :math:`\mu` an eigenvalue of the model's :math:`N`, i.e.
  :math:`\lambda` is an eigenvalue of :math:`I - N` (in :math:`[0, 2]` on an undirected graph;
  for GPR-GNN the Laplacian of the graph *with* self-loops). On a symmetric :math:`N = U
  \mathrm{diag}(\mu) U^\top` the filter's output is :math:`U \mathrm{diag}(F(1 - \mu)) U^\top
  x` (``tests/test_successors.py`` checks this against a dense eigendecomposition).

The benchmark puts each filter in its layer stack as ``layers.poly_filter.PolyFilterLayer``.
The operators drop self-loops and symmetrise by value-dependent selections, so a compiled
filter breaks its graph there (AutoGCNConv compiles whole).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from autogcn.graph import Graph
from autogcn.inputs import GraphInput, check_features, check_size, to_graph
from autogcn.propagation import Adjacency, normalized_adjacency

OPERATORS = ("gcn", "laplacian", "undirected")
#: The key of :meth:`PolynomialFilter.frequency_response`'s one entry.
RESPONSE_KEY = "filter"

#: ``v -> N v`` on ``(N, C)`` signals (or, for a response, ``v -> μ v`` on a grid of μ).
Apply = Callable[[Tensor], Tensor]


def undirected(g: Graph) -> Graph:
    """``g`` if every edge ``u → v`` has its ``v → u`` (edges kept as they are); else the graph
    with one edge each way for every pair linked in either direction (self-loops kept once),
    as PyG's ``to_undirected`` (which JacobiConv's pipeline applies to every graph). Member
    graphs of a batch stay apart. Node and edge features are not carried over."""
    n = g.num_nodes()
    forward, backward = g.src * n + g.dst, g.dst * n + g.src
    if torch.equal(torch.unique(forward), torch.unique(backward)):
        return g
    keys = torch.unique(torch.cat([forward, backward]))  # sorted by source: members stay apart
    src, dst = keys // n, keys % n
    counts = torch.bincount(g.node_graph_ids()[src], minlength=g.batch_size)
    return Graph(src, dst, n, batch_num_nodes=g.batch_num_nodes(), batch_num_edges=counts,
                 validate=False)


def _inverse_sqrt_or_zero(degrees: Tensor) -> Callable[[torch.dtype], Tensor]:
    """Per-node ``deg^(-1/2)``, ``0`` where ``deg = 0`` (PyG's ``inf -> 0``), as a function of
    the feature dtype (computed in at least float32, as
    :func:`~autogcn.propagation.degree_scale`)."""
    def scale(dtype: torch.dtype) -> Tensor:
        d = degrees.to(torch.promote_types(dtype, torch.float32))
        return torch.where(d > 0, d.clamp(min=1e-30).rsqrt(), torch.zeros_like(d)).to(dtype)

    return scale


def filter_operator(g: Graph, kind: str) -> Adjacency:
    """The normalised adjacency :math:`N` of ``kind`` (module docstring) for ``g``; built once
    per graph and kept on it (every layer of a forward pass, every epoch on one graph)."""
    if kind not in OPERATORS:
        raise ValueError(f"unknown filter operator {kind!r}; expected one of {OPERATORS}")

    def build() -> Adjacency:
        if kind == "gcn":
            return normalized_adjacency(g.remove_self_loops().add_self_loops(), "in")
        if kind == "undirected":
            return normalized_adjacency(undirected(g), "in")
        plain = g.remove_self_loops()
        scale = _inverse_sqrt_or_zero(plain.out_degrees())
        return Adjacency(plain, scale, scale)

    return g.cached(("polynomial_filter", kind), build)


class PolynomialFilter(nn.Module):
    """Base of the four filters: ``forward(x, edge_index)`` computes ``F(N) x`` per channel.

    Subclasses set :attr:`operator` (a kind of :func:`filter_operator`) and implement
    :meth:`polynomial`, the filter written in terms of one operation ``apply(v) = N v``; the
    same code then gives the graph filter (``apply`` = the sparse product) and the frequency
    response (``apply`` = multiplication by μ).

    Graph inputs are those of :class:`~autogcn.conv.AutoGCNConv` (:mod:`autogcn.inputs`):
    ``edge_index``, a ``torch.sparse`` or ``SparseTensor`` ``adj_t`` (its structure: the four
    official implementations take no edge weights, so its values are not used) or a
    :class:`~autogcn.graph.Graph`. Bad input raises a ``ValueError``/``TypeError`` naming it.

    Args:
        K (int): polynomial order (hops).
        channels (int): signal width; only filters with per-channel weights (JacobiConv) use it.
    """

    operator = "gcn"
    #: Whether the filter has one response per channel (and so a fixed width).
    per_channel = False

    def __init__(self, K: int, channels: int = 1) -> None:
        super().__init__()
        check_size("K (the polynomial order)", K)
        check_size("channels", channels)
        self.K, self.channels = K, channels

    def polynomial(self, apply: Apply, x: Tensor) -> Tensor:
        """``F(N) x`` with ``apply(v) = N v``."""
        raise NotImplementedError

    def coefficient_groups(self) -> dict[str, list[nn.Parameter]]:
        """The filter's parameters by optimiser group: ``"prop"`` (the coefficients, the
        papers' own learning rate and weight decay) and, for JacobiConv, ``"channel"``."""
        return {"prop": list(self.parameters())}

    def forward(self, x: Tensor, edge_index: GraphInput) -> Tensor:
        """``x`` (N, C) on the graph ``edge_index`` (any accepted form) → (N, C)."""
        dtype = next(self.parameters()).dtype
        width = x.shape[-1] if isinstance(x, Tensor) and x.dim() == 2 else 1
        check_features(x, self.channels if self.per_channel else width, dtype, "channels")
        g, _ = to_graph(edge_index, x.shape[0])
        op = filter_operator(g, self.operator)
        return self.polynomial(op, x.to_dense() if x.is_sparse else x)

    def response_rows(self) -> int:
        """Rows of :meth:`frequency_response`: 1 (one filter for all channels) by default."""
        return 1

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"

    def frequency_response(self, lam: Tensor) -> dict[str, Tensor]:
        """``{"filter": F(λ)}`` of shape ``(rows, len(lam))`` from the current coefficients
        (rows: 1, or one per channel for JacobiConv), λ = 1 − μ (module docstring)."""
        dtype = next(self.parameters()).dtype
        mu = (1.0 - lam.detach().to(dtype)).reshape(-1, 1)
        with torch.no_grad():
            resp = self.polynomial(lambda v: mu * v, mu.new_ones(mu.shape[0],
                                                                 self.response_rows()))
        return {RESPONSE_KEY: resp.T.contiguous()}

r"""What the learned polynomial filters (GPR-GNN, BernNet, ChebNetII, JacobiConv) share.

Each of the four computes :math:`F(N)\,x` for a polynomial :math:`F` of order ``K`` in a
normalised adjacency :math:`N` of the graph, channel by channel, with learned coefficients. They
differ in :math:`N` (as each official implementation builds it), in the polynomial basis and in
how the coefficients are parameterised; those live in one module per model:
:mod:`layers.gprgnn_layer`, :mod:`layers.bernnet_layer`, :mod:`layers.chebnetii_layer`,
:mod:`layers.jacobi_layer`. Here:

* :func:`filter_operator`: the three operators :math:`N` the four use, built on the project's
  cached sparse products (:class:`~layers.propagation.Adjacency`), once per graph:

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
* :class:`PolyFilterLayer`: a filter inside the benchmarking-gnns layer stack (ZINC, SBM,
  superpixels). The papers give no graph-level architecture; the project's choice, built like
  its ChebNet and AutoGCN layers, is

  .. math::
      h' = \mathrm{post}\big(F(N)\, \mathrm{dropout}_{dprate}(x W) + b\big)

  with a bias-free :math:`W` (PyTorch's default init), one bias (init 0) and the shared
  post-processing (graph norm, batch norm, activation, residual, dropout). Parameters:
  ``in·out + out`` + the filter's + ``2·out`` (batch norm, always allocated as in the
  release). Projecting first, as the papers' node-classification nets do (MLP, then
  propagate), puts ``dprate`` where they put it: on the signal entering the filter.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from data.graph import Graph
from layers.post_processing import PostProcess
from layers.propagation import Adjacency, as_graph, normalized_adjacency

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
    return Graph(src, dst, n, batch_num_nodes=g.batch_num_nodes(), batch_num_edges=counts)


def _inverse_sqrt_or_zero(degrees: Tensor) -> Callable[[torch.dtype], Tensor]:
    """Per-node ``deg^(-1/2)``, ``0`` where ``deg = 0`` (PyG's ``inf -> 0``), as a function of
    the feature dtype (computed in at least float32, as
    :func:`~layers.propagation.degree_scale`)."""
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
    """Base of the four filters: ``forward(x, graph)`` computes ``F(N) x`` per channel.

    Subclasses set :attr:`operator` (a kind of :func:`filter_operator`) and implement
    :meth:`polynomial`, the filter written in terms of one operation ``apply(v) = N v``; the
    same code then gives the graph filter (``apply`` = the sparse product) and the frequency
    response (``apply`` = multiplication by μ).

    Args:
        K (int): polynomial order (hops).
        channels (int): signal width; only filters with per-channel weights (JacobiConv) use it.
    """

    operator = "gcn"

    def __init__(self, K: int, channels: int = 1) -> None:
        super().__init__()
        if K < 1:
            raise ValueError(f"the polynomial order K must be at least 1, got {K}")
        self.K, self.channels = K, channels

    def polynomial(self, apply: Apply, x: Tensor) -> Tensor:
        raise NotImplementedError

    def coefficient_groups(self) -> dict[str, list[nn.Parameter]]:
        """The filter's parameters by optimiser group: ``"prop"`` (the coefficients, the
        papers' own learning rate and weight decay) and, for JacobiConv, ``"channel"``."""
        return {"prop": list(self.parameters())}

    def forward(self, x: Tensor, graph: Graph | Tensor) -> Tensor:
        """``x`` (N, C) on a :class:`~data.graph.Graph` or a ``(2, E)`` edge index → (N, C)."""
        op = filter_operator(as_graph(graph, x.shape[0]), self.operator)
        return self.polynomial(op, x.to_dense() if x.is_sparse else x)

    def response_rows(self) -> int:
        """Rows of :meth:`frequency_response`: 1 (one filter for all channels) by default."""
        return 1

    def frequency_response(self, lam: Tensor) -> dict[str, Tensor]:
        """``{"filter": F(λ)}`` of shape ``(rows, len(lam))`` from the current coefficients
        (rows: 1, or one per channel for JacobiConv), λ = 1 − μ (module docstring)."""
        dtype = next(self.parameters()).dtype
        mu = (1.0 - lam.detach().to(dtype)).reshape(-1, 1)
        with torch.no_grad():
            resp = self.polynomial(lambda v: mu * v, mu.new_ones(mu.shape[0],
                                                                 self.response_rows()))
        return {RESPONSE_KEY: resp.T.contiguous()}


class PolyFilterLayer(nn.Module):
    """A :class:`PolynomialFilter` in the benchmarking-gnns layer stack (module docstring):
    ``post(F(N) dropout_dprate(x W) + b)``.

    Args:
        filt: the filter, over ``out_dim`` channels.
        in_dim, out_dim: feature widths.
        activation: e.g. ``torch.relu``; ``None`` on an output layer.
        dropout: the post-processing's dropout (last).
        dprate: dropout on the signal entering the filter.
        graph_norm, batch_norm, residual: the shared post-processing.
    """

    def __init__(self, filt: PolynomialFilter, in_dim: int, out_dim: int,
                 activation: Callable[[Tensor], Tensor] | None = torch.relu,
                 dropout: float = 0.0, dprate: float = 0.0, graph_norm: bool = True,
                 batch_norm: bool = True, residual: bool = False) -> None:
        super().__init__()
        self.in_dim, self.out_dim = in_dim, out_dim
        self.linear = nn.Linear(in_dim, out_dim, bias=False)
        self.prop_dropout = nn.Dropout(dprate)
        self.filter = filt
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.post = PostProcess(in_dim, out_dim, activation, dropout, graph_norm, batch_norm,
                                residual)

    def forward(self, g: Graph, feat: Tensor, snorm_n: Tensor | None = None) -> Tensor:
        """``feat`` (N, in_dim) → (N, out_dim)."""
        h = self.filter(self.prop_dropout(self.linear(feat)), g)
        return self.post(feat, h + self.bias, snorm_n)

    def frequency_response(self, lam: Tensor) -> dict[str, Tensor]:
        """The filter's response (:meth:`PolynomialFilter.frequency_response`)."""
        return self.filter.frequency_response(lam)

    def extra_repr(self) -> str:
        return f"{self.in_dim}, {self.out_dim}"

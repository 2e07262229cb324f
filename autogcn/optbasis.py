r"""OptBasisGNN's learned orthonormal basis (Guo & Wei, ICML 2023).

`Graph Neural Networks with Learnable and Optimal Polynomial Bases
<https://arxiv.org/abs/2302.12432>`__, as its official code computes it.

Unlike the four filters of :mod:`autogcn.polynomial`, the basis is not fixed: for each channel
it is the orthonormal basis of the Krylov space of that channel's own signal, built by a
three-term (Lanczos) recurrence. So the filter is a polynomial in :math:`\hat A` whose
coefficients depend on the signal: there is no frequency response shared by all inputs.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from autogcn.inputs import GraphInput
from autogcn.polynomial import RESPONSE_KEY, Apply, PolynomialFilter

#: The official code's floor on the norms it divides by (a zero channel stays zero).
NORM_FLOOR = 1e-8


class InnerProduct:
    """Per-channel inner products over the nodes of each graph: ``ip(u, v)`` is ``(R, C)``, one
    row per graph (``R = 1`` for one graph), and ``ip.spread(t)`` gives each node its graph's row
    of ``t`` (for one graph, broadcasting does it). ``graph_ids``: each node's graph in a batch;
    ``num_graphs``: their number, when known without reading the ids (else ``N``, a bound)."""

    def __init__(self, graph_ids: Tensor | None = None, num_graphs: int | None = None) -> None:
        self.graph_ids = graph_ids
        self.rows = num_graphs if num_graphs is not None or graph_ids is None \
            else graph_ids.shape[0]

    def __call__(self, u: Tensor, v: Tensor) -> Tensor:
        if self.graph_ids is None:
            return torch.linalg.vecdot(u, v, dim=0).unsqueeze(0)  # one pass, no (N, C) temporary
        prod = u * v
        return prod.new_zeros(self.rows, prod.shape[1]).index_add_(0, self.graph_ids, prod)

    def spread(self, t: Tensor) -> Tensor:
        return t if self.graph_ids is None else t[self.graph_ids]


def normalise(v: Tensor, ip: InnerProduct) -> tuple[Tensor, Tensor]:
    r"""``(v / c, c)`` with :math:`c = \max(\|v\|, 10^{-8})` per channel, the official
    value; where the floor acts (a channel that ReLU and dropout zeroed, a Krylov space
    exhausted) the quotient is held constant for autograd. Its true derivative there is
    :math:`10^8` per step, so the official recurrence without its noise (which keeps every norm
    above the floor) sends :math:`10^{8k}` back through ``k`` steps: float32 overflows after
    about five and the NaN reaches every weight (Squirrel, ``dprate`` 0.5, ``K`` 20). For a
    zeroed channel the mask upstream has a zero derivative, so the weights' gradients are the
    exact ones; for an exhausted space the dropped part is amplified rounding noise."""
    squared = ip(v, v)
    on_floor = ip.spread(squared <= NORM_FLOOR**2)
    # floored before the root, whose derivative at 0 is infinite
    c = squared.clamp(min=NORM_FLOOR**2).sqrt()
    h = v / ip.spread(c)
    return torch.where(on_floor, h.detach(), h), c


def lanczos_basis(apply: Apply, x: Tensor, K: int, ip: InnerProduct | None = None
                  ) -> tuple[list[Tensor], Tensor]:
    r"""The orthonormal basis :math:`h_0..h_K` of each channel's Krylov space
    :math:`\mathrm{span}\{x, \hat A x, \dots, \hat A^K x\}`, and the recurrence coefficients.

    .. math::
        h_0 = \frac{x}{\|x\|}, \qquad
        v = \hat A h_k - a_k h_k - b_k h_{k-1}, \qquad h_{k+1} = \frac{v}{c_k}

    with :math:`a_k = \langle \hat A h_k, h_k \rangle`, :math:`b_k = \langle \hat A h_k - a_k
    h_k, h_{k-1} \rangle` (the official order: each projection taken from the already reduced
    vector), :math:`c_k = \max(\|v\|, 10^{-8})` and :math:`h_{-1} = 0`, per channel; inner
    products and norms run over the nodes of each graph (``ip``; default: one graph). In exact
    arithmetic on a symmetric :math:`\hat A` the :math:`h_k` are orthonormal; in floating point
    they drift, as in the official code (no reorthogonalisation). ``K`` sparse products.

    Returns the list :math:`[h_0, \dots, h_K]` and ``coefficients`` of shape
    ``(K + 1, 3, R, C)``: row 0 holds :math:`(\|x\|, 0, 0)` (the floored norm), row ``k + 1``
    holds :math:`(a_k, b_k, c_k)`; ``R`` is the number of rows ``ip`` gives (1 for one graph).
    """
    ip = ip or InnerProduct()
    h, norm = normalise(x, ip)
    basis, prev = [h], None
    zero = torch.zeros_like(norm)
    rows = [torch.stack([norm, zero, zero])]
    for _ in range(K):
        v = apply(h)
        a = ip(v, h)
        v = torch.addcmul(v, ip.spread(a), h, value=-1.0)  # elementwise passes dominate the cost
        b = zero
        if prev is not None:  # h_{-1} = 0: nothing to remove at the first step
            b = ip(v, prev)
            v = torch.addcmul(v, ip.spread(b), prev, value=-1.0)
        prev, (h, c) = h, normalise(v, ip)
        basis.append(h)
        rows.append(torch.stack([a, b, c]))
    return basis, torch.stack(rows)


def basis_polynomials(coefficients: Tensor, mu: Tensor) -> Tensor:
    r"""The polynomials :math:`q_k` with :math:`h_k = q_k(\hat A)\, x` (per channel) at the
    points ``mu``: :math:`q_{-1} = 0`, :math:`q_0 = 1/\|x\|`, :math:`q_{k+1}(\mu) = ((\mu -
    a_k) q_k(\mu) - b_k q_{k-1}(\mu)) / c_k`, from the ``coefficients`` of
    :func:`lanczos_basis` for one graph. Returns ``(K + 1, len(mu), C)``."""
    coefficients = coefficients[:, :, 0]  # (K + 1, 3, C)
    mu = mu.reshape(-1, 1)
    q = [(1.0 / coefficients[0, 0]).expand(mu.shape[0], -1)]
    prev = torch.zeros_like(q[0])
    for a, b, c in coefficients[1:]:
        prev, q_next = q[-1], ((mu - a) * q[-1] - b * prev) / c
        q.append(q_next)
    return torch.stack(q)


class OptBasisProp(PolynomialFilter):
    r"""OptBasisGNN's filter: per channel :math:`c`, the orthonormal polynomial basis of its
    own signal (:func:`lanczos_basis`) combined with learned weights,

    .. math::
        \mathrm{out}_c = \sum_{k=0}^{K} \alpha_{c,k}\, h_{c,k}, \qquad
        h_{c,k} = q_{c,k}(\hat A)\, x_c, \qquad \hat A = D^{-1/2} A D^{-1/2}

    where :math:`q_{c,0}, \dots, q_{c,K}` are the polynomials orthonormal under the spectral
    measure of :math:`x_c` (weights :math:`(u_i^\top x_c)^2` at the eigenvalues :math:`\mu_i`
    of :math:`\hat A`): the paper's "optimal basis" for that signal. :math:`\hat A` is the
    official operator (PyG ``gcn_norm`` with ``add_self_loops=False`` on the undirected graph
    its loaders build): :func:`~autogcn.polynomial.filter_operator` ``"undirected"``, which
    symmetrises a directed graph (the recurrence orthonormalises only for a symmetric
    operator) and adds no self-loops. :math:`\alpha` starts at :math:`e_0` (official): the
    filter starts as :math:`x_c / \|x_c\|`, and, as in the official code, the output is not
    scaled back by :math:`\|x_c\|`. On a batch the inner products run over each member graph.
    Unlike the official net, no noise is added to the signal: a zero channel stays zero
    (``docs/layer.md``, *OptBasisGNN*).

    ================  =====================================================================
    operator          :math:`\hat A` of the undirected graph, no self-loops added
    response          none fixed: for a given signal :math:`x`, channel :math:`c` sees
                      :math:`F_c(\lambda) = \sum_k \alpha_{c,k} q_{c,k}(1 - \lambda)`
                      (:meth:`frequency_response` with ``x`` and its graph)
    parameters        ``(K + 1)·channels`` (α)
    ================  =====================================================================

    Args:
        channels (int): signal width (one set of weights per channel; the official net: 64).
        K (int): order (official: 12 on PubMed, 20 on Squirrel).

    Shapes: ``x`` (N, channels) → (N, channels).

    Example::

        >>> prop = OptBasisProp(channels=4, K=3)
        >>> prop(torch.randn(3, 4), torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])).shape
        torch.Size([3, 4])
    """

    operator = "undirected"
    per_channel = True

    def __init__(self, channels: int, K: int = 10) -> None:
        super().__init__(K, channels)
        self.alpha = nn.Parameter(torch.empty(channels, K + 1)) if channels != -1 \
            else nn.UninitializedParameter()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.channels != -1:
            with torch.no_grad():
                self.alpha.zero_()
                self.alpha[:, 0] = 1.0

    def initialize_channels(self, channels: int) -> None:
        self.alpha.materialize((channels, self.K + 1))
        self.channels = channels
        self.reset_parameters()

    def forward(self, x: Tensor, edge_index: GraphInput, edge_weight: Tensor | None = None,
                batch: Tensor | None = None) -> Tensor:
        """``x`` (N, channels) on the graph ``edge_index`` with optional ``edge_weight``, as
        :meth:`PolynomialFilter.forward` takes them → (N, channels). ``batch`` (N,): each
        node's graph in a batch of disjoint graphs (PyG's ``batch`` vector; a batched
        :class:`~autogcn.graph.Graph` carries its own)."""
        apply, ip, x = self._operator(x, edge_index, edge_weight, batch)
        return self.combine(lanczos_basis(apply, x, self.K, ip)[0])

    def _operator(self, x: Tensor, edge_index: GraphInput, edge_weight: Tensor | None,
                  batch: Tensor | None) -> tuple[Apply, InnerProduct, Tensor]:
        """:meth:`PolynomialFilter.prepare`'s operator and ``x``, and the inner product over
        each graph."""
        g, op, x = self.prepare(x, edge_index, edge_weight)
        if batch is None:  # a batched Graph knows its size: no read of the ids
            ip = InnerProduct(g.node_graph_ids(), g.batch_size) if g.batch_size > 1 \
                else InnerProduct()
        elif batch.dim() != 1 or batch.shape[0] != x.shape[0]:
            raise ValueError(f"batch must hold one graph id per node ({x.shape[0]},), got "
                             f"{tuple(batch.shape)}")
        else:
            ip = InnerProduct(batch.to(x.device))
        return op, ip, x

    def combine(self, basis: list[Tensor]) -> Tensor:
        r""":math:`\sum_k \alpha_{c,k} h_{c,k}`, channel by channel."""
        out = basis[0] * self.alpha[:, 0]
        for k in range(1, self.K + 1):
            out = torch.addcmul(out, basis[k], self.alpha[:, k])
        return out

    def polynomial(self, apply: Apply, x: Tensor) -> Tensor:
        """The filter on one graph (the base class's contract); not a polynomial with fixed
        coefficients: they come from ``x``."""
        return self.combine(lanczos_basis(apply, x, self.K)[0])

    def response_rows(self) -> int:
        return self.channels

    def frequency_response(self, lam: Tensor, x: Tensor | None = None,
                           edge_index: GraphInput | None = None,
                           edge_weight: Tensor | None = None) -> dict[str, Tensor]:
        r"""``{"filter": F(λ)}`` of shape ``(channels, len(lam))`` for the signal ``x`` on
        the graph ``edge_index`` (one graph, optional ``edge_weight``): :math:`F_c(\lambda) =
        \sum_k \alpha_{c,k} q_{c,k}(1 - \lambda)`, so that the output is :math:`U
        \mathrm{diag}(F_c(1 - \mu)) U^\top x_c` for :math:`\hat A = U \mathrm{diag}(\mu)
        U^\top`. The basis is built on the signal, so without one there is no response: a
        ``ValueError`` says so."""
        if x is None or edge_index is None:
            raise ValueError("OptBasisProp has no fixed frequency response: its basis is "
                             "orthonormalised on each input signal; pass the signal and its "
                             "graph, frequency_response(lam, x, edge_index)")
        with torch.no_grad():
            apply, ip, x = self._operator(x, edge_index, edge_weight, None)
            if ip.graph_ids is not None:
                raise ValueError("frequency_response takes one graph, got a batch")
            coefficients = lanczos_basis(apply, x, self.K)[1]
            q = basis_polynomials(coefficients, 1.0 - lam.to(coefficients.dtype))
            resp = torch.einsum("klc,ck->cl", q, self.alpha.to(q.dtype))
        return {RESPONSE_KEY: resp.contiguous()}

    def extra_repr(self) -> str:
        return (f"channels={self.channels}, K={self.K}, basis=orthonormal per signal "
                f"(Lanczos), operator=D^-1/2AD^-1/2 (undirected)")

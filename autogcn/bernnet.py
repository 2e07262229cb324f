r"""BernNet's Bernstein-polynomial filter (He, Wei, Huang, Xu, NeurIPS 2021).

`BernNet: Learning Arbitrary Graph Spectral Filters via Bernstein Approximation
<https://arxiv.org/abs/2106.10994>`__, as its official code computes it.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from autogcn.polynomial import Apply, PolynomialFilter


class BernNetProp(PolynomialFilter):
    r"""BernNet's filter: a polynomial in the Bernstein basis on :math:`[0, 2]`,

    .. math::
        F(L)\, x = \sum_{k=0}^{K} \mathrm{relu}(\theta_k) \binom{K}{k} \frac{1}{2^K}
        L^k (2I - L)^{K-k} x, \qquad L = I - D^{-1/2} A D^{-1/2}

    with :math:`L` PyG's ``get_laplacian(..., "sym")``: self-loops removed, out-degrees on both
    sides, a node without edges getting :math:`L_{vv} = 1`
    (:func:`~autogcn.polynomial.filter_operator` ``"laplacian"``, :math:`N = I - L`,
    :math:`2I - L = I + N`). The relu keeps every coefficient non-negative; :math:`\theta_k = 1`
    at initialisation (the official default), which makes the filter all-pass
    (:math:`\sum_k \binom{K}{k} (\lambda/2)^k (1 - \lambda/2)^{K-k} = 1`).

    ================  =====================================================================
    operator          :math:`L = I - N`, no self-loops, out-degree; :math:`\lambda \in [0, 2]`
                      on an undirected graph
    response          :math:`F(\lambda) = \sum_k \mathrm{relu}(\theta_k) \binom{K}{k}
                      (\lambda/2)^k (1 - \lambda/2)^{K-k}`
    parameters        ``K + 1``
    ================  =====================================================================

    The official loop applies :math:`L` to every power :math:`(2I - L)^{K-k} x` separately
    (``K + K(K+1)/2`` sparse products). The same sum is computed here with ``2K``, by the
    nesting :math:`S_K = c_K x`, :math:`S_j = c_j (2I - L)^{K-j} x + L S_{j+1}`,
    :math:`S_0 = F(L)x` (:math:`c_k` the coefficients above); the result is the same
    polynomial, up to floating-point rounding.

    Args:
        K (int): order (default 10, the official value).

    Shapes: ``x`` (N, C) → (N, C); the filter is shared by the channels.
    """

    operator = "laplacian"

    def __init__(self, K: int = 10) -> None:
        super().__init__(K)
        self.theta = nn.Parameter(torch.empty(K + 1))
        weights = torch.tensor([math.comb(K, k) / 2.0**K for k in range(K + 1)],
                               dtype=torch.float64)
        # a constant (not in the state dict); float64, cast to the coefficients' dtype on use
        self.register_buffer("binomial", weights, persistent=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.ones_(self.theta)

    def coefficients(self) -> Tensor:
        r""":math:`c_k = \mathrm{relu}(\theta_k) \binom{K}{k} / 2^K`."""
        return torch.relu(self.theta) * self.binomial.to(self.theta.dtype)

    def polynomial(self, apply: Apply, x: Tensor) -> Tensor:
        c = self.coefficients()
        powers = [x]  # (2I - L)^j x = (I + N)^j x
        for _ in range(self.K):
            powers.append(powers[-1] + apply(powers[-1]))
        out = c[self.K] * x
        for k in range(self.K - 1, -1, -1):
            out = out - apply(out) + c[k] * powers[self.K - k]  # L S_{k+1} + c_k (2I-L)^{K-k} x
        return out

    def extra_repr(self) -> str:
        return f"K={self.K}, basis=Bernstein, coefficients=relu(theta), operator=I-D^-1/2AD^-1/2"

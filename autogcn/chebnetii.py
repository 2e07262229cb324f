r"""ChebNetII's Chebyshev-interpolation filter (He, Wei, Wen, NeurIPS 2022).

`Convolutional Neural Networks on Graphs with Chebyshev Approximation, Revisited
<https://arxiv.org/abs/2202.03580>`__, as its official code computes it.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from autogcn.polynomial import Apply, PolynomialFilter


def chebyshev_nodes(K: int) -> Tensor:
    r"""ChebNetII's interpolation nodes in the official order, float64:
    :math:`x_j = \cos\big((K - j + \tfrac12)\pi / (K + 1)\big)`, :math:`j = 0..K`, rising from
    near :math:`-1` (:math:`\lambda = 1 + x_j \approx 0`, low frequencies) to near :math:`+1`."""
    return torch.tensor([math.cos((K - j + 0.5) * math.pi / (K + 1)) for j in range(K + 1)],
                        dtype=torch.float64)


def chebyshev_table(x: Tensor, K: int) -> Tensor:
    r""":math:`T_i(x_j)` for :math:`i = 0..K` (rows) and every entry of ``x`` (columns), by
    :math:`T_0 = 1`, :math:`T_1 = x`, :math:`T_i = 2x T_{i-1} - T_{i-2}`."""
    rows = [torch.ones_like(x), x]
    for _ in range(2, K + 1):
        rows.append(2 * x * rows[-1] - rows[-2])
    return torch.stack(rows[: K + 1])


class ChebNetIIProp(PolynomialFilter):
    r"""ChebNetII's filter: the Chebyshev interpolant of learned, non-negative values at the
    Chebyshev nodes,

    .. math::
        F(\tilde L)\, x = \frac{c_0}{2} x + \sum_{i=1}^{K} c_i T_i(\tilde L)\, x, \qquad
        c_i = \frac{2}{K+1} \sum_{j=0}^{K} \mathrm{relu}(\gamma_j)\, T_i(x_j)

    with :math:`\tilde L = L - I = -D^{-1/2} A D^{-1/2}` (PyG's ``get_laplacian(..., "sym")``
    minus the identity: no self-loops, out-degrees; :func:`~autogcn.polynomial.filter_operator`
    ``"laplacian"``, :math:`\tilde L = -N`), the Chebyshev recurrence
    :math:`T_0 x = x`, :math:`T_1 x = \tilde L x`, :math:`T_k x = 2\tilde L T_{k-1} x - T_{k-2} x`
    (``K`` sparse products) and the nodes :math:`x_j` of :func:`chebyshev_nodes`. Then
    :math:`F(1 + x_j) = \mathrm{relu}(\gamma_j)` exactly: :math:`\gamma_j` is the response at
    :math:`\lambda_j = 1 + x_j`. :math:`\gamma_j = 1` at initialisation (the official default:
    :math:`c_0/2 = 1`, :math:`c_{i \ge 1} = 0`, an all-pass filter).

    ================  =====================================================================
    operator          :math:`L = I - N`, no self-loops, out-degree; :math:`\lambda \in [0, 2]`
                      on an undirected graph
    response          :math:`F(\lambda) = c_0/2 + \sum_{i \ge 1} c_i T_i(\lambda - 1)`
    parameters        ``K + 1``
    ================  =====================================================================

    (The official code's variant for semi-supervised Chameleon/Squirrel, ``ChebNetII_V``, and
    its non-homophilous code, which drops the relu, are not reproduced.)

    Args:
        K (int): order (default 10, the official value).

    Shapes: ``x`` (N, C) → (N, C); the filter is shared by the channels.
    """

    operator = "laplacian"

    def __init__(self, K: int = 10) -> None:
        super().__init__(K)
        self.gamma = nn.Parameter(torch.empty(K + 1))
        # T_i(x_j), a constant (not in the state dict); float64, cast on use
        table = chebyshev_table(chebyshev_nodes(K), K)
        self.register_buffer("table", table, persistent=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.ones_(self.gamma)

    def coefficients(self) -> Tensor:
        r"""The Chebyshev coefficients :math:`c_0..c_K` (:math:`c_0` not yet halved)."""
        return (2.0 / (self.K + 1)) * (self.table.to(self.gamma.dtype) @ torch.relu(self.gamma))

    def polynomial(self, apply: Apply, x: Tensor) -> Tensor:
        c = self.coefficients()
        t0, t1 = x, -apply(x)  # T_1 x = (L - I) x = -N x
        out = (c[0] / 2) * t0 + c[1] * t1
        for i in range(2, self.K + 1):
            t0, t1 = t1, -2 * apply(t1) - t0
            out = out + c[i] * t1
        return out

    def extra_repr(self) -> str:
        return f"K={self.K}, basis=Chebyshev interpolation, coefficients=relu(gamma), " \
               "operator=-D^-1/2AD^-1/2"

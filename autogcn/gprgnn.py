r"""GPR-GNN's generalised PageRank propagation (Chien, Peng, Li, Milenkovic, ICLR 2021).

`Adaptive Universal Generalized PageRank Graph Neural Network
<https://arxiv.org/abs/2006.07988>`__, as its official code computes it.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from autogcn.inputs import check_float
from autogcn.polynomial import Apply, PolynomialFilter


def ppr_coefficients(K: int, alpha: float) -> Tensor:
    r"""GPR-GNN's PPR initialisation, float64: :math:`\gamma_k = \alpha(1-\alpha)^k` for
    :math:`k < K` and :math:`\gamma_K = (1-\alpha)^K`, so that :math:`\sum_k \gamma_k = 1`
    (:math:`\alpha = 1`: :math:`\gamma = e_0`, :math:`F \equiv 1`; :math:`\alpha = 0`:
    :math:`\gamma = e_K`, :math:`F(\mu) = \mu^K`)."""
    k = torch.arange(K + 1, dtype=torch.float64)
    gamma = alpha * (1.0 - alpha) ** k
    gamma[K] = (1.0 - alpha) ** K
    return gamma


class GPRGNNProp(PolynomialFilter):
    r"""GPR-GNN's filter: a learned polynomial in the monomial basis,

    .. math::
        F(\hat A)\, x = \sum_{k=0}^{K} \gamma_k \hat A^k x, \qquad
        \hat A = \tilde D^{-1/2} (A + I) \tilde D^{-1/2}

    (PyG's ``gcn_norm``: a self-loop of weight 1 on every node, in-degrees counting it, on
    both sides; :func:`~autogcn.polynomial.filter_operator` ``"gcn"``), computed by ``K``
    repeated products. :math:`\gamma \in \mathbb{R}^{K+1}` is unconstrained (no relu, no
    normalisation) and initialised by :func:`ppr_coefficients` (the official default
    ``--Init PPR``, ``alpha = 0.1``).

    ================  =====================================================================
    operator          :math:`\hat A`, self-loops, in-degree; eigenvalues :math:`\mu \in (-1, 1]`
                      on an undirected graph
    response          :math:`F(\lambda) = \sum_k \gamma_k (1 - \lambda)^k` with
                      :math:`\lambda = 1 - \mu`, an eigenvalue of the Laplacian of the graph
                      *with* self-loops (:math:`\lambda \in [0, 2)`)
    parameters        ``K + 1``
    ================  =====================================================================

    Args:
        K (int): order (default 10, the official value).
        alpha (float): the PPR initialisation's teleport probability (default 0.1).

    Shapes: ``x`` (N, C) on a graph of N nodes → (N, C); the filter is shared by the channels.

    Example::

        >>> prop = GPRGNNProp(K=10, alpha=0.1)
        >>> prop(torch.randn(3, 4), torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])).shape
        torch.Size([3, 4])
    """

    operator = "gcn"

    def __init__(self, K: int = 10, alpha: float = 0.1) -> None:
        alpha = check_float("alpha", alpha)
        super().__init__(K)
        self.alpha = alpha
        self.gamma = nn.Parameter(torch.empty(K + 1))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.gamma.copy_(ppr_coefficients(self.K, self.alpha))

    def polynomial(self, apply: Apply, x: Tensor) -> Tensor:
        out = self.gamma[0] * x
        for k in range(1, self.K + 1):
            x = apply(x)
            out = out + self.gamma[k] * x
        return out

    def extra_repr(self) -> str:
        return f"K={self.K}, init=PPR(alpha={self.alpha}), operator=gcn_norm(A+I)"

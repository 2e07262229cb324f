r"""JacobiConv's Jacobi-basis filter with polynomial coefficient decomposition (Wang & Zhang,
ICML 2022).

`How Powerful are Spectral Graph Neural Networks <https://arxiv.org/abs/2205.11172>`__, as its
official code computes it.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from autogcn.inputs import check_float
from autogcn.polynomial import Apply, PolynomialFilter


def jacobi_recurrence(k: int, a: float, b: float) -> tuple[float, float, float]:
    r"""``(A_k, B_k, C_k)`` of the official code's three-term recurrence, ``k >= 2``:
    :math:`P_k(z) = (A_k z - B_k) P_{k-1}(z) - C_k P_{k-2}(z)` with
    :math:`D_k = 2k(k+a+b)(2k+a+b-2)`,
    :math:`A_k = (2k+a+b-1)(2k+a+b)(2k+a+b-2)/D_k`,
    :math:`B_k = (2k+a+b-1)(a^2-b^2)/D_k`,
    :math:`C_k = 2(k+a-1)(k+b-1)(2k+a+b)/D_k`.

    The textbook Jacobi recurrence has :math:`+(a^2 - b^2)` where the official code has
    :math:`-` (so its :math:`P_k` differ from ``scipy.special.eval_jacobi(k, a, b, z)`` for
    ``k >= 2`` when ``a != b``; they span the same polynomials). The code's sign is kept: it is
    the model the published numbers come from.
    """
    s = 2 * k + a + b
    d = 2 * k * (k + a + b) * (s - 2)
    return (s - 1) * s * (s - 2) / d, (s - 1) * (a * a - b * b) / d, \
        2 * (k + a - 1) * (k + b - 1) * s / d


class JacobiConvProp(PolynomialFilter):
    r"""JacobiConv's filter: Jacobi polynomials :math:`P_k^{(a,b)}` of the normalised adjacency,
    each scaled by a product of learned factors (PCD) and combined per channel,

    .. math::
        F_c(\hat A)\, x_c = \sum_{k=0}^{K} w_{k,c}\, \beta_k\, P_k(\hat A)\, x_c, \qquad
        \beta_k = \prod_{i<k} \alpha \tanh(\eta_i), \qquad \hat A = D^{-1/2} A D^{-1/2}

    with :math:`\hat A` built on the graph made undirected (JacobiConv's pipeline symmetrises
    every graph), no self-loops added, degree 0 counted as 1
    (:func:`~autogcn.polynomial.filter_operator` ``"undirected"``). The basis runs on
    :math:`[-1, 1]`: :math:`P_0 = 1`, :math:`P_1(z) = (a-b)/2 + (a+b+2)/2\, z`, then
    :func:`jacobi_recurrence` (``K`` sparse products), with the factors inside the recurrence
    as in the official code (:math:`\beta_k P_k x` from the two terms before it, multiplied by
    :math:`\gamma_{k-1} = \alpha\tanh(\eta_{k-1})` and :math:`\gamma_{k-1}\gamma_{k-2}`: the
    same polynomial). Initialisation (official): :math:`\eta_i = \min(1/\alpha, 1)`,
    :math:`w = 1`. :math:`\eta_K` is allocated and counted, as in the official code, but no
    basis uses it.

    ================  =====================================================================
    operator          :math:`\hat A` of the undirected graph; :math:`z \in [-1, 1]`
    response          :math:`F_c(\lambda) = \sum_k w_{k,c} \beta_k P_k(1 - \lambda)`, one
                      per channel
    parameters        ``(K + 1)`` (η) ``+ (K + 1)·channels`` (w)
    ================  =====================================================================

    Args:
        channels (int): signal width (one response per channel); ``-1``: the first input's.
        K (int): order (default 10, the official value).
        a, b (float): the Jacobi parameters (official defaults 1.0, 1.0; tuned per dataset).
        alpha (float): the PCD scale α (tuned per dataset, e.g. 0.5 PubMed, 2.0 Squirrel).

    Shapes: ``x`` (N, channels) → (N, channels).
    """

    operator = "undirected"
    per_channel = True

    def __init__(self, channels: int, K: int = 10, a: float = 1.0, b: float = 1.0,
                 alpha: float = 1.0) -> None:
        a, b, alpha = (check_float(name, v) for name, v in (("a", a), ("b", b), ("alpha", alpha)))
        if a < -1 or b <= -1 or alpha <= 0:
            raise ValueError(f"JacobiConv needs a >= -1, b > -1 and alpha > 0; got a={a}, "
                             f"b={b}, alpha={alpha}")
        super().__init__(K, channels)
        if K * math.log(alpha) > math.log(torch.finfo(torch.float32).max):
            # the coefficients reach alpha**K (tanh <= 1): past float32's range they are inf
            raise ValueError(f"JacobiConv: alpha={alpha} with K={K} makes its coefficients "
                             "(up to alpha**K) overflow float32; use a smaller alpha")
        self.a, self.b, self.alpha = a, b, alpha
        self.eta = nn.Parameter(torch.empty(K + 1))
        self.weight = nn.Parameter(torch.empty(K + 1, channels)) if channels != -1 \
            else nn.UninitializedParameter()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.constant_(self.eta, min(1.0 / self.alpha, 1.0))
        if self.channels != -1:
            nn.init.ones_(self.weight)

    def initialize_channels(self, channels: int) -> None:
        self.weight.materialize((self.K + 1, channels), device=self.eta.device,
                                dtype=self.eta.dtype)
        self.channels = channels
        nn.init.ones_(self.weight)

    def coefficient_groups(self) -> dict[str, list[nn.Parameter]]:
        """η with the propagation's settings (the official ``lr2, wd2``), the per-channel
        weights apart (``lr3, wd3``)."""
        return {"prop": [self.eta], "channel": [self.weight]}

    def response_rows(self) -> int:
        return self.channels

    def basis(self, apply: Apply, x: Tensor) -> list[Tensor]:
        r""":math:`[\beta_k P_k(\hat A)\, x]_{k=0..K}` by the official recurrence."""
        a, b = self.a, self.b
        gamma = self.alpha * torch.tanh(self.eta)
        terms = [x, gamma[0] * ((a - b) / 2 * x + (a + b + 2) / 2 * apply(x))]
        for k in range(2, self.K + 1):
            ak, bk, ck = jacobi_recurrence(k, a, b)
            prev, prev2 = terms[-1], terms[-2]
            terms.append(gamma[k - 1] * (ak * apply(prev) - bk * prev)
                         - (gamma[k - 1] * gamma[k - 2] * ck) * prev2)
        return terms

    def polynomial(self, apply: Apply, x: Tensor) -> Tensor:
        terms = self.basis(apply, x)
        out = terms[0] * self.weight[0]
        for k in range(1, self.K + 1):
            out = out + terms[k] * self.weight[k]
        return out

    def extra_repr(self) -> str:
        return (f"channels={self.channels}, K={self.K}, a={self.a}, b={self.b}, "
                f"alpha={self.alpha}, operator=D^-1/2AD^-1/2 (undirected)")

r"""ChebNet (Defferrard et al., NeurIPS 2016), K = 2, :math:`\lambda_{max} = 2`, as in the release.

With the normalised Laplacian :math:`L = I - \tilde A` (:math:`\tilde A` = the project's
propagation :math:`P`, in-degree on both sides, no self-loops) and :math:`\lambda_{max} = 2`,
the scaled Laplacian is :math:`\tilde L = 2L/\lambda_{max} - I = -\tilde A`, and the Chebyshev
polynomials are :math:`T_0 = I`, :math:`T_1(\tilde L) = -\tilde A`,
:math:`T_2(\tilde L) = 2\tilde L^2 - I = 2\tilde A^2 - I`. The layer is

.. math::
    h' = \mathrm{post}\big(x W_1 + (-\tilde A x) W_2 + (2\tilde A^2 x - x) W_3 + b\big)

with bias-free :math:`W_k` (PyTorch default init) and one bias (init 0): ``3·in·out + out``
parameters (+ ``2·out`` BatchNorm, always allocated as in the release).

The same output is :math:`x(W_1 - W_3) - \tilde A(x W_2) + 2\tilde A^2(x W_3)`, two sparse
products at the output width instead of the input's: the layer projects first when ``out < in``
(Squirrel: 2,089 features → 16) and for sparse inputs
(:func:`~autogcn.propagation.cheaper_to_propagate_first`).

Frequency response. On an eigenvector :math:`u` of :math:`\tilde A` (eigenvalue :math:`\mu`,
:math:`\lambda = 1 - \mu`), an input :math:`x = u v^\top` gives
:math:`h = u\, v^\top M(\lambda) + b` with the ``in × out`` matrix

.. math::
    M(\lambda) = W_1 + T_1(\lambda - 1) W_2 + T_2(\lambda - 1) W_3,
    \qquad T_1(t) = t,\ T_2(t) = 2t^2 - 1

(:meth:`ChebLayer.response_matrix`). ChebNet's filter is not separable from its weights (every
channel pair has its own polynomial): :meth:`ChebLayer.frequency_response` reports the RMS gain
:math:`\|M(\lambda)\|_F / \sqrt{in}`, the RMS norm of the output for a random unit input
direction at frequency :math:`\lambda`.
"""

from __future__ import annotations

import torch
from torch import nn

from autogcn.graph import Graph
from autogcn.propagation import cheaper_to_propagate_first, propagate
from layers.post_processing import Activation, GraphLayer, PostProcess


class ChebLayer(GraphLayer):
    """One ChebNet layer (K = 2, λmax = 2); see the module docstring.

    Args:
        in_dim, out_dim: feature widths.
        activation: e.g. ``torch.relu``; ``None`` on an output layer.
        dropout, graph_norm, batch_norm, residual: the shared post-processing.
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        activation: Activation = torch.relu,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
    ) -> None:
        super().__init__()
        self.in_dim, self.out_dim = in_dim, out_dim
        self.c1 = nn.Linear(in_dim, out_dim, bias=False)  # T0 = I
        self.c2 = nn.Linear(in_dim, out_dim, bias=False)  # T1 = -Ã
        self.c3 = nn.Linear(in_dim, out_dim, bias=False)  # T2 = 2Ã² - I
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.post = PostProcess(in_dim, out_dim, activation, dropout, graph_norm, batch_norm,
                                residual)
        # "auto" picks the cheaper order; "propagate"/"project" force one (used by tests).
        self.order = "auto"

    def kernel_terms(
        self, g: Graph, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The Chebyshev terms :math:`(T_0 x, T_1 x, T_2 x)` before the linear maps."""
        ax = propagate(g, x)
        return x, -ax, 2 * propagate(g, ax) - x

    def forward(
        self, g: Graph, feat: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) (dense or sparse COO) → (N, out_dim)."""
        if not cheaper_to_propagate_first(feat, 2 * self.in_dim, 2 * self.out_dim,
                                          self.order):
            # x(W1 - W3) - Ã(xW2) + 2Ã²(xW3): both propagations at the output width
            y1, y2, y3 = self.c1(feat), self.c2(feat), self.c3(feat)  # Linear accepts sparse COO
            h = y1 - y3 + propagate(g, 2 * propagate(g, y3) - y2)
        else:
            t0, t1, t2 = self.kernel_terms(g, feat)
            h = self.c1(t0) + self.c2(t1) + self.c3(t2)
        return self.post(feat, h + self.bias, snorm_n)

    def response_matrix(self, lam: torch.Tensor) -> torch.Tensor:
        r""":math:`M(\lambda)` (module docstring) at every ``lam``: ``(len(lam), in, out)``."""
        w = torch.stack([c.weight.detach().T for c in (self.c1, self.c2, self.c3)])
        t = lam.detach().to(w) - 1.0
        basis = torch.stack([torch.ones_like(t), t, 2 * t * t - 1])  # T_0, T_1, T_2 at λ - 1
        return torch.einsum("kp,kio->pio", basis, w)

    def frequency_response(self, lam: torch.Tensor) -> dict[str, torch.Tensor]:
        """``{"gain": ‖M(λ)‖_F / sqrt(in)}`` of shape ``(1, len(lam))`` (module docstring)."""
        m = self.response_matrix(lam)
        return {"gain": (m.flatten(1).norm(dim=1) / self.in_dim ** 0.5).unsqueeze(0)}

    def extra_repr(self) -> str:
        return f"{self.in_dim}, {self.out_dim}, K=2, lambda_max=2"

r"""A learned polynomial filter (:class:`~autogcn.polynomial.PolynomialFilter`: GPR-GNN,
BernNet, ChebNetII, JacobiConv, in the installable package) inside the benchmarking-gnns layer
stack (ZINC, SBM, superpixels). The papers give no graph-level architecture; the project's
choice, built like its ChebNet and AutoGCN layers, is

.. math::
    h' = \mathrm{post}\big(F(N)\, \mathrm{dropout}_{dprate}(x W) + b\big)

with a bias-free :math:`W` (PyTorch's default init), one bias (init 0) and the shared
post-processing. Parameters: ``in·out + out`` + the filter's + ``2·out`` (batch norm). Projecting
first, as the papers' nets do (MLP, then propagate), puts ``dprate`` where they put it.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from autogcn.graph import Graph
from autogcn.polynomial import PolynomialFilter
from layers.post_processing import Activation, GraphLayer, PostProcess


class PolyFilterLayer(GraphLayer):
    """``post(F(N) dropout_dprate(x W) + b)`` (module docstring).

    Args:
        filt: the filter, over ``out_dim`` channels.
        in_dim, out_dim: feature widths.
        activation: e.g. ``torch.relu``; ``None`` on an output layer.
        dropout: the post-processing's dropout (last).
        dprate: dropout on the signal entering the filter.
        graph_norm, batch_norm, residual: the shared post-processing.
    """

    def __init__(self, filt: PolynomialFilter, in_dim: int, out_dim: int,
                 activation: Activation = torch.relu,
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

r"""MoNet (Monti et al., CVPR 2017) on DGL's ``GMMConv``, with the release's degree coordinates.

Pseudo-coordinates of an edge :math:`u \to v` (the release's choice for graphs without geometry):

.. math::
    \rho_{uv} = \big[(\deg^{in}(u) + 1)^{-1/2},\ (\deg^{in}(v) + 1)^{-1/2}\big]

(the +1 avoids a division by zero), mapped per layer by ``Linear(2, dim)`` + ``tanh`` to
:math:`\tilde\rho_{uv}`. ``GMMConv`` with ``K`` Gaussian kernels of learned means
:math:`\mu_k` and inverse scales :math:`\sigma_k^{-1}`:

.. math::
    w_k(\tilde\rho) = \exp\big(-\tfrac12 \|(\tilde\rho - \mu_k) \odot \sigma_k^{-1}\|^2\big),
    \qquad
    c_v = \sum_{u \to v} \sum_{k=1}^{K} w_k(\tilde\rho_{uv})\, x_u W_k + b_{conv}

then, in the release's order, graph norm → BN → activation → residual (the shared
:class:`~layers.post_processing.PostProcess`, without its dropout), **+ a second bias** (the
release's ``GMMLayer`` adds its own bias after the residual) → dropout. The release computed
:math:`\rho` with a Python loop over the edges; :func:`pseudo_coordinates` is a vectorised gather.

Parameters per layer: ``6`` (pseudo projection, dim 2) + ``2·K·dim`` (μ, σ⁻¹) + ``in·K·out``
+ ``out`` (conv bias) + ``out`` (layer bias) + ``2·out`` (BN) — all as in the release.
"""

from __future__ import annotations

from collections.abc import Callable

import dgl
import torch
from dgl.nn.pytorch import GMMConv
from torch import nn

from layers.post_processing import PostProcess


def pseudo_coordinates(g: dgl.DGLGraph) -> torch.Tensor:
    """``(E, 2)``: :math:`[(\\deg^{in}(u)+1)^{-1/2}, (\\deg^{in}(v)+1)^{-1/2}]` per edge u→v."""
    s = (g.in_degrees().float() + 1).rsqrt()
    src, dst = g.edges()
    return torch.stack([s[src], s[dst]], dim=1)


class GMMLayer(nn.Module):
    """One MoNet layer (see the module docstring).

    Args:
        in_dim, out_dim: feature widths.
        activation: e.g. ``torch.relu``; ``None`` on an output layer.
        dropout: applied last (after the second bias).
        graph_norm, batch_norm, residual: the shared post-processing.
        dim: pseudo-coordinate dimension after the projection (``pseudo_dim_MoNet``).
        kernel: number of Gaussian kernels ``K``.
        aggregator: ``GMMConv``'s ``"sum"`` (the release), ``"mean"`` or ``"max"``.
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        activation: Callable[[torch.Tensor], torch.Tensor] | None = torch.relu,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
        dim: int = 2,
        kernel: int = 3,
        aggregator: str = "sum",
    ) -> None:
        super().__init__()
        self.pseudo_proj = nn.Sequential(nn.Linear(2, dim), nn.Tanh())
        self.conv = GMMConv(in_dim, out_dim, dim, kernel, aggregator, bias=True,
                            allow_zero_in_degree=True)
        self.post = PostProcess(in_dim, out_dim, activation, 0.0, graph_norm, batch_norm, residual)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.dropout = nn.Dropout(dropout)

    def reset_parameters(self) -> None:
        self.pseudo_proj[0].reset_parameters()
        self.conv.reset_parameters()
        self.post.reset_parameters()
        nn.init.zeros_(self.bias)

    def forward(
        self,
        g: dgl.DGLGraph,
        feat: torch.Tensor,
        snorm_n: torch.Tensor | None = None,
        pseudo: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim); ``pseudo``: cached :func:`pseudo_coordinates`."""
        if feat.is_sparse:  # GMMConv's projection view needs a dense result
            feat = feat.to_dense()
        pseudo = pseudo_coordinates(g) if pseudo is None else pseudo
        h = self.conv(g, feat, self.pseudo_proj(pseudo))
        return self.dropout(self.post(feat, h, snorm_n) + self.bias)

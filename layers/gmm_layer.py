r"""MoNet (Monti et al., CVPR 2017) with the release's degree coordinates.

Pseudo-coordinates of an edge :math:`u \to v` (the release's choice for graphs without geometry):

.. math::
    \rho_{uv} = \big[(\deg^{in}(u) + 1)^{-1/2},\ (\deg^{in}(v) + 1)^{-1/2}\big]

(the +1 avoids a division by zero), mapped per layer by ``Linear(2, dim)`` + ``tanh`` to
:math:`\tilde\rho_{uv}`. :class:`GMMConv` with ``K`` Gaussian kernels of learned means
:math:`\mu_k` and inverse scales :math:`\sigma_k^{-1}`:

.. math::
    w_k(\tilde\rho) = \exp\big(-\tfrac12 \|(\tilde\rho - \mu_k) \odot \sigma_k^{-1}\|^2\big),
    \qquad
    c_v = \sum_{u \to v} \sum_{k=1}^{K} w_k(\tilde\rho_{uv})\, x_u W_k + b_{conv}

then, in the release's order, graph norm → BN → activation → residual (the shared
:class:`~layers.post_processing.PostProcess`, without its dropout), **+ a second bias** (the
release's ``GMMLayer`` adds its own after the residual) → dropout. :func:`pseudo_coordinates`
is computed once per graph (cached on it) for every layer.

:class:`GMMConv` (the Gaussian weights as per-edge, per-kernel weights of
:func:`~layers.propagation.weighted_aggregate`) equals DGL 2.x's ``GMMConv(residual=False,
bias=True, allow_zero_in_degree=True)`` for the ``"sum"`` (the release), ``"mean"`` and ``"max"``
aggregators, 0 before the bias for nodes without in-edges (``tests/test_dgl_parity.py``): the
same parameters, ``state_dict`` names (``mu``, ``inv_sigma``, ``fc.weight``, ``bias``) and
initialisation (``fc`` Glorot-normal with the ReLU gain, :math:`\mu \sim \mathcal N(0,
0.1^2)`, :math:`\sigma^{-1} = 1`, bias 0).

Parameters per layer: ``6`` (pseudo projection, dim 2) + ``2·K·dim`` (μ, σ⁻¹) + ``in·K·out``
+ ``out`` (conv bias) + ``out`` (layer bias) + ``2·out`` (BN) — all as in the release.
"""

from __future__ import annotations

import torch
from torch import nn

from autogcn.graph import Graph
from layers.post_processing import Activation, GraphLayer, PostProcess
from layers.propagation import aggregate_edges, weighted_aggregate

GMM_AGGREGATORS = ("sum", "mean", "max")


def pseudo_coordinates(g: Graph) -> torch.Tensor:
    """``(E, 2)``: :math:`[(\\deg^{in}(u)+1)^{-1/2}, (\\deg^{in}(v)+1)^{-1/2}]` per edge u→v."""
    s = (g.in_degrees().float() + 1).rsqrt()
    src, dst = g.edges()
    return torch.stack([s[src], s[dst]], dim=1)


class GMMConv(nn.Module):
    r"""Gaussian mixture model convolution (see the module docstring for the maths).

    Args:
        in_feats, out_feats: feature widths.
        dim: pseudo-coordinate dimension.
        n_kernels: number of Gaussian kernels ``K``.
        aggregator: ``"sum"``, ``"mean"`` or ``"max"`` over the in-edges, per kernel.
        bias: learn a bias added to the output.
    """

    def __init__(self, in_feats: int, out_feats: int, dim: int, n_kernels: int,
                 aggregator: str = "sum", bias: bool = True) -> None:
        super().__init__()
        if aggregator not in GMM_AGGREGATORS:
            raise ValueError(f"unknown GMM aggregator {aggregator!r}; use one of {GMM_AGGREGATORS}")
        self.in_feats, self.out_feats, self.dim = in_feats, out_feats, dim
        self.n_kernels, self.aggregator = n_kernels, aggregator
        self.mu = nn.Parameter(torch.empty(n_kernels, dim))
        self.inv_sigma = nn.Parameter(torch.empty(n_kernels, dim))
        self.fc = nn.Linear(in_feats, n_kernels * out_feats, bias=False)
        self.bias = nn.Parameter(torch.empty(out_feats)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_normal_(self.fc.weight, gain=nn.init.calculate_gain("relu"))
        nn.init.normal_(self.mu, 0, 0.1)
        nn.init.constant_(self.inv_sigma, 1)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def kernel_weights(self, pseudo: torch.Tensor) -> torch.Tensor:
        r"""``(E, K)``: :math:`w_k(\rho_e) = \exp(-\frac12 \|(\rho_e - \mu_k) \odot
        \sigma_k^{-1}\|^2)`."""
        diff = pseudo.view(-1, 1, self.dim) - self.mu.view(1, self.n_kernels, self.dim)
        scaled = (-0.5 * diff**2) * self.inv_sigma.view(1, self.n_kernels, self.dim) ** 2
        return torch.exp(scaled.sum(-1))

    def forward(self, g: Graph, feat: torch.Tensor, pseudo: torch.Tensor) -> torch.Tensor:
        """``feat`` (N, in), ``pseudo`` (E, dim) → (N, out)."""
        h = self.fc(feat).view(-1, self.n_kernels, self.out_feats)
        weights = self.kernel_weights(pseudo)
        if self.aggregator == "max":  # per-edge messages: the maximum is not a weighted sum
            src = g.edges()[0]
            per_kernel = aggregate_edges(g, h[src] * weights.unsqueeze(-1), "max")
        else:
            per_kernel = weighted_aggregate(g, h, weights)  # (N, K, out)
            if self.aggregator == "mean":
                degrees = g.in_degrees().clamp(min=1).to(per_kernel.dtype)
                per_kernel = per_kernel / degrees.view(-1, 1, 1)
        out = per_kernel.sum(1)
        return out if self.bias is None else out + self.bias

    def extra_repr(self) -> str:
        return (f"{self.in_feats}, {self.out_feats}, dim={self.dim}, "
                f"n_kernels={self.n_kernels}, aggregator={self.aggregator}")


class GMMLayer(GraphLayer):
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
        activation: Activation = torch.relu,
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
        self.conv = GMMConv(in_dim, out_dim, dim, kernel, aggregator, bias=True)
        self.post = PostProcess(in_dim, out_dim, activation, 0.0, graph_norm, batch_norm, residual)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, g: Graph, feat: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim)."""
        if feat.is_sparse:  # the per-kernel view of the projection needs a dense result
            feat = feat.to_dense()
        pseudo = g.cached("monet_pseudo_coordinates", lambda: pseudo_coordinates(g))
        h = self.conv(g, feat, self.pseudo_proj(pseudo.to(feat.dtype)))
        return self.dropout(self.post(feat, h, snorm_n) + self.bias)

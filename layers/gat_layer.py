r"""GAT (Veličković et al., ICLR 2018) on DGL's ``GATConv``, heads concatenated, as in the release.

For each head :math:`k = 1..H`, with :math:`z = \mathrm{dropout}(x) W^k` and LeakyReLU slope 0.2:

.. math::
    e_{uv} = \mathrm{LeakyReLU}\big(a_l^{k\top} z_u + a_r^{k\top} z_v\big), \qquad
    \alpha_{uv} = \mathrm{dropout}\Big(\mathrm{softmax}_{u \to v}\, e_{uv}\Big), \qquad
    h^k_v = \sum_{u \to v} \alpha_{uv} z_u

and :math:`h'_v = \mathrm{post}(h^1_v \Vert \dots \Vert h^H_v)` (width ``H·out``). ``dropout``
is used for both ``feat_drop`` and ``attn_drop`` (tied, as in the release), so the shared
:class:`~layers.post_processing.PostProcess` adds no output dropout.

Conventions of the release reproduced here:

* ``bias=False``: DGL 0.4's ``GATConv`` had no bias; DGL 2.x adds one by default (``H·out``
  more parameters per layer). Parameters per layer: ``in·H·out + 2·H·out`` (+ ``2·H·out`` BN).
* Activation: none on SBM/ZINC/superpixels (the release's ``GATLayer`` default), ELU on the
  citation nets. The release applied the activation *after* the residual; ``PostProcess``
  applies it before. The release's citation configs turn the residual off, so the two orders
  give the same output for every published configuration.
* Nodes without in-edges (directed superpixel graphs, single-node graphs) get a zero message
  (``allow_zero_in_degree=True``).
"""

from __future__ import annotations

from collections.abc import Callable

import dgl
import torch
from dgl.nn.pytorch import GATConv
from torch import nn

from layers.post_processing import PostProcess


class GATLayer(nn.Module):
    """One multi-head GAT layer; output width ``out_dim * num_heads``.

    Args:
        in_dim: input width.
        out_dim: width per head.
        num_heads: attention heads, concatenated.
        activation: ``None`` (graph benchmarks) or e.g. ``F.elu`` (citation nets).
        dropout: feature and attention dropout of ``GATConv``.
        graph_norm, batch_norm, residual: the shared post-processing.
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        num_heads: int,
        activation: Callable[[torch.Tensor], torch.Tensor] | None = None,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
    ) -> None:
        super().__init__()
        self.conv = GATConv(in_dim, out_dim, num_heads, feat_drop=dropout, attn_drop=dropout,
                            allow_zero_in_degree=True, bias=False)
        self.post = PostProcess(
            in_dim, out_dim * num_heads, activation, 0.0, graph_norm, batch_norm, residual
        )

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()
        self.post.reset_parameters()

    def forward(
        self, g: dgl.DGLGraph, feat: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, num_heads · out_dim)."""
        if feat.is_sparse:  # GATConv's feature dropout needs a dense tensor
            feat = feat.to_dense()
        return self.post(feat, self.conv(g, feat).flatten(1), snorm_n)

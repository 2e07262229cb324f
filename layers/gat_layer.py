r"""GAT (Veličković et al., ICLR 2018), heads concatenated, as in the release.

For each head :math:`k = 1..H`, with :math:`z = \mathrm{dropout}(x) W^k` and LeakyReLU slope 0.2:

.. math::
    e_{uv} = \mathrm{LeakyReLU}\big(a_l^{k\top} z_u + a_r^{k\top} z_v\big), \qquad
    \alpha_{uv} = \mathrm{dropout}\Big(\mathrm{softmax}_{u \to v}\, e_{uv}\Big), \qquad
    h^k_v = \sum_{u \to v} \alpha_{uv} z_u

and :math:`h'_v = \mathrm{post}(h^1_v \Vert \dots \Vert h^H_v)` (width ``H·out``). ``dropout``
is used for both ``feat_drop`` and ``attn_drop`` (tied, as in the release), so the shared
:class:`~layers.post_processing.PostProcess` adds no output dropout.

As in the release: no bias (DGL 0.4's ``GATConv`` had none; DGL 2.x's default adds ``H·out``
per layer), so ``in·H·out + 2·H·out`` parameters per layer (+ ``2·H·out`` BN); no activation on
SBM/ZINC/superpixels, ELU on the citation nets (the release applied it *after* the residual,
``PostProcess`` before: the same output, its citation configs having no residual); a zero
message for nodes without in-edges (DGL's ``allow_zero_in_degree=True``).

:class:`GATConv` equals DGL 2.x's ``GATConv(bias=False, residual=False,
allow_zero_in_degree=True)`` (``tests/test_dgl_parity.py``): the same parameters, ``state_dict``
names (``fc.weight``; ``attn_l`` and ``attn_r`` of shape ``(1, H, out)``) and initialisation
(Glorot-normal with the ReLU gain).
"""

from __future__ import annotations

import torch
from torch import nn

from autogcn.graph import Graph
from layers.post_processing import Activation, GraphLayer, PostProcess
from layers.propagation import edge_softmax, weighted_aggregate


class GATConv(nn.Module):
    r"""Multi-head graph attention (see the module docstring for the maths), no bias.

    Args:
        in_feats: input width.
        out_feats: width per head.
        num_heads: attention heads ``H``.
        feat_drop, attn_drop: dropout of the input features and of the attention weights.
        negative_slope: LeakyReLU slope of the attention scores.
    """

    def __init__(self, in_feats: int, out_feats: int, num_heads: int, feat_drop: float = 0.0,
                 attn_drop: float = 0.0, negative_slope: float = 0.2) -> None:
        super().__init__()
        self.in_feats, self.out_feats, self.num_heads = in_feats, out_feats, num_heads
        self.fc = nn.Linear(in_feats, out_feats * num_heads, bias=False)
        self.attn_l = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.attn_r = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = nn.init.calculate_gain("relu")
        nn.init.xavier_normal_(self.fc.weight, gain=gain)
        nn.init.xavier_normal_(self.attn_l, gain=gain)
        nn.init.xavier_normal_(self.attn_r, gain=gain)

    def forward(self, g: Graph, feat: torch.Tensor) -> torch.Tensor:
        """``feat`` (N, in) → (N, H, out)."""
        z = self.fc(self.feat_drop(feat)).view(-1, self.num_heads, self.out_feats)
        score_src = (z * self.attn_l).sum(-1)  # a_l·z_u, (N, H)
        score_dst = (z * self.attn_r).sum(-1)  # a_r·z_v
        src, dst = g.edges()
        scores = self.leaky_relu(score_src[src] + score_dst[dst])  # (E, H)
        attention = self.attn_drop(edge_softmax(g, scores))
        return weighted_aggregate(g, z, attention)

    def extra_repr(self) -> str:
        return f"{self.in_feats}, {self.out_feats}, num_heads={self.num_heads}"


class GATLayer(GraphLayer):
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
        activation: Activation = None,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
    ) -> None:
        super().__init__()
        self.conv = GATConv(in_dim, out_dim, num_heads, feat_drop=dropout, attn_drop=dropout)
        self.post = PostProcess(in_dim, out_dim * num_heads, activation, 0.0, graph_norm,
                                batch_norm, residual)

    def forward(
        self, g: Graph, feat: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, num_heads · out_dim)."""
        if feat.is_sparse:  # the feature dropout needs a dense tensor
            feat = feat.to_dense()
        return self.post(feat, self.conv(g, feat).flatten(1), snorm_n)

r"""GCN (Kipf & Welling, ICLR 2017) on DGL's ``GraphConv``, with the release's normalisation.

.. math::
    h'_v = \mathrm{post}\Big( s_v \sum_{u \to v} s_u\, x_u W + b \Big), \qquad
    s_v = \max(\deg^{in}(v), 1)^{-1/2}

i.e. :math:`\tilde A X W + b` with :math:`\tilde A = D^{-1/2} A D^{-1/2}` on a symmetric graph
(self-loops are part of :math:`A` when the runner adds them, ``self_loop: true``).

Normalisation, ``norm="release"`` (default): the authors' release ran DGL 0.4, whose
``GraphConv`` normalised *both* sides by the **in**-degree. DGL 2.x ``GraphConv(norm="both")``
uses the **out**-degree on the source side, :math:`s^{out}_u s^{in}_v`. The two agree on
symmetric graphs (SBM, ZINC, citation graphs) but not on directed ones: the superpixel graphs are
kNN graphs (every node has 8 out-edges, in-degrees vary), where ``"both"`` would weight a
message by the sender's out-degree (constant 8) instead of its in-degree. To reproduce the
release exactly, ``"release"`` keeps ``GraphConv``'s weight and its order (project first when
the output is narrower) but aggregates with the project's
:func:`~layers.propagation.propagate`, the same sparse product AutoGCN and ChebNet use (the
normalised adjacency is built once per batch by the layer stack), so that speed comparisons
between the models compare the models. The bias lives in the layer and is added after the
aggregation. ``norm="both"`` runs DGL 2.x's ``GraphConv`` as it is. Parameters: ``in·out + out``
(+ ``2·out`` BatchNorm, always allocated as in the release).

Post-processing (graph norm → BN → activation → residual → dropout) is
:class:`~layers.post_processing.PostProcess`.
"""

from __future__ import annotations

from collections.abc import Callable

import dgl
import torch
from dgl.nn.pytorch import GraphConv
from torch import nn

from layers.post_processing import PostProcess
from layers.propagation import NormalizedAdjacency, propagate

GCN_NORMS = ("release", "both")


class GCNLayer(nn.Module):
    """One GCN layer: ``GraphConv`` then the shared post-processing.

    Args:
        in_dim, out_dim: feature widths.
        activation: e.g. ``torch.relu``; ``None`` on an output layer.
        dropout, graph_norm, batch_norm, residual: the shared post-processing.
        norm: ``"release"`` (in-degree on both sides) or ``"both"`` (DGL 2.x ``GraphConv``).
    """

    uses_adjacency = True

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        activation: Callable[[torch.Tensor], torch.Tensor] | None = torch.relu,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
        norm: str = "release",
    ) -> None:
        super().__init__()
        if norm not in GCN_NORMS:
            raise ValueError(f"unknown GCN norm {norm!r}; expected one of {GCN_NORMS}")
        self.norm = norm
        self.uses_adjacency = norm == "release"  # "both": GraphConv normalises by itself
        self.conv = GraphConv(in_dim, out_dim, norm="none" if norm == "release" else "both",
                              bias=False, allow_zero_in_degree=True)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.post = PostProcess(
            in_dim, out_dim, activation, dropout, graph_norm, batch_norm, residual
        )

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()
        nn.init.zeros_(self.bias)
        self.post.reset_parameters()

    def forward(
        self,
        g: dgl.DGLGraph,
        feat: torch.Tensor,
        snorm_n: torch.Tensor | None = None,
        adj: NormalizedAdjacency | None = None,
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim). ``adj``: cached normalised adjacency of ``g``."""
        if self.norm == "both":
            dense = feat.to_dense() if feat.is_sparse else feat  # GraphConv needs a dense input
            return self.post(dense, self.conv(g, dense) + self.bias, snorm_n)
        adj = NormalizedAdjacency(g) if adj is None else adj
        weight = self.conv.weight
        if feat.is_sparse or weight.shape[0] > weight.shape[1]:  # project first (never densify)
            projected = torch.sparse.mm(feat, weight) if feat.is_sparse else feat @ weight
            h = propagate(g, projected, adj)
        else:
            h = propagate(g, feat, adj) @ weight
        if feat.is_sparse and self.post.residual:  # the residual adds the input: make it dense
            feat = feat.to_dense()
        return self.post(feat, h + self.bias, snorm_n)

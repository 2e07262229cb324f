r"""GCN (Kipf & Welling, ICLR 2017), with the release's normalisation.

.. math::
    h'_v = \mathrm{post}\Big( s^{dst}_v \sum_{u \to v} s^{src}_u\, x_u W + b \Big), \qquad
    s^{dst}_v = \max(\deg^{in}(v), 1)^{-1/2}

i.e. :math:`\tilde A X W + b` with :math:`\tilde A = D^{-1/2} A D^{-1/2}` on a symmetric graph
(self-loops are part of :math:`A` when the runner adds them, ``self_loop: true``).

``source_degree="in"`` (default): :math:`s^{src}_u = s^{dst}_u`, both sides by the in-degree,
as DGL 0.4's ``GraphConv`` in the authors' release. ``"out"``: :math:`s^{src}_u =
\max(\deg^{out}(u), 1)^{-1/2}`, DGL 2.x's ``GraphConv(norm="both")``. They differ only on
directed graphs: on the superpixel kNN graphs (8 out-edges per node) ``"out"`` weighs a message
by the sender's constant out-degree instead of its in-degree.

:class:`GraphConv` runs on the sparse product AutoGCN and ChebNet use
(:func:`~autogcn.propagation.propagate`: speed comparisons compare the models) and equals DGL
2.x's ``GraphConv(norm="both", bias=False)`` with ``"out"``, the in-degree formula with ``"in"``
(``tests/test_dgl_parity.py``), with DGL's weight (``conv.weight``, ``(in, out)``,
Glorot-uniform) and order (project first when the output is narrower, and sparse inputs). The
bias lives in the layer. Parameters: ``in·out + out`` (+ ``2·out`` BatchNorm, always allocated).
"""

from __future__ import annotations

import torch
from torch import nn

from autogcn.graph import Graph
from autogcn.propagation import (
    SOURCE_DEGREES,
    as_graph,
    cheaper_to_propagate_first,
    normalized_adjacency,
)
from layers.post_processing import Activation, GraphLayer, PostProcess


class GraphConv(nn.Module):
    r""":math:`P X W` without bias: :math:`P` the degree-normalised sum over in-edges
    (:func:`~autogcn.propagation.propagate`), :math:`W` of shape ``(in, out)``.

    Args:
        in_feats, out_feats: feature widths.
        source_degree: ``"in"`` (the release) or ``"out"`` (DGL 2.x ``norm="both"``).
    """

    def __init__(self, in_feats: int, out_feats: int, source_degree: str = "in") -> None:
        super().__init__()
        if source_degree not in SOURCE_DEGREES:
            raise ValueError(
                f"source_degree must be one of {SOURCE_DEGREES}, got {source_degree!r}")
        self.in_feats, self.out_feats, self.source_degree = in_feats, out_feats, source_degree
        self.weight = nn.Parameter(torch.empty(in_feats, out_feats))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.weight)

    def forward(self, g: Graph | torch.Tensor, feat: torch.Tensor,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        """``feat`` (N, in) (dense or sparse COO) → (N, out) on ``g``, a :class:`Graph` or a
        ``(2, E)`` edge index; ``edge_weight`` (E,) weights the sum and the degrees."""
        op = normalized_adjacency(as_graph(g, feat.shape[0]), self.source_degree, edge_weight)
        if cheaper_to_propagate_first(feat, self.in_feats, self.out_feats):
            return op(feat) @ self.weight
        projected = torch.sparse.mm(feat, self.weight) if feat.is_sparse else feat @ self.weight
        return op(projected)

    def extra_repr(self) -> str:
        return f"in={self.in_feats}, out={self.out_feats}, source_degree={self.source_degree}"


class GCNLayer(GraphLayer):
    """One GCN layer: :class:`GraphConv`, the bias, then the shared post-processing.

    Args:
        in_dim, out_dim: feature widths.
        activation: e.g. ``torch.relu``; ``None`` on an output layer.
        dropout, graph_norm, batch_norm, residual: the shared post-processing.
        source_degree: ``"in"`` (the release, default) or ``"out"`` (DGL 2.x ``GraphConv``).
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
        source_degree: str = "in",
    ) -> None:
        super().__init__()
        self.conv = GraphConv(in_dim, out_dim, source_degree)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.post = PostProcess(in_dim, out_dim, activation, dropout, graph_norm, batch_norm,
                                residual)

    def forward(
        self, g: Graph, feat: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) (dense or sparse COO) → (N, out_dim)."""
        h = self.conv(g, feat)
        return self.post(feat, h + self.bias, snorm_n)

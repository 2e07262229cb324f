r"""GraphSAGE (Hamilton et al., NeurIPS 2017) on DGL's ``SAGEConv``, as in the release.

.. math::
    h'_v = \mathrm{post}\Big(\mathrm{act}\big(W_{self}\, \tilde x_v
           + W_{neigh}\, \mathrm{AGG}_{u \to v}\, \tilde x_u + b\big)\Big),
    \qquad \tilde x = \mathrm{dropout}(x)

with ``AGG`` the mean (``sage_aggregator``, default ``"mean"``; nodes without in-edges aggregate
to 0). The release passed ``dropout`` as ``SAGEConv``'s ``feat_drop`` (on the layer *input*) and
the activation to ``SAGEConv`` itself, so the order is act → graph norm → BN → residual; the
shared :class:`~layers.post_processing.PostProcess` therefore runs with no activation and no
output dropout.

Parameter conventions:

* DGL 0.4's ``SAGEConv`` (the release) gave both ``fc_self`` and ``fc_neigh`` a bias; DGL 2.x
  gives only ``fc_self`` one. The two biases are added together, so they are one parameter
  vector in effect, but our count is ``out`` lower per layer than the release's — the single
  count difference that cannot be closed with DGL 2.x's module (see tests/test_param_counts.py).
* The release's GraphSage layer allocated its BatchNorm only when ``batch_norm`` was on (unlike
  every other layer of the release). ``PostProcess`` always allocates it, so when ``batch_norm``
  is off its (unused) parameters are frozen, which keeps the trainable-parameter count equal to
  the release's.
"""

from __future__ import annotations

from collections.abc import Callable

import dgl
import torch
from dgl.nn.pytorch import SAGEConv
from torch import nn

from layers.post_processing import PostProcess


class GraphSageLayer(nn.Module):
    """One GraphSAGE layer: ``SAGEConv`` (with input dropout and activation) + post-processing.

    Args:
        in_dim, out_dim: feature widths.
        activation: applied inside ``SAGEConv`` (before normalisation); ``None`` on an output layer.
        dropout: ``SAGEConv``'s ``feat_drop`` (dropout of the layer input).
        graph_norm, batch_norm, residual: the shared post-processing.
        aggregator: ``SAGEConv``'s aggregator (``"mean"``, ``"pool"``, ``"lstm"``, ``"gcn"``).
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
        aggregator: str = "mean",
    ) -> None:
        super().__init__()
        self.conv = SAGEConv(in_dim, out_dim, aggregator, feat_drop=dropout, bias=True,
                             activation=activation)
        self.post = PostProcess(in_dim, out_dim, None, 0.0, graph_norm, batch_norm, residual)
        if not batch_norm:  # the release did not allocate it: keep it out of the trainable count
            self.post.batchnorm_h.requires_grad_(False)

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()
        self.post.reset_parameters()

    def forward(
        self, g: dgl.DGLGraph, feat: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim)."""
        if feat.is_sparse:  # SAGEConv's input dropout and aggregation need a dense tensor
            feat = feat.to_dense()
        return self.post(feat, self.conv(g, feat), snorm_n)

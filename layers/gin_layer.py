r"""GIN (Xu et al., ICLR 2019) with a learnable :math:`\epsilon`, as in benchmarking-gnns.

.. math::
    m_v = (1 + \epsilon)\, x_v + \sum_{u \to v} x_u, \qquad
    h'_v = \mathrm{post}\Big(\mathrm{act}\big(\mathrm{BN}(\mathrm{MLP}(m_v))\big)\Big)

(``neighbor_aggr_GIN``: sum, mean or max; 0 for nodes without in-edges, as in DGL 0.4;
:func:`~layers.propagation.aggregate` equals DGL's ``copy_u_sum/mean/max`` there,
``tests/test_dgl_parity.py``). ``MLP``: ``n_mlp`` linear layers, BatchNorm + ReLU between them;
the outer BN + activation is benchmarking-gnns' ``ApplyNodeFunc`` (``batch_norm`` governs only
the post-processing's BN). ``apply_node_norm=False`` is the AutoGCN release's ``ApplyNodeFunc``,
which builds that BN but returns the MLP's output as it is:

.. math::
    h'_v = \mathrm{post}\big(\mathrm{MLP}(m_v)\big)

The BN stays allocated either way, so the parameter count is the release's.
:math:`\epsilon` starts at 0; ``learn_eps=False`` keeps it fixed.

Parameters per layer: ``1`` (ε) + the MLP's linears + ``2·out`` per MLP BatchNorm
+ ``2·out`` (ApplyNodeFunc BN) + ``2·out`` (post-processing BN).
"""

from __future__ import annotations

import torch
from torch import nn

from autogcn.graph import Graph
from layers.post_processing import Activation, GraphLayer, PostProcess, activation_name
from layers.propagation import aggregate

AGGREGATORS = ("sum", "mean", "max")


def gin_mlp(in_dim: int, out_dim: int, n_layers: int) -> nn.Sequential:
    """``n_layers`` linear maps of width ``out_dim``, with BatchNorm + ReLU between them."""
    if n_layers < 1:
        raise ValueError(f"a GIN MLP needs at least one layer, got {n_layers}")
    mods: list[nn.Module] = []
    dims = [in_dim] + [out_dim] * n_layers
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        mods.append(nn.Linear(a, b))
        if i < n_layers - 1:
            mods += [nn.BatchNorm1d(b), nn.ReLU()]
    return nn.Sequential(*mods)


class GINLayer(GraphLayer):
    r"""One GIN layer (see the module docstring).

    Args:
        in_dim, out_dim: feature widths.
        n_mlp: linear layers in the update MLP (the release's ``n_mlp_GIN``; its citation nets use
            1 for the input and output layers).
        activation: ``torch.relu``; ``None`` on an output layer (no activation anywhere).
        dropout, graph_norm, batch_norm, residual: the shared post-processing.
        learn_eps: learn :math:`\epsilon` (``learn_eps_GIN``).
        aggregator: ``"sum"``, ``"mean"`` or ``"max"`` (``neighbor_aggr_GIN``).
        apply_node_norm: apply the BN and activation after the MLP (benchmarking-gnns);
            ``False``: the AutoGCN release's forward, which built that BN but never ran it.
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        n_mlp: int = 2,
        activation: Activation = torch.relu,
        dropout: float = 0.0,
        graph_norm: bool = True,
        batch_norm: bool = True,
        residual: bool = False,
        learn_eps: bool = True,
        aggregator: str = "sum",
        apply_node_norm: bool = True,
    ) -> None:
        super().__init__()
        if aggregator not in AGGREGATORS:
            raise ValueError(f"unknown GIN aggregator {aggregator!r}; use one of {AGGREGATORS}")
        self.aggregator = aggregator
        self.activation = activation
        self.apply_node_norm = apply_node_norm
        eps = torch.zeros(1)
        if learn_eps:
            self.eps = nn.Parameter(eps)
        else:
            self.register_buffer("eps", eps)
        self.mlp = gin_mlp(in_dim, out_dim, n_mlp)
        self.bn_apply = nn.BatchNorm1d(out_dim)  # allocated even when unused: the release's count
        self.post = PostProcess(in_dim, out_dim, activation, dropout, graph_norm, batch_norm,
                                residual)

    def aggregate(self, g: Graph, feat: torch.Tensor) -> torch.Tensor:
        r""":math:`(1+\epsilon) x_v + \mathrm{AGG}_{u \to v} x_u`."""
        return (1 + self.eps) * feat + aggregate(g, feat, self.aggregator)

    def extra_repr(self) -> str:
        learn = isinstance(self.eps, nn.Parameter)
        unused = "" if self.apply_node_norm else ", apply_node_norm=False"
        return (f"aggregator={self.aggregator}, learn_eps={learn}, "
                f"activation={activation_name(self.activation)}{unused}")

    def forward(
        self, g: Graph, feat: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim)."""
        if feat.is_sparse:  # the (1 + ε)·x + Σ x_u sum needs a dense tensor
            feat = feat.to_dense()
        h = self.mlp(self.aggregate(g, feat))
        if self.apply_node_norm:
            h = self.bn_apply(h)
            if self.activation is not None:
                h = self.activation(h)
        return self.post(feat, h, snorm_n)

r"""GraphSAGE (Hamilton et al., NeurIPS 2017), as in the release.

.. math::
    h'_v = \mathrm{post}\Big(\mathrm{act}\big(W_{self}\, \tilde x_v + b
           + W_{neigh}\, \mathrm{AGG}_{u \to v}\, \tilde x_u\big)\Big),
    \qquad \tilde x = \mathrm{dropout}(x)

with the aggregator ``sage_aggregator``:

* ``"mean"`` (default): :math:`\mathrm{AGG} = \frac{1}{\deg^{in}(v)} \sum_{u \to v} \tilde x_u`;
* ``"pool"``: :math:`\mathrm{AGG} = \max_{u \to v} \mathrm{relu}(W_{pool} \tilde x_u + b_{pool})`
  (elementwise);
* ``"gcn"``: no self term, :math:`h = W_{neigh} \frac{\tilde x_v + \sum_{u \to v} \tilde x_u}
  {\deg^{in}(v) + 1} + b`.

Nodes without in-edges aggregate to 0. For ``"mean"`` and ``"gcn"``, :math:`W_{neigh}` is applied
before the (linear) aggregation when it narrows the features (``in > out``), after it otherwise.
The release passed ``dropout`` as ``SAGEConv``'s ``feat_drop`` (on the layer *input*) and the
activation to ``SAGEConv`` itself, so the order is act → graph norm → BN → residual: the shared
:class:`~layers.post_processing.PostProcess` runs without activation and output dropout.

:class:`SAGEConv` equals DGL 2.x's ``SAGEConv`` for these three aggregators
(``tests/test_dgl_parity.py``): the same parameters and ``state_dict`` names (``fc_self`` with
bias, ``fc_neigh`` without, ``fc_pool`` for ``"pool"``, a separate ``bias`` for ``"gcn"``) and
initialisation (Glorot-uniform weights with the ReLU gain; ``nn.Linear``'s default biases,
``bias`` at 0). DGL's ``"lstm"`` aggregator is not provided.

Parameter counts against the release: DGL 0.4's ``SAGEConv`` gave ``fc_neigh`` a bias too; the
two biases add up to one in effect, but the count here is ``out`` lower per layer, the one
difference that cannot be closed (``tests/test_param_counts.py``). The release allocated the
layer's BatchNorm only with ``batch_norm`` on; ``PostProcess`` always allocates it, so without
``batch_norm`` it is frozen, out of the trainable count, as the release's.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from autogcn.graph import Graph
from layers.post_processing import Activation, GraphLayer, PostProcess, activation_name
from layers.propagation import aggregate

SAGE_AGGREGATORS = ("mean", "gcn", "pool")


class SAGEConv(nn.Module):
    r"""The GraphSAGE convolution (see the module docstring for the maths).

    Args:
        in_feats, out_feats: feature widths.
        aggregator: ``"mean"``, ``"gcn"`` or ``"pool"``.
        feat_drop: dropout of the input features (self and neighbours).
        bias: learn the bias (in ``fc_self``, or ``bias`` for ``"gcn"``).
        activation: applied to the output; ``None`` for none.
    """

    def __init__(
        self,
        in_feats: int,
        out_feats: int,
        aggregator: str = "mean",
        feat_drop: float = 0.0,
        bias: bool = True,
        activation: Activation = None,
    ) -> None:
        super().__init__()
        if aggregator not in SAGE_AGGREGATORS:
            raise ValueError(
                f"unknown GraphSAGE aggregator {aggregator!r}; supported: {SAGE_AGGREGATORS}")
        self.in_feats, self.out_feats, self.aggregator = in_feats, out_feats, aggregator
        self.feat_drop = nn.Dropout(feat_drop)
        self.activation = activation
        # Created in DGL's order, so that one seed gives DGL's initial values.
        if aggregator == "pool":
            self.fc_pool = nn.Linear(in_feats, in_feats)
        self.fc_neigh = nn.Linear(in_feats, out_feats, bias=False)
        if aggregator != "gcn":
            self.fc_self = nn.Linear(in_feats, out_feats, bias=bias)
        else:
            self.bias = nn.Parameter(torch.zeros(out_feats)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot-uniform weights (ReLU gain); the ``nn.Linear`` biases are left as they are."""
        gain = nn.init.calculate_gain("relu")
        if self.aggregator == "pool":
            nn.init.xavier_uniform_(self.fc_pool.weight, gain=gain)
        if self.aggregator != "gcn":
            nn.init.xavier_uniform_(self.fc_self.weight, gain=gain)
        nn.init.xavier_uniform_(self.fc_neigh.weight, gain=gain)

    def _neighbours(self, g: Graph, h: torch.Tensor) -> torch.Tensor:
        """``W_neigh · AGG`` of the (dropped-out) features ``h``."""
        if self.aggregator == "pool":
            return self.fc_neigh(aggregate(g, F.relu(self.fc_pool(h)), "max"))
        project_first = self.in_feats > self.out_feats
        src = self.fc_neigh(h) if project_first else h
        if self.aggregator == "mean":
            neigh = aggregate(g, src, "mean")
        else:  # "gcn": the node itself counts as one more neighbour
            degrees = g.in_degrees().to(src.dtype).unsqueeze(-1)
            neigh = (aggregate(g, src, "sum") + src) / (degrees + 1)
        return neigh if project_first else self.fc_neigh(neigh)

    def forward(self, g: Graph, feat: torch.Tensor) -> torch.Tensor:
        """``feat`` (N, in) → (N, out)."""
        h = self.feat_drop(feat)
        neigh = self._neighbours(g, h)
        if self.aggregator != "gcn":
            out = self.fc_self(h) + neigh
        else:
            out = neigh if self.bias is None else neigh + self.bias
        return out if self.activation is None else self.activation(out)

    def extra_repr(self) -> str:
        return (f"{self.in_feats}, {self.out_feats}, aggregator={self.aggregator}, "
                f"activation={activation_name(self.activation)}")


class GraphSageLayer(GraphLayer):
    """One GraphSAGE layer: :class:`SAGEConv` (input dropout, activation) + post-processing.

    Args:
        in_dim, out_dim: feature widths.
        activation: applied inside ``SAGEConv`` (before normalisation); ``None`` on an output layer.
        dropout: ``SAGEConv``'s ``feat_drop`` (dropout of the layer input).
        graph_norm, batch_norm, residual: the shared post-processing.
        aggregator: ``"mean"``, ``"gcn"`` or ``"pool"``.
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
        aggregator: str = "mean",
    ) -> None:
        super().__init__()
        self.conv = SAGEConv(in_dim, out_dim, aggregator, feat_drop=dropout, bias=True,
                             activation=activation)
        self.post = PostProcess(in_dim, out_dim, None, 0.0, graph_norm, batch_norm, residual)
        if not batch_norm:  # the release did not allocate it: keep it out of the trainable count
            self.post.batchnorm_h.requires_grad_(False)

    def forward(
        self, g: Graph, feat: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``feat`` (N, in_dim) → (N, out_dim)."""
        if feat.is_sparse:  # the input dropout and the aggregation need a dense tensor
            feat = feat.to_dense()
        return self.post(feat, self.conv(g, feat), snorm_n)

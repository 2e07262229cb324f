"""The paper's baselines ``MLP GCN GraphSage GAT MoNet GIN ChebNet SGC APGCN``, registered under
the release's names for batched node tasks (SBM), batched graph tasks (ZINC, superpixels) and
single-graph node classification (PubMed, Squirrel, Arxiv-year, YelpChi), in the shapes of the
authors' release (benchmarking-gnns nets plus their SGC/APGCN/ChebNet/MoNet nets).

GCN, GraphSage and ChebNet are uniform layer stacks (:func:`~nets.gnn_net.stack_net`); GAT,
MoNet and single-graph GIN are :class:`~nets.gnn_net.GNNNet` stacks of other widths; MLP, GIN
(sum of per-layer predictions), SGC and APGCN have nets of their own. Self-loops are added by the
runner, per task, as the release's main scripts add them (``Task.self_loop_models``).
Single-graph features may be sparse COO (PubMed, Squirrel): ``nn.Linear`` accepts them,
:func:`~nets.gnn_net.feature_dropout` drops their stored values, and layers that need dense
features densify them.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from autogcn.graph import Graph
from autogcn.propagation import propagate
from layers.ap_layer import AdaptivePropagation
from layers.cheb_layer import ChebLayer
from layers.gat_layer import GATLayer
from layers.gcn_layer import GCNLayer
from layers.gin_layer import GINLayer
from layers.gmm_layer import GMMLayer
from layers.graphsage_layer import GraphSageLayer
from layers.mlp_readout_layer import MLPReadout
from layers.propagation import readout
from nets.gnn_net import (
    GNNNet,
    LayerStack,
    NetIO,
    feature_dropout,
    make_encoder,
    post_args,
    predict,
    stack_layer,
)
from nets.registry import register


def gat_net(io: NetIO, p: dict) -> GNNNet:
    """GAT: heads concatenated (width ``hidden·heads``); the last layer has one head."""
    heads, hidden, n_layers = p["n_heads"], p["hidden_dim"], p["L"]
    width = hidden * heads

    def layer(a: int, b: int, n_heads: int, act) -> GATLayer:
        return GATLayer(a, b, n_heads, act, p["dropout"], **post_args(p))

    if io.level == "single_graph":  # the release's citation GAT: ELU, output layer 1 head
        layers = [layer(io.in_dim, hidden, heads, F.elu)]
        layers += [layer(width, hidden, heads, F.elu) for _ in range(n_layers - 1)]
        layers.append(layer(width, io.num_classes, 1, None))
        return GNNNet(io, layers)
    # benchmarking-gnns GAT: no activation; L-1 multi-head layers and a one-head layer to out_dim
    layers = [layer(width, hidden, heads, None) for _ in range(n_layers - 1)]
    layers.append(layer(width, p["out_dim"], 1, None))
    return GNNNet(io, layers, make_encoder(io.input_kind, io.in_dim, width),
                  p["in_feat_dropout"], MLPReadout(p["out_dim"], io.num_classes), p["readout"])


def monet_net(io: NetIO, p: dict) -> GNNNet:
    """MoNet: encoder → L GMM layers (the last without activation) → MLP head, on every task.

    On single graphs too the release used a linear encoder and an MLP head, and ``L`` counts all
    GMM layers (its PubMed config, L = 2, is the paper's "1 hidden layer").
    """
    hidden, out_dim, n_layers = p["hidden_dim"], p["out_dim"], p["L"]

    def layer(a: int, b: int, act) -> GMMLayer:
        return GMMLayer(a, b, act, p["dropout"], **post_args(p), dim=p["pseudo_dim_MoNet"],
                        kernel=p["kernel"])

    layers = [layer(hidden, hidden, torch.relu) for _ in range(n_layers - 1)]
    layers.append(layer(hidden, out_dim, None))
    # the release's MoNet applied no input dropout (every config has in_feat_dropout 0)
    drop = 0.0 if io.level == "single_graph" else p["in_feat_dropout"]
    kind = "linear" if io.level == "single_graph" else io.input_kind
    return GNNNet(io, layers, make_encoder(kind, io.in_dim, hidden), drop,
                  MLPReadout(out_dim, io.num_classes), p["readout"])


# ------------------------------------------------------------------ GIN
class GINNet(nn.Module):
    r"""GIN on batched graphs: the prediction sums one linear map per representation,

    .. math::
        \hat y = \sum_{l=0}^{L} W_l\, r(h^{(l)}) + b_l

    with :math:`h^{(0)}` the embedding, :math:`h^{(l)}` the output of GIN layer :math:`l` and
    :math:`r` the identity (node tasks) or the graph readout (graph tasks).
    ``gin_release_forward: true``, the release's batched forward: its layers pass no activation
    and its MLP wrapper returns the MLP's output, so outside the MLP a layer has no ReLU and
    the wrapper's batch norm is allocated but not run. ``false``: benchmarking-gnns' layer,
    wrapper batch norm and ReLU, then ReLU after the post-processing's batch norm.
    """

    def __init__(self, io: NetIO, p: dict) -> None:
        super().__init__()
        self.io, self.readout = io, p["readout"]
        hidden, n_layers = p["hidden_dim"], p["L"]
        self.encoder = make_encoder(io.input_kind, io.in_dim, hidden)
        self.in_feat_dropout = nn.Dropout(p["in_feat_dropout"])
        release = p["gin_release_forward"]
        self.stack = LayerStack([
            GINLayer(hidden, hidden, p["n_mlp_GIN"], None if release else torch.relu,
                     p["dropout"], **post_args(p), learn_eps=p["learn_eps_GIN"],
                     aggregator=p["neighbor_aggr_GIN"], apply_node_norm=not release)
            for _ in range(n_layers)
        ])
        self.predictions = nn.ModuleList(nn.Linear(hidden, io.num_classes)
                                         for _ in range(n_layers + 1))

    def forward(self, g: Graph, h: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        h = self.in_feat_dropout(self.encoder(h))
        hidden = self.stack(g, h, snorm_n, return_all=True)
        if self.io.level == "graph":
            hidden = [readout(g, x, self.readout) for x in hidden]
        return sum(lin(x) for lin, x in zip(self.predictions, hidden))


def gin_net(io: NetIO, p: dict) -> nn.Module:
    """GIN: :class:`GINNet` on batched graphs; the release's citation stack on single graphs,
    GIN(in→h, one-linear MLP), L−1 × GIN(h→h, ``n_mlp_GIN`` linears), GIN(h→classes, one
    linear, no activation, no dropout). ``gin_release_forward: true``, the release's forward
    (``docs/deviations.md``): (a) the output layer is allocated but not run (the last hidden
    layer's outputs are the class scores) and (b) ``apply_node_norm=False``
    (:class:`~layers.gin_layer.GINLayer`). ``gin_output_layer`` sets (a) alone.
    """
    if io.level != "single_graph":
        return GINNet(io, p)
    hidden, n_layers = p["hidden_dim"], p["L"]
    release = p["gin_release_forward"]
    run_output_layer = not release if p["gin_output_layer"] is None else p["gin_output_layer"]
    if not run_output_layer and hidden < io.num_classes:
        raise ValueError(f"the release's GIN forward scores classes with the hidden_dim {hidden} "
                         f"outputs; it needs hidden_dim >= the {io.num_classes} classes")
    gin = {"learn_eps": p["learn_eps_GIN"], "aggregator": p["neighbor_aggr_GIN"],
           "apply_node_norm": not release, **post_args(p)}
    layers = [GINLayer(io.in_dim, hidden, 1, torch.relu, p["dropout"], **gin)]
    layers += [GINLayer(hidden, hidden, p["n_mlp_GIN"], torch.relu, p["dropout"], **gin)
               for _ in range(n_layers - 1)]
    output = GINLayer(hidden, io.num_classes, 1, None, 0.0, **gin)
    if run_output_layer:
        return GNNNet(io, [*layers, output])
    net = GNNNet(io, layers)
    net.unused_output_layer = output  # allocated, as in the release: its parameters count
    return net


# ------------------------------------------------------------------ MLP
class MLPNet(nn.Module):
    """Graph-agnostic baseline: L × [Linear, ReLU, Dropout] → (readout) → MLP head. Integer
    features (SBM, ZINC) are embedded, then L hidden layers; float features feed the first
    ``Linear(in, h)``, then L−1. ``gated``: the release's MLP_GATED, ``h ⊙ σ(W_g h)``, sum readout.
    """

    def __init__(self, io: NetIO, p: dict) -> None:
        super().__init__()
        self.io, self.gated = io, p["gated"]
        self.readout = "sum" if self.gated else p["readout"]
        hidden, n_layers = p["hidden_dim"], p["L"]
        embed = io.input_kind == "embedding" and io.level != "single_graph"
        self.encoder = nn.Embedding(io.in_dim, hidden) if embed else None
        dims = [hidden] * (n_layers + 1) if embed else [io.in_dim] + [hidden] * n_layers
        self.in_feat_dropout = nn.Dropout(p["in_feat_dropout"])
        mods: list[nn.Module] = []
        for a, b in zip(dims[:-1], dims[1:]):
            mods += [nn.Linear(a, b), nn.ReLU(), nn.Dropout(p["dropout"])]
        self.feat_mlp = nn.Sequential(*mods)
        self.gates = nn.Linear(hidden, hidden) if self.gated else None
        self.head = MLPReadout(hidden, io.num_classes)

    def forward(self, g: Graph, h: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        if self.encoder is not None:
            h = self.encoder(h)
        h = self.feat_mlp(feature_dropout(self.in_feat_dropout, h))
        if self.gates is not None:
            h = torch.sigmoid(self.gates(h)) * h
        return predict(self, g, h)


# ------------------------------------------------------------------ SGC and APGCN
class SGConv(nn.Module):
    r"""Simplified graph convolution: :math:`P^k x\, W + b`, :math:`P` the degree-normalised
    sum over in-edges, in-degree on both sides (:func:`~autogcn.propagation.propagate`). Equals
    DGL 2.x's ``SGConv(k, bias=True, allow_zero_in_degree=True)`` (``tests/test_dgl_parity.py``):
    the same ``state_dict`` names (``fc.weight``, ``fc.bias``), initialisation (Glorot-uniform
    weight, zero bias) and order (propagate at the input width, then project).
    """

    def __init__(self, in_feats: int, out_feats: int, k: int = 1, bias: bool = True) -> None:
        super().__init__()
        self.k = k
        self.fc = nn.Linear(in_feats, out_feats, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.fc.weight)
        if self.fc.bias is not None:
            nn.init.zeros_(self.fc.bias)

    def forward(self, g: Graph, feat: torch.Tensor) -> torch.Tensor:
        """``feat`` (N, in) → (N, out)."""
        for _ in range(self.k):
            feat = propagate(g, feat)
        return self.fc(feat)

    def extra_repr(self) -> str:
        return f"k={self.k}"


class LinearChain(nn.Module):
    """``Linear(dropout(x))`` over the widths ``dims``, ReLU between consecutive layers: the
    feature transform of the release's SGC and APGCN nets."""

    # Not a compiled region (train/compilation.py): compiled, it measured 1.55x slower than
    # eager on an H200 GPU (docs/performance.md).

    def __init__(self, dims: list[int], dropout: float) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            h = layer(feature_dropout(self.dropout, h))
            if i < len(self.layers) - 1:
                h = torch.relu(h)
        return h


class SGCNet(nn.Module):
    r"""SGC (Wu et al., ICML 2019) after the release's linear layers.

    Batched graphs: encoder → input dropout → (L−1) × Linear(h, h) (:class:`LinearChain`) →
    :class:`SGConv` ``(h, h, k)`` (:math:`\tilde A^k x W + b`, in-degree normalisation on both
    sides, self-loops from the runner) → (readout) → MLP head. Single graph: Linear(in, h) →
    (L−1) × Linear(h, h) → ``SGConv(h, classes, k)``. ``k = sgc_k`` (2; the release's ZINC net
    used 8). Input dropout is ``in_feat_dropout`` (the release's SBM net used ``dropout``; both
    are 0 in its SBM configs).
    """

    def __init__(self, io: NetIO, p: dict) -> None:
        super().__init__()
        self.io, self.readout = io, p["readout"]
        hidden, n_layers = p["hidden_dim"], p["L"]
        single = io.level == "single_graph"
        self.encoder = make_encoder("linear" if single else io.input_kind, io.in_dim, hidden)
        self.in_feat_dropout = nn.Dropout(0.0 if single else p["in_feat_dropout"])
        self.chain = LinearChain([hidden] * n_layers, p["dropout"])
        out = io.num_classes if single else hidden
        self.prop = SGConv(hidden, out, k=p["sgc_k"], bias=True)
        self.head = None if single else MLPReadout(hidden, io.num_classes)

    def forward(self, g: Graph, h: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        h = self.chain(self.in_feat_dropout(self.encoder(h)))
        return predict(self, g, self.prop(g, h))


class APGCNNet(nn.Module):
    """APGCN: linear layers, then :class:`~layers.ap_layer.AdaptivePropagation`.

    Batched graphs: encoder → input dropout → ``n`` × Linear(h, h) (:class:`LinearChain`;
    ``n = apgcn_linear_layers``, default L−1 as in the release's SBM and superpixel nets; its
    ZINC net used L) → propagation → (readout) → MLP head. Single graph (the release's citation
    net): Linear(in, h), L−1 × Linear(h, h), Linear(h, classes), then the propagation of the
    logits. The training loop adds :meth:`auxiliary_loss` to the task loss. The input dropout
    is ``in_feat_dropout`` (the release's SBM net used ``dropout``; its configs set both to 0).
    """

    def __init__(self, io: NetIO, p: dict) -> None:
        super().__init__()
        self.io, self.readout = io, p["readout"]
        self.prop_penalty = p["prop_penalty"]
        hidden, n_layers = p["hidden_dim"], p["L"]
        mode = p["apgcn_mode"]
        if io.level == "single_graph":
            self.encoder = None
            self.in_feat_dropout = nn.Identity()
            self.chain = LinearChain([io.in_dim] + [hidden] * n_layers + [io.num_classes],
                                     p["dropout"])
            self.prop = AdaptivePropagation(p["n_iter"], io.num_classes, mode)
            self.head = None
        else:
            n_linear = p["apgcn_linear_layers"]
            n_linear = n_layers - 1 if n_linear is None else n_linear
            self.encoder = make_encoder(io.input_kind, io.in_dim, hidden)
            self.in_feat_dropout = nn.Dropout(p["in_feat_dropout"])
            self.chain = LinearChain([hidden] * (n_linear + 1), p["dropout"])
            self.prop = AdaptivePropagation(p["n_iter"], hidden, mode)
            self.head = MLPReadout(hidden, io.num_classes)
        self.steps: torch.Tensor | None = None
        self.remainders: torch.Tensor | None = None

    def forward(self, g: Graph, h: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        if self.encoder is not None:
            h = self.in_feat_dropout(self.encoder(h))
        h, self.steps, self.remainders = self.prop(g, self.chain(h))
        return predict(self, g, h)

    def auxiliary_loss(self) -> torch.Tensor | float:
        """``prop_penalty · mean(steps + remainders)`` of the last forward pass (0 before one)."""
        if self.steps is None:
            return 0.0
        return self.prop_penalty * (self.steps + self.remainders).mean()


register("MLP", net=MLPNet)
# the release's citation GCN and ChebNet: output layer without activation and without dropout
register("GCN", layer=stack_layer(GCNLayer, lambda p: {"source_degree": p["gcn_source_degree"]},
                                  output_dropout=False))
# GraphSage's dropout is SAGEConv's input dropout, kept on the output layer as in the release
register("GraphSage", layer=stack_layer(GraphSageLayer,
                                        lambda p: {"aggregator": p["sage_aggregator"]}))
register("GAT", net=gat_net)
register("MoNet", net=monet_net)
register("GIN", net=gin_net)
register("ChebNet", layer=stack_layer(ChebLayer, output_dropout=False))
register("SGC", net=SGCNet)
register("APGCN", net=APGCNNet)

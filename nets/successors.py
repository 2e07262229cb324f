"""AutoGCN's successors, registered as ``GPRGNN BERNNET CHEBNETII JACOBICONV OPTBASIS`` for every
task: on a single graph the official codes' nets (:class:`DecoupledNet`, :class:`OptBasisNet`);
on batched graphs (SBM, ZINC, superpixels) a :func:`~nets.gnn_net.stack_net` of
:class:`~layers.poly_filter.PolyFilterLayer` layers, as the project's ChebNet and AutoGCN (no
paper has a graph-level architecture: the project's choice). The filters' coefficients may
train with their own learning rate and weight decay, as in the official codes
(:func:`~nets.registry.optimizer_groups`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
from torch import nn

from autogcn import BernNetProp, ChebNetIIProp, GPRGNNProp, JacobiConvProp, OptBasisProp
from autogcn.graph import Graph
from layers.poly_filter import PolyFilterLayer, PolynomialFilter
from nets.baselines import LinearChain
from nets.gnn_net import NetIO, post_args, stack_net
from nets.registry import register

#: The four with a fixed basis, hence one frequency response for every input.
SUCCESSORS = ("GPRGNN", "BERNNET", "CHEBNETII", "JACOBICONV")
#: OptBasisGNN: a basis built on each signal, so no response without one (autogcn/optbasis.py).
OPTBASIS = "OPTBASIS"
ALL_SUCCESSORS = (*SUCCESSORS, OPTBASIS)


#: Each successor's filter over ``c`` channels, from the config's ``net_params`` ``p``.
FILTERS: dict[str, Callable[[int, dict], PolynomialFilter]] = {
    "GPRGNN": lambda c, p: GPRGNNProp(p["poly_order"], p["gpr_alpha"]),
    "BERNNET": lambda c, p: BernNetProp(p["poly_order"]),
    "CHEBNETII": lambda c, p: ChebNetIIProp(p["poly_order"]),
    "JACOBICONV": lambda c, p: JacobiConvProp(c, p["poly_order"], p["jacobi_a"], p["jacobi_b"],
                                              p["jacobi_alpha"]),
    OPTBASIS: lambda c, p: OptBasisProp(c, p["poly_order"]),
}


class DecoupledNet(nn.Module):
    r"""MLP → dropout(``dprate``) → polynomial filter: the official node-classification nets.

    The MLP is :class:`~nets.baselines.LinearChain` with widths
    ``[in] + [hidden] * (L - 1) + [classes]``: ``Linear(dropout(x))``, ReLU between layers.
    ``L = 2`` is GPR-GNN's, BernNet's and ChebNetII's net (dropout → Linear(F, 64) → ReLU →
    dropout → Linear(64, C) → dropout(dprate) → filter); ``L = 1`` is JacobiConv's
    (dropout(dpb) → Linear(F, C) → dropout(dpt) → filter, with ``dropout`` = dpb and
    ``dprate`` = dpt). The output is the filtered logits (the loss applies the softmax).
    Parameters: the MLP's + the filter's.
    """

    def __init__(self, io: NetIO, p: dict, model: str) -> None:
        super().__init__()
        self.io = io
        dims = [io.in_dim] + [p["hidden_dim"]] * (p["L"] - 1) + [io.num_classes]
        self.mlp = LinearChain(dims, p["dropout"])
        self.prop_dropout = nn.Dropout(p["dprate"])
        self.filter = FILTERS[model](io.num_classes, p)

    def forward(self, g: Graph, h: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        return self.filter(self.prop_dropout(self.mlp(h)), g)


class OptBasisNet(nn.Module):
    r"""OptBasisGNN's node-classification net (official ``NormalNN``): dropout → Linear(F,
    hidden) → ReLU → dropout(``dprate``, the official ``dropout2``) → :class:`OptBasisProp`
    over the ``hidden`` channels → dropout → Linear(hidden, C). Unlike :class:`DecoupledNet`
    the filter runs on the hidden layer and a linear map follows it. Parameters:
    ``(F + 1)·hidden + (K + 1)·hidden + (hidden + 1)·C``.
    """

    def __init__(self, io: NetIO, p: dict) -> None:
        super().__init__()
        self.io = io
        hidden = p["hidden_dim"]
        self.lin_in = LinearChain([io.in_dim, hidden], p["dropout"])
        self.prop_dropout = nn.Dropout(p["dprate"])
        self.filter = OptBasisProp(hidden, p["poly_order"])
        self.lin_out = LinearChain([hidden, io.num_classes], p["dropout"])

    def forward(self, g: Graph, h: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        h = self.prop_dropout(torch.relu(self.lin_in(h)))
        return self.lin_out(self.filter(h, g))


def filter_layer(model: str, in_dim: int, out_dim: int, p: dict,
                 output_layer: bool) -> PolyFilterLayer:
    """One graph-level layer of ``model`` for :func:`~nets.gnn_net.stack_net`."""
    return PolyFilterLayer(FILTERS[model](out_dim, p), in_dim, out_dim,
                           activation=None if output_layer else torch.relu,
                           dropout=p["dropout"], dprate=p["dprate"], **post_args(p))


def successor_net(model: str, io: NetIO, p: dict) -> nn.Module:
    """:class:`DecoupledNet` (OptBasisGNN: :class:`OptBasisNet`) on a single graph, the
    filter-layer stack on batched graphs."""
    if io.level == "single_graph":
        return OptBasisNet(io, p) if model == OPTBASIS else DecoupledNet(io, p, model)
    return stack_net(io, p, partial(filter_layer, model))


for _name in ALL_SUCCESSORS:
    register(_name, net=partial(successor_net, _name))

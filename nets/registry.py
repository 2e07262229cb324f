"""Model registry: a model name (as in the release) -> how to build its net for any task.

Layer-stack models register a layer factory and get :class:`~nets.gnn_net.GNNNet`; models with
a different overall shape (e.g. GIN's per-layer predictions) register a net builder instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from layers.autogcn_layer import AutoGCNLayer
from nets.gnn_net import GNNNet, LayerFactory, NetIO

NetBuilder = Callable[[NetIO, dict], nn.Module]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    build: NetBuilder
    # Self-loops are added (when net_params.self_loop is true) only for models that use them.
    self_loops: bool = False


MODELS: dict[str, ModelSpec] = {}


def register(name: str, *, layer: LayerFactory | None = None, net: NetBuilder | None = None,
             self_loops: bool = False) -> None:
    """Register a model by a layer factory (stacked in :class:`GNNNet`) or a whole-net builder."""
    if (layer is None) == (net is None):
        raise ValueError("give exactly one of layer= or net=")
    if layer is not None:
        def net(io: NetIO, params: dict, _layer: LayerFactory = layer) -> nn.Module:
            return GNNNet(io, params, _layer)
    MODELS[name] = ModelSpec(name, net, self_loops)


def build_net(model: str, io: NetIO, net_params: dict) -> nn.Module:
    """Build ``model``'s net for a task/dataset described by ``io``."""
    try:
        spec = MODELS[model]
    except KeyError:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(sorted(MODELS))}") from None
    return spec.build(io, net_params)


def uses_self_loops(model: str, net_params: dict) -> bool:
    return MODELS[model].self_loops and bool(net_params.get("self_loop", False))


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def autogcn_layer(in_dim: int, out_dim: int, p: dict, output_layer: bool) -> AutoGCNLayer:
    return AutoGCNLayer(
        in_dim,
        out_dim,
        activation=None if output_layer else torch.relu,
        dropout=p["dropout"],
        graph_norm=p["graph_norm"],
        batch_norm=p["batch_norm"],
        residual=p["residual"],
        K=p["K"],
        num_filters=p["num_filters"],
        mode=p["opt"],
        gate=p["gate"],
        filters=p["filters"],
        single_a_init=p["single_a_init"],
    )


register("AUTOGCN", layer=autogcn_layer)


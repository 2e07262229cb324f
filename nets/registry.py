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


#: The ``net_params`` keys (learning rate, weight decay) of the optimiser groups a module may
#: declare with ``coefficient_groups()`` (the polynomial filters, ``layers/poly_filter.py``).
GROUP_SETTINGS = {"prop": ("prop_lr", "prop_wd"), "channel": ("jacobi_w_lr", "jacobi_w_wd")}


def optimizer_groups(model: nn.Module, params: dict, net_params: dict) -> list[dict]:
    """Adam's parameter groups: the first holds everything at ``init_lr`` / ``weight_decay``;
    parameters a module declares by ``coefficient_groups()`` get their own group with the
    settings of :data:`GROUP_SETTINGS` (a learning rate of ``None`` falls back: ``jacobi_w_lr``
    to ``prop_lr``, ``prop_lr`` to ``init_lr``), as the official GPR-GNN, BernNet, ChebNetII and
    JacobiConv codes train their coefficients. One group for every other model."""
    declared: dict[str, list[nn.Parameter]] = {}
    for module in model.modules():
        groups = getattr(module, "coefficient_groups", None)
        if callable(groups):
            for name, members in groups().items():
                declared.setdefault(name, []).extend(members)
    taken = {id(p) for members in declared.values() for p in members}
    rest = [p for p in model.parameters() if id(p) not in taken]
    out = [{"params": rest, "lr": params["init_lr"], "weight_decay": params["weight_decay"]}]
    lr = {"prop": net_params.get("prop_lr") or params["init_lr"]}
    lr["channel"] = net_params.get("jacobi_w_lr") or lr["prop"]
    for name, members in declared.items():
        _, wd_key = GROUP_SETTINGS[name]
        out.append({"params": members, "lr": lr[name],
                    "weight_decay": net_params.get(wd_key) or 0.0})
    return out


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
        num_banks=p["num_filters"],  # the config key keeps the authors' name
        mode=p["opt"],
        gate=p["gate"],
        filters=p["filters"],
        single_a_init=p["single_a_init"],
    )


register("AUTOGCN", layer=autogcn_layer)


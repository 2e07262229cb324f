"""Model registry: a model name (as in the release) -> how to build its net for any task.

Layer-stack models register a layer factory (:func:`~nets.gnn_net.stack_net` stacks it); models
with a different overall shape (e.g. GIN's per-layer predictions) register a net builder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from torch import nn

from layers.autogcn_layer import AutoGCNLayer
from nets.gnn_net import LayerFactory, NetIO, stack_layer, stack_net

NetBuilder = Callable[[NetIO, dict], nn.Module]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    build: NetBuilder


MODELS: dict[str, ModelSpec] = {}


def register(name: str, *, layer: LayerFactory | None = None,
             net: NetBuilder | None = None) -> None:
    """Register a model by a layer factory (:func:`stack_net`) or a whole-net builder."""
    if (layer is None) == (net is None):
        raise ValueError("give exactly one of layer= or net=")
    MODELS[name] = ModelSpec(name, net or partial(stack_net, make_layer=layer))


def build_net(model: str, io: NetIO, net_params: dict) -> nn.Module:
    """Build ``model``'s net for a task/dataset described by ``io``."""
    try:
        spec = MODELS[model]
    except KeyError:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(sorted(MODELS))}") from None
    return spec.build(io, net_params)


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


register("AUTOGCN", layer=stack_layer(AutoGCNLayer, lambda p: {
    "K": p["K"], "num_banks": p["num_filters"],  # the config key keeps the authors' name
    "mode": p["opt"], "gate": p["gate"], "filters": p["filters"],
    "single_a_init": p["single_a_init"]}))

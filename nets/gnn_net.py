"""The net shared by every model that is a stack of graph layers, and the pieces nets are made of.

* batched graphs (SBM, ZINC, superpixels): encoder -> input dropout -> L layers -> prediction head
  (per node for SBM; after a mean/sum/max readout for graph tasks);
* one graph, full batch (PubMed, Squirrel, ...): layer(in -> h), L-1 layers (h -> h) and an
  output layer (h -> classes) without activation, as in the release's citation nets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

import torch
from torch import nn

from autogcn.graph import Graph
from layers.mlp_readout_layer import MLPReadout
from layers.propagation import readout


@dataclass(frozen=True)
class NetIO:
    """What a net must accept and produce, taken from the dataset and the task."""

    level: str  # "node", "graph" or "single_graph"
    input_kind: str  # "embedding" or "linear"
    in_dim: int
    num_classes: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NetIO:
        """From :meth:`as_dict` output; keys of other versions are ignored."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


# (in_dim, out_dim, net_params, output_layer) -> layer
LayerFactory = Callable[[int, int, dict, bool], nn.Module]


def make_encoder(kind: str, in_dim: int, hidden_dim: int) -> nn.Module:
    """``Embedding`` for integer node features (SBM, ZINC), ``Linear`` for float ones."""
    return {"embedding": nn.Embedding, "linear": nn.Linear}[kind](in_dim, hidden_dim)


def feature_dropout(drop: nn.Dropout, x: torch.Tensor) -> torch.Tensor:
    """Dropout that also accepts sparse COO features (zeros stay zero: drop the stored values)."""
    if not x.is_sparse:
        return drop(x)
    if not drop.training or drop.p == 0:
        return x
    x = x.coalesce()
    # the indices come from a coalesced tensor: valid and sorted, nothing to check or merge
    return torch.sparse_coo_tensor(x.indices(), drop(x.values()), x.shape,
                                   check_invariants=False, is_coalesced=True)


class LayerStack(nn.Module):
    """Applies graph layers ``layer(g, h, snorm_n)`` in sequence (what they share, such as the
    normalised adjacency, is cached on ``g``: computed once per batch)."""

    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, g: Graph, h: torch.Tensor, snorm_n: torch.Tensor | None = None,
                return_all: bool = False) -> torch.Tensor | list[torch.Tensor]:
        hidden = [h]
        for layer in self.layers:
            h = layer(g, h, snorm_n)
            hidden.append(h)
        return hidden if return_all else h


class GNNNet(nn.Module):
    """Optional encoder → input dropout → :class:`LayerStack` → (graph readout) → optional head.

    :func:`stack_net` builds it from a layer factory (the uniform ``[hidden] * L`` stack);
    GAT, MoNet and single-graph GIN pass layers of other widths or activations.
    """

    def __init__(self, io: NetIO, layers: list[nn.Module], encoder: nn.Module | None = None,
                 in_feat_dropout: float = 0.0, head: nn.Module | None = None,
                 readout: str = "mean") -> None:
        super().__init__()
        self.io, self.readout = io, readout
        self.encoder = encoder
        self.in_feat_dropout = nn.Dropout(in_feat_dropout)
        self.stack = LayerStack(layers)
        self.head = head

    def forward(self, g: Graph, h: torch.Tensor,
                snorm_n: torch.Tensor | None = None) -> torch.Tensor:
        if self.encoder is not None:
            h = self.encoder(h)
        return predict(self, g, self.stack(g, feature_dropout(self.in_feat_dropout, h), snorm_n))


def predict(net: nn.Module, g: Graph, h: torch.Tensor) -> torch.Tensor:
    """``net.readout`` per graph (graph tasks only), then ``net.head`` where there is one."""
    if net.io.level == "graph":
        h = readout(g, h, net.readout)
    return net.head(h) if net.head is not None else h


def stack_net(io: NetIO, p: dict, make_layer: LayerFactory) -> GNNNet:
    """The layer stack of ``make_layer``: in the module docstring's two shapes."""
    hidden, out_dim, n_layers = p["hidden_dim"], p["out_dim"], p["L"]
    if io.level == "single_graph":
        dims = [io.in_dim] + [hidden] * n_layers + [io.num_classes]
        return GNNNet(io, [make_layer(a, b, p, i == n_layers)
                           for i, (a, b) in enumerate(zip(dims[:-1], dims[1:]))])
    encoder = make_encoder(io.input_kind, io.in_dim, hidden)  # made first: the seed's order
    dims = [hidden] * n_layers + [out_dim]
    layers = [make_layer(a, b, p, False) for a, b in zip(dims[:-1], dims[1:])]
    return GNNNet(io, layers, encoder, p["in_feat_dropout"], MLPReadout(out_dim, io.num_classes),
                  p["readout"])


def stack_layer(cls: type[nn.Module], options: Callable[[dict], dict] | None = None,
                output_dropout: bool = True) -> LayerFactory:
    """The factory of a layer class that takes ``(in_dim, out_dim, activation, dropout,
    graph_norm, batch_norm, residual, **options(net_params))``: ReLU, none on the output layer,
    whose dropout is 0 unless ``output_dropout``."""
    def make(in_dim: int, out_dim: int, p: dict, output_layer: bool) -> nn.Module:
        return cls(in_dim, out_dim, activation=None if output_layer else torch.relu,
                   dropout=0.0 if output_layer and not output_dropout else p["dropout"],
                   **post_args(p), **(options(p) if options else {}))

    return make


def post_args(p: dict) -> dict:
    """The shared post-processing's switches from ``net_params``."""
    return {key: p[key] for key in ("graph_norm", "batch_norm", "residual")}

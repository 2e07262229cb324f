"""The net shared by every model that is a stack of graph layers.

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
from nets.components import LayerStack, make_encoder


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


class GNNNet(nn.Module):
    """Encoder, a :class:`LayerStack` built by ``make_layer`` and a prediction head."""

    def __init__(self, io: NetIO, net_params: dict, make_layer: LayerFactory) -> None:
        super().__init__()
        self.io = io
        hidden, out_dim, n_layers = net_params["hidden_dim"], net_params["out_dim"], net_params["L"]
        self.readout = net_params["readout"]
        if io.level == "single_graph":
            dims = [io.in_dim] + [hidden] * n_layers + [io.num_classes]
            self.encoder = None
            self.in_feat_dropout = nn.Identity()
            self.stack = LayerStack(
                [make_layer(a, b, net_params, i == n_layers) for i, (a, b) in
                 enumerate(zip(dims[:-1], dims[1:]))]
            )
            self.head = None
            return
        dims = [hidden] * n_layers + [out_dim]
        self.encoder = make_encoder(io.input_kind, io.in_dim, hidden)
        self.in_feat_dropout = nn.Dropout(net_params["in_feat_dropout"])
        self.stack = LayerStack(
            [make_layer(a, b, net_params, False) for a, b in zip(dims[:-1], dims[1:])]
        )
        self.head = MLPReadout(out_dim, io.num_classes)

    def forward(
        self, g: Graph, h: torch.Tensor, snorm_n: torch.Tensor | None = None
    ) -> torch.Tensor:
        if self.encoder is not None:
            h = self.in_feat_dropout(self.encoder(h))
        h = self.stack(g, h, snorm_n)
        if self.io.level == "graph":
            h = readout(g, h, self.readout)
        return self.head(h) if self.head is not None else h

"""Pieces every net is composed from: input encoders, the layer stack and graph readouts."""

from __future__ import annotations

import dgl
import torch
from torch import nn

from layers.propagation import NormalizedAdjacency


def make_encoder(kind: str, in_dim: int, hidden_dim: int) -> nn.Module:
    """``Embedding`` for integer node features (SBM, ZINC), ``Linear`` for float ones."""
    if kind == "embedding":
        return nn.Embedding(in_dim, hidden_dim)
    if kind == "linear":
        return nn.Linear(in_dim, hidden_dim)
    raise ValueError(f"unknown encoder kind {kind!r}")


def graph_readout(g: dgl.DGLGraph, h: torch.Tensor, how: str = "mean") -> torch.Tensor:
    """One vector per graph of a batch: the mean, sum or max of its node features."""
    with g.local_scope():
        g.ndata["_h"] = h
        return dgl.readout_nodes(g, "_h", op=how)


class LayerStack(nn.Module):
    """Applies graph layers in sequence, computing shared per-batch quantities once.

    A layer whose class sets ``uses_adjacency = True`` receives ``adj=NormalizedAdjacency(g)``,
    built a single time per forward pass instead of once per propagation.
    """

    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self._needs_adj = any(getattr(layer, "uses_adjacency", False) for layer in layers)

    def forward(
        self,
        g: dgl.DGLGraph,
        h: torch.Tensor,
        snorm_n: torch.Tensor | None = None,
        return_all: bool = False,
    ) -> torch.Tensor | list[torch.Tensor]:
        adj = NormalizedAdjacency(g) if self._needs_adj else None
        hidden = [h]
        for layer in self.layers:
            if getattr(layer, "uses_adjacency", False):
                h = layer(g, h, snorm_n, adj=adj)
            else:
                h = layer(g, h, snorm_n)
            hidden.append(h)
        return hidden if return_all else h

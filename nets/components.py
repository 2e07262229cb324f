"""Pieces every net is composed from: input encoders and the layer stack (graph readouts:
:func:`layers.propagation.readout`)."""

from __future__ import annotations

import torch
from torch import nn

from autogcn.graph import Graph


def make_encoder(kind: str, in_dim: int, hidden_dim: int) -> nn.Module:
    """``Embedding`` for integer node features (SBM, ZINC), ``Linear`` for float ones."""
    if kind == "embedding":
        return nn.Embedding(in_dim, hidden_dim)
    if kind == "linear":
        return nn.Linear(in_dim, hidden_dim)
    raise ValueError(f"unknown encoder kind {kind!r}")


class LayerStack(nn.Module):
    """Applies graph layers ``layer(g, h, snorm_n)`` in sequence.

    Per-graph quantities the layers share (normalised adjacency, degrees) are cached on ``g``
    itself, so they are computed once per batch however many layers use them.
    """

    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(
        self,
        g: Graph,
        h: torch.Tensor,
        snorm_n: torch.Tensor | None = None,
        return_all: bool = False,
    ) -> torch.Tensor | list[torch.Tensor]:
        hidden = [h]
        for layer in self.layers:
            h = layer(g, h, snorm_n)
            hidden.append(h)
        return hidden if return_all else h

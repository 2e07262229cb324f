"""The benchmark's prediction head."""

from __future__ import annotations

import torch
from torch import nn


class MLPReadout(nn.Module):
    """``Linear(d, d/2) - ReLU - Linear(d/2, d/4) - ReLU - Linear(d/4, c)`` (integer halving).

    ``num_hidden`` (default 2, the benchmark's) sets how many halving layers precede the output.
    """

    #: Dense throughout: ``params.compile`` compiles it (:mod:`train.compilation`).
    compiled_regions = ("forward",)

    def __init__(self, in_dim: int, out_dim: int, num_hidden: int = 2) -> None:
        super().__init__()
        dims = [in_dim // 2**i for i in range(num_hidden + 1)]
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.out = nn.Linear(dims[-1], out_dim)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        for layer in self.hidden:
            h = torch.relu(layer(h))
        return self.out(h)

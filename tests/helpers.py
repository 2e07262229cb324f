"""Small graph builders shared by the tests."""

from __future__ import annotations

import torch

from data.graph import Graph


def rand_graph(n: int, m: int, seed: int = 0) -> Graph:
    """``m`` distinct directed edges drawn uniformly from the ``n²`` ordered pairs (self-loops
    possible), like ``dgl.rand_graph``; nodes without incoming edges are likely."""
    gen = torch.Generator().manual_seed(seed)
    pairs = torch.randperm(n * n, generator=gen)[:m]
    return Graph(pairs // n, pairs % n, n)

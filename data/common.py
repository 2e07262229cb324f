"""Containers and batching shared by every graph dataset of the project.

Every loader in ``data/`` returns a :class:`GraphDataset`: three :class:`GraphSplit` objects
(a split that is not available is ``None``) plus the sizes a net needs. Conventions:

* node input features live in ``g.ndata['feat']`` (integer ids for SBM/ZINC, floats otherwise),
  edge features in ``g.edata['feat']``;
* each sample's target is a tensor with a leading dimension that concatenates across a batch:
  ``(N_g,)`` node labels for SBM graphs, ``(1,)`` for graph-level targets.

:func:`collate_graphs` batches samples and attaches the graph-size normalisation factors
``snorm_n = 1/sqrt(N_g)`` per node and ``snorm_e = 1/sqrt(E_g)`` per edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import dgl
import torch
from torch.utils.data import Dataset


class DataError(RuntimeError):
    """Data is missing or malformed; the message says what and how to get it."""


class GraphSplit(Dataset):
    """One split of a graph dataset: a list of DGL graphs and their targets."""

    def __init__(self, graphs: Sequence[dgl.DGLGraph], labels: Sequence[torch.Tensor]):
        if len(graphs) != len(labels):
            raise ValueError(f"{len(graphs)} graphs but {len(labels)} labels")
        self.graphs = list(graphs)
        self.labels = list(labels)

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, idx: int) -> tuple[dgl.DGLGraph, torch.Tensor]:
        return self.graphs[idx], self.labels[idx]

    def with_self_loops(self) -> GraphSplit:
        """A copy whose graphs carry one self-loop per node (edge features zero-filled)."""
        graphs = [dgl.add_self_loop(dgl.remove_self_loop(g)) for g in self.graphs]
        return GraphSplit(graphs, self.labels)

    def stats(self) -> dict[str, float]:
        """Graph count and mean nodes / directed edges per graph."""
        n = len(self.graphs)
        if n == 0:
            return {"graphs": 0, "mean_nodes": 0.0, "mean_edges": 0.0}
        nodes = sum(g.num_nodes() for g in self.graphs)
        edges = sum(g.num_edges() for g in self.graphs)
        return {"graphs": n, "mean_nodes": nodes / n, "mean_edges": edges / n}


@dataclass
class GraphDataset:
    """A benchmark dataset: splits plus the input/output sizes the nets are built from.

    ``in_dim`` is the vocabulary size for integer node features (SBM, ZINC) or the feature width
    for float features (superpixels). ``num_classes`` is 1 for regression.
    """

    name: str
    train: GraphSplit
    val: GraphSplit | None
    test: GraphSplit | None
    in_dim: int
    num_classes: int
    num_edge_types: int = 1
    info: dict = field(default_factory=dict)

    def splits(self) -> dict[str, GraphSplit | None]:
        return {"train": self.train, "val": self.val, "test": self.test}

    def with_self_loops(self) -> GraphDataset:
        def add(split: GraphSplit | None) -> GraphSplit | None:
            return split.with_self_loops() if split is not None else None

        return GraphDataset(
            self.name,
            add(self.train),
            add(self.val),
            add(self.test),
            self.in_dim,
            self.num_classes,
            self.num_edge_types,
            dict(self.info),
        )


def graph_size_norms(g: dgl.DGLGraph) -> tuple[torch.Tensor, torch.Tensor]:
    """``snorm_n`` (nodes, 1) and ``snorm_e`` (edges, 1) of a batched graph."""
    n_nodes = g.batch_num_nodes().float()
    n_edges = g.batch_num_edges().float()
    snorm_n = torch.repeat_interleave(n_nodes.clamp(min=1).rsqrt(), g.batch_num_nodes())
    snorm_e = torch.repeat_interleave(n_edges.clamp(min=1).rsqrt(), g.batch_num_edges())
    return snorm_n.unsqueeze(1), snorm_e.unsqueeze(1)


def collate_graphs(
    samples: Sequence[tuple[dgl.DGLGraph, torch.Tensor]],
) -> tuple[dgl.DGLGraph, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Batch ``(graph, target)`` samples into ``(graph, targets, snorm_n, snorm_e)``."""
    graphs, labels = zip(*samples)
    batched = dgl.batch(list(graphs))
    targets = torch.cat([torch.as_tensor(y).reshape(-1) if y.dim() == 0 else y for y in labels])
    snorm_n, snorm_e = graph_size_norms(batched)
    return batched, targets, snorm_n, snorm_e

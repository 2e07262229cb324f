"""The benchmark tasks: which datasets they have, their loss, metrics and model selection."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from train import metrics as M

MetricFn = Callable[[torch.Tensor, torch.Tensor], float]


@dataclass(frozen=True)
class Task:
    """What a task trains on and how it is scored.

    ``level`` is ``"node"`` (a prediction per node of batched graphs), ``"graph"`` (one per
    graph) or ``"single_graph"`` (full-batch node classification on one graph).
    ``input_kind`` tells the net how to embed node features: ``"embedding"`` for integer ids,
    ``"linear"`` for float vectors.
    """

    name: str
    level: str
    datasets: tuple[str, ...]
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    metrics: dict[str, MetricFn]
    primary: str
    higher_is_better: bool
    input_kind: str

    @property
    def default_out_dir(self) -> str:
        return f"out/{self.name}/"

    def is_better(self, value: float, best: float | None) -> bool:
        if best is None:
            return True
        return value > best if self.higher_is_better else value < best


# name, level, datasets, loss, metrics, primary metric, higher is better, input kind
SBM = Task("SBMs_node_classification", "node", ("SBM_CLUSTER", "SBM_PATTERN"),
           M.sbm_weighted_cross_entropy,
           {"acc": M.sbm_accuracy_per_class, "acc_release": M.sbm_accuracy_release}, "acc", True,
           "embedding")
ZINC = Task("molecules_graph_regression", "graph", ("ZINC",), M.l1_loss, {"mae": M.mae}, "mae",
            False, "embedding")
SUPERPIXELS = Task("superpixels_graph_classification", "graph", ("MNIST", "CIFAR10"),
                   F.cross_entropy, {"acc": M.accuracy}, "acc", True, "linear")
NODE = Task("node_classification", "single_graph",
            ("PUBMED", "SQUIRREL", "SQUIRREL_FILTERED", "ARXIV_YEAR", "YELPCHI"), F.cross_entropy,
            {"acc": M.accuracy}, "acc", True, "linear")
TASKS = {t.name: t for t in (SBM, ZINC, SUPERPIXELS, NODE)}


def task_for_dataset(dataset: str) -> Task:
    for task in TASKS.values():
        if dataset in task.datasets:
            return task
    known = sorted(d for t in TASKS.values() for d in t.datasets)
    raise ValueError(f"unknown dataset {dataset!r}; known: {', '.join(known)}")

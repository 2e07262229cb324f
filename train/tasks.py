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
    default_out_dir: str

    def is_better(self, value: float, best: float | None) -> bool:
        if best is None:
            return True
        return value > best if self.higher_is_better else value < best


SBM = Task(
    name="SBMs_node_classification",
    level="node",
    datasets=("SBM_CLUSTER", "SBM_PATTERN"),
    loss=M.sbm_weighted_cross_entropy,
    metrics={"acc": M.sbm_accuracy_per_class, "acc_release": M.sbm_accuracy_release},
    primary="acc",
    higher_is_better=True,
    input_kind="embedding",
    default_out_dir="out/SBMs_node_classification/",
)
ZINC = Task(
    name="molecules_graph_regression",
    level="graph",
    datasets=("ZINC",),
    loss=M.l1_loss,
    metrics={"mae": M.mae},
    primary="mae",
    higher_is_better=False,
    input_kind="embedding",
    default_out_dir="out/molecules_graph_regression/",
)
SUPERPIXELS = Task(
    name="superpixels_graph_classification",
    level="graph",
    datasets=("MNIST", "CIFAR10"),
    loss=F.cross_entropy,
    metrics={"acc": M.accuracy},
    primary="acc",
    higher_is_better=True,
    input_kind="linear",
    default_out_dir="out/superpixels_graph_classification/",
)
NODE = Task(
    name="node_classification",
    level="single_graph",
    datasets=("PUBMED", "SQUIRREL", "SQUIRREL_FILTERED", "ARXIV_YEAR", "YELPCHI"),
    loss=F.cross_entropy,
    metrics={"acc": M.accuracy},
    primary="acc",
    higher_is_better=True,
    input_kind="linear",
    default_out_dir="out/node_classification/",
)
TASKS = {t.name: t for t in (SBM, ZINC, SUPERPIXELS, NODE)}


def task_for_dataset(dataset: str) -> Task:
    for task in TASKS.values():
        if dataset in task.datasets:
            return task
    known = sorted(d for t in TASKS.values() for d in t.datasets)
    raise ValueError(f"unknown dataset {dataset!r}; known: {', '.join(known)}")

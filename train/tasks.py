"""The benchmark tasks: which datasets they have, their loss, metrics and model selection.

Metrics are computed over a whole split (all batches concatenated). The release averaged per-batch
values instead. For per-graph metrics (ZINC MAE, superpixel accuracy) the two differ only through
the smaller last batch; the SBM accuracies are per node and balanced over classes, so they differ
in general (batches differ in node count and class mix).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

MetricFn = Callable[[torch.Tensor, torch.Tensor], float]


def sbm_class_weights(labels: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Per-batch weights ``w_c = (V - n_c) / V`` for classes present, 0 for absent ones."""
    # index_add, not bincount: no host synchronisation on a GPU (bincount sizes its output).
    counts = torch.zeros(num_classes, device=labels.device).index_add_(
        0, labels, torch.ones_like(labels, dtype=torch.float32))
    weights = (labels.numel() - counts) / labels.numel()
    return weights * (counts > 0).float()


def sbm_weighted_cross_entropy(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The SBM loss: cross-entropy weighted against each batch's class imbalance."""
    return F.cross_entropy(scores, labels, weight=sbm_class_weights(labels, scores.shape[1]))


def _per_class_recall(pred: torch.Tensor, labels: torch.Tensor, num_classes: int):
    correct = torch.bincount(labels[pred == labels], minlength=num_classes).float()
    total = torch.bincount(labels, minlength=num_classes).float()
    recall = torch.where(total > 0, correct / total.clamp(min=1), torch.zeros_like(total))
    return recall, correct, total


def sbm_accuracy_per_class(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """Mean per-class recall over the classes present in ``labels`` (balanced accuracy)."""
    recall, _, total = _per_class_recall(scores.argmax(1), labels, scores.shape[1])
    return float(recall[total > 0].mean())


def sbm_accuracy_release(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """The release's SBM accuracy: summed per-class recall divided by the number of classes with
    at least one correct prediction (so a constant predictor scores 100%)."""
    recall, correct, _ = _per_class_recall(scores.argmax(1), labels, scores.shape[1])
    n_hit = int((correct > 0).sum())
    return float(recall.sum() / n_hit) if n_hit else 0.0


def accuracy(scores: torch.Tensor, labels: torch.Tensor) -> float:
    return float((scores.argmax(1) == labels).float().mean())


def mae(scores: torch.Tensor, labels: torch.Tensor) -> float:
    return float((scores.reshape(-1) - labels.reshape(-1)).abs().mean())


def l1_loss(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.l1_loss(scores.reshape(-1), labels.reshape(-1).to(scores.dtype))


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
           sbm_weighted_cross_entropy,
           {"acc": sbm_accuracy_per_class, "acc_release": sbm_accuracy_release}, "acc", True,
           "embedding")
ZINC = Task("molecules_graph_regression", "graph", ("ZINC",), l1_loss, {"mae": mae}, "mae",
            False, "embedding")
SUPERPIXELS = Task("superpixels_graph_classification", "graph", ("MNIST", "CIFAR10"),
                   F.cross_entropy, {"acc": accuracy}, "acc", True, "linear")
NODE = Task("node_classification", "single_graph",
            ("PUBMED", "SQUIRREL", "SQUIRREL_FILTERED", "ARXIV_YEAR", "YELPCHI"), F.cross_entropy,
            {"acc": accuracy}, "acc", True, "linear")
TASKS = {t.name: t for t in (SBM, ZINC, SUPERPIXELS, NODE)}


def task_for_dataset(dataset: str) -> Task:
    for task in TASKS.values():
        if dataset in task.datasets:
            return task
    known = sorted(d for t in TASKS.values() for d in t.datasets)
    raise ValueError(f"unknown dataset {dataset!r}; known: {', '.join(known)}")

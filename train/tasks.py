"""The benchmark tasks: their datasets, loss, metrics and model selection (which epoch's weights
a run keeps and when it stops early: :class:`EarlyStopping`). Metrics are computed over a whole
split, not averaged over batches as in the release (docs/deviations.md).
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
    """What a task trains on and how it is scored. ``level``: ``"node"`` (a prediction per node
    of batched graphs), ``"graph"`` (one per graph) or ``"single_graph"`` (full-batch, one
    graph); ``input_kind``: ``"embedding"`` (integer node features) or ``"linear"`` (floats);
    ``self_loop_models``: the models that ``net_params.self_loop`` gives self-loops on this task.
    Each of the release's main scripts keeps its own list, and they differ: SGC has them on the
    SBM and single-graph tasks, but not on ZINC or superpixels (docs/deviations.md)."""

    name: str
    level: str
    datasets: tuple[str, ...]
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    metrics: dict[str, MetricFn]
    primary: str
    higher_is_better: bool
    input_kind: str
    self_loop_models: tuple[str, ...]

    def adds_self_loops(self, model: str, net_params: dict) -> bool:
        return model in self.self_loop_models and bool(net_params.get("self_loop", False))

    def is_better(self, value: float, best: float | None) -> bool:
        return best is None or (value > best if self.higher_is_better else value < best)


# name, level, datasets, loss, metrics, primary metric, higher is better, input kind,
# self-loop models
SBM = Task("SBMs_node_classification", "node", ("SBM_CLUSTER", "SBM_PATTERN"),
           sbm_weighted_cross_entropy,
           {"acc": sbm_accuracy_per_class, "acc_release": sbm_accuracy_release}, "acc", True,
           "embedding", ("GCN", "GAT", "SGC"))
ZINC = Task("molecules_graph_regression", "graph", ("ZINC",), l1_loss, {"mae": mae}, "mae",
            False, "embedding", ("GCN", "GAT"))
SUPERPIXELS = Task("superpixels_graph_classification", "graph", ("MNIST", "CIFAR10"),
                   F.cross_entropy, {"acc": accuracy}, "acc", True, "linear", ("GCN", "GAT"))
NODE = Task("node_classification", "single_graph",
            ("PUBMED", "SQUIRREL", "SQUIRREL_FILTERED", "ARXIV_YEAR", "YELPCHI"), F.cross_entropy,
            {"acc": accuracy}, "acc", True, "linear", ("GCN", "GAT", "SGC"))
TASKS = {t.name: t for t in (SBM, ZINC, SUPERPIXELS, NODE)}


def task_for_dataset(dataset: str) -> Task:
    for task in TASKS.values():
        if dataset in task.datasets:
            return task
    known = sorted(d for t in TASKS.values() for d in t.datasets)
    raise ValueError(f"unknown dataset {dataset!r}; known: {', '.join(known)}")


# ------------------------------------------------------------------ model selection
# Which epoch's weights a run keeps, and when it stops early (``params.early_stop``).
#
# Four rules, one per protocol:
#
# * ``none`` (the release's, the default): keep the epoch with the best validation metric (the
#   task's primary metric; a tie keeps the earlier epoch); never stop early (the run ends at
#   ``min_lr``, ``max_time`` or ``epochs``).
# * ``val_loss_window`` (GPR-GNN, BernNet, ChebNetII; their ``RunExp`` loops): keep the epoch with
#   the lowest validation loss (strictly lower replaces it); at epoch ``e`` (counted from 0), once
#   ``e > patience``, stop as soon as this epoch's validation loss exceeds the mean of the
#   ``patience`` validation losses before it.
# * ``val_metric_patience`` (JacobiConv's ``RealWorld.py``): keep the last epoch whose validation
#   metric is at least as good as the best so far (ties count, so a later equal epoch wins);
#   every other epoch adds one to a counter that such an epoch resets; stop when the counter
#   exceeds ``patience``. The official code uses accuracy; here it is the task's primary metric.
# * ``val_metric_strict`` (OptBasisGNN's ``utils/stopper.py``): keep the first epoch with the best
#   validation metric (only a strictly better epoch replaces it, and resets the counter; a tie
#   counts as an epoch without improvement); stop once the counter reaches ``patience``.
#
# In every rule the epoch that triggers the stop has been evaluated, and may itself be kept.
EARLY_STOP_RULES = ("none", "val_loss_window", "val_metric_patience", "val_metric_strict")


class EarlyStopping:
    """Fed one epoch at a time (:meth:`update`), it says whether to keep the epoch's weights and
    whether to stop after it; ``is_better(new, best)`` compares the primary metric (``best``
    ``None``: nothing kept yet)."""

    def __init__(self, rule: str, patience: int,
                 is_better: Callable[[float, float | None], bool]) -> None:
        self.rule, self.patience, self.is_better = rule, int(patience), is_better
        self.best_metric: float | None = None
        self.best_loss = float("inf")
        self.losses: list[float] = []
        self.bad_epochs = 0

    def update(self, loss: float | None, metric: float | None) -> tuple[bool, bool]:
        """``(keep, stop)`` for an epoch with validation ``loss`` and primary ``metric``
        (``None`` for both where there is no validation split: every epoch is kept, and
        nothing stops early)."""
        if loss is None or metric is None:
            return True, False
        if self.rule == "val_loss_window":  # the lowest loss kept; stop above the window's mean
            keep = loss < self.best_loss
            if keep:
                self.best_loss = loss
            window = self.losses[-self.patience:]  # the losses before this epoch's
            stop = len(self.losses) > self.patience and loss > sum(window) / len(window)
            self.losses.append(loss)
            return keep, stop
        if self.rule == "val_metric_patience":  # a tie is kept
            keep = self.best_metric is None or not self.is_better(self.best_metric, metric)
        else:
            keep = self.is_better(metric, self.best_metric)
        if keep:
            self.best_metric = metric
        if self.rule == "none":
            return keep, False
        self.bad_epochs = 0 if keep else self.bad_epochs + 1
        return keep, self.bad_epochs >= self.patience + (self.rule == "val_metric_patience")

    def state_dict(self) -> dict:
        """What :meth:`update` has accumulated (a resumed run continues from it)."""
        return {"best_metric": self.best_metric, "best_loss": self.best_loss,
                "losses": list(self.losses), "bad_epochs": self.bad_epochs}

    def load_state_dict(self, state: dict) -> None:
        self.best_metric, self.best_loss = state["best_metric"], state["best_loss"]
        self.losses, self.bad_epochs = list(state["losses"]), int(state["bad_epochs"])

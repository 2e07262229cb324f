"""Losses and metrics of the benchmark tasks.

Metrics are computed over a whole split (all batches concatenated). The release averaged per-batch
values instead. For per-graph metrics (ZINC MAE, superpixel accuracy) the two differ only through
the smaller last batch; the SBM accuracies are per node and balanced over classes, so they differ
in general (batches differ in node count and class mix).
"""

from __future__ import annotations

import torch
from torch.nn import functional as F


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

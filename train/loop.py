"""Epoch loops: mini-batches of graphs (SBM, ZINC, superpixels) and one graph full-batch, with
the same calls: ``train_epoch`` and ``evaluate_splits`` return ``(loss, metrics)`` per split
(``None`` for a split the data lacks); ``close()`` ends loader workers. Between batches they
call :func:`train.interrupts.check`. GPU feeding: docs/performance.md.
"""

from __future__ import annotations

import random

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

from data.common import GraphDataset, collate_graphs
from train.interrupts import check, ignore_in_worker
from train.tasks import Task


def _auxiliary_loss(model: nn.Module) -> torch.Tensor | float:
    """A model may add a term to the task loss (e.g. APGCN's propagation penalty)."""
    aux = getattr(model, "auxiliary_loss", None)
    return aux() if callable(aux) else 0.0


def _metrics(task: Task, scores: torch.Tensor, labels: torch.Tensor) -> dict[str, float]:
    return {name: fn(scores, labels) for name, fn in task.metrics.items()}


def init_worker(worker_id: int) -> None:
    """A ``worker_init_fn``: signals ignored, ``random`` and numpy seeded from torch's seed."""
    ignore_in_worker(worker_id)
    seed = torch.initial_seed() % 2**32  # numpy's legacy seeding takes 32 bits
    random.seed(seed)
    np.random.seed(seed)


class GraphBatches:
    """Mini-batches of a :class:`GraphDataset`, shuffled and seeded by ``generator``."""

    def __init__(self, dataset: GraphDataset, task: Task, batch_size: int,
                 device: torch.device, generator: torch.Generator | None = None,
                 workers: int = 0) -> None:
        self.task, self.device, self.generator = task, device, generator
        self.non_blocking = device.type == "cuda"
        self.loaders = {
            name: DataLoader(split, batch_size=batch_size, shuffle=(name == "train"),
                             collate_fn=collate_graphs, generator=generator,
                             num_workers=workers, persistent_workers=workers > 0,
                             pin_memory=self.non_blocking,
                             worker_init_fn=init_worker if workers else None)
            for name, split in dataset.splits().items() if split is not None and len(split)
        }

    @property
    def steps_per_epoch(self) -> int:
        """Optimiser steps per training epoch (batches)."""
        return len(self.loaders["train"]) if "train" in self.loaders else 0

    def start_workers(self) -> None:
        """Start the workers (drawing their seed from ``generator``) before it is restored."""
        for loader in self.loaders.values():
            if loader.persistent_workers and loader._iterator is None:
                loader._iterator = loader._get_iterator()

    def _forward(self, model: nn.Module, batch) -> tuple[torch.Tensor, torch.Tensor]:
        g, labels, snorm_n = batch
        g = g.to(self.device, non_blocking=self.non_blocking)
        snorm_n = snorm_n.to(self.device, non_blocking=self.non_blocking)
        scores = model(g, g.ndata["feat"], snorm_n)
        return scores, labels.to(self.device, non_blocking=self.non_blocking)

    def _over_batches(self, split: str, step) -> tuple[float, dict[str, float]]:
        """``step(batch)`` -> (loss, scores, labels) over ``split``; its mean loss and metrics."""
        total = torch.zeros((), device=self.device)
        all_scores, all_labels = [], []
        for batch in self.loaders[split]:
            check()
            loss, scores, labels = step(batch)
            total += loss
            all_scores.append(scores)
            all_labels.append(labels)
        # the epoch's one read-back: the loss sum and the metrics of all its predictions
        metrics = _metrics(self.task, torch.cat(all_scores), torch.cat(all_labels))
        return float(total) / len(all_scores), metrics

    def train_epoch(self, model: nn.Module,
                    optimizer: torch.optim.Optimizer) -> tuple[float, dict[str, float]]:
        model.train()
        return self._over_batches("train", lambda batch: self.train_step(model, optimizer, batch))

    def train_step(self, model: nn.Module, optimizer: torch.optim.Optimizer,
                   batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One optimiser step: loss, scores and labels, left on the device (no GPU sync)."""
        optimizer.zero_grad()
        scores, labels = self._forward(model, batch)
        loss = self.task.loss(scores, labels) + _auxiliary_loss(model)
        loss.backward()
        optimizer.step()
        return loss.detach(), scores.detach(), labels

    @torch.no_grad()
    def evaluate(self, model: nn.Module, split: str) -> tuple[float, dict[str, float]] | None:
        if split not in self.loaders:
            return None
        model.eval()

        def step(batch):
            scores, labels = self._forward(model, batch)
            return self.task.loss(scores, labels), scores, labels

        return self._over_batches(split, step)

    def evaluate_splits(self, model: nn.Module, splits: list[str]) -> dict:
        return {split: self.evaluate(model, split) for split in splits}

    def close(self) -> None:
        """End the worker processes of every loader (persistent ones outlive an epoch)."""
        for loader in self.loaders.values():
            iterator = getattr(loader, "_iterator", None)  # torch keeps persistent workers here
            if iterator is not None and hasattr(iterator, "_shutdown_workers"):
                iterator._shutdown_workers()
            loader._iterator = None


class FullGraph:
    """Full-batch training on one graph with index splits (single-graph node classification)."""

    def __init__(self, graph, features: torch.Tensor, labels: torch.Tensor,
                 splits: dict[str, torch.Tensor], task: Task, device: torch.device) -> None:
        self.task, self.device = task, device
        self.graph = graph.build_structure().to(device)
        self.features = features.to(device)
        self.labels = labels.to(device)
        self.splits = {k: v.to(device) for k, v in splits.items() if v is not None and len(v)}

    steps_per_epoch = 1  # full batch: one optimiser step per epoch
    generator = None  # nothing is shuffled: a run's randomness is torch's global generator

    def start_workers(self) -> None:
        """Nothing to start (see :meth:`GraphBatches.start_workers`)."""

    def train_epoch(self, model: nn.Module,
                    optimizer: torch.optim.Optimizer) -> tuple[float, dict[str, float]]:
        model.train()
        optimizer.zero_grad()
        idx = self.splits["train"]
        scores = model(self.graph, self.features)[idx]
        loss = self.task.loss(scores, self.labels[idx]) + _auxiliary_loss(model)
        loss.backward()
        optimizer.step()
        return float(loss.detach()), _metrics(self.task, scores.detach(), self.labels[idx])

    def close(self) -> None:
        """Nothing to end: one graph needs no loader processes."""

    @torch.no_grad()
    def evaluate_splits(self, model: nn.Module, splits: list[str]) -> dict:
        """One forward pass scores every split (they are node sets of the same graph)."""
        model.eval()
        scores = model(self.graph, self.features)

        def result(idx: torch.Tensor) -> tuple[float, dict[str, float]]:
            s, y = scores[idx], self.labels[idx]
            return float(self.task.loss(s, y)), _metrics(self.task, s, y)

        return {split: result(self.splits[split]) if split in self.splits else None
                for split in splits}

"""Which epoch's weights a run keeps, and when it stops early (``params.early_stop``).

Four rules, one per protocol:

* ``none`` (the release's, the default): keep the epoch with the best validation metric (the
  task's primary metric; a tie keeps the earlier epoch); never stop early (the run ends at
  ``min_lr``, ``max_time`` or ``epochs``).
* ``val_loss_window`` (GPR-GNN, BernNet, ChebNetII; their ``RunExp`` loops): keep the epoch with
  the lowest validation loss (strictly lower replaces it); at epoch ``e`` (counted from 0), once
  ``e > patience``, stop as soon as this epoch's validation loss exceeds the mean of the
  ``patience`` validation losses before it.
* ``val_metric_patience`` (JacobiConv's ``RealWorld.py``): keep the last epoch whose validation
  metric is at least as good as the best so far (ties count, so a later equal epoch wins);
  every other epoch adds one to a counter that such an epoch resets; stop when the counter
  exceeds ``patience``. The official code uses accuracy; here it is the task's primary metric.
* ``val_metric_strict`` (OptBasisGNN's ``utils/stopper.py``): keep the first epoch with the best
  validation metric (only a strictly better epoch replaces it, and resets the counter; a tie
  counts as an epoch without improvement); stop once the counter reaches ``patience``.

In every rule the epoch that triggers the stop has been evaluated, and may itself be kept.
"""

from __future__ import annotations

from collections.abc import Callable

EARLY_STOP_RULES = ("none", "val_loss_window", "val_metric_patience", "val_metric_strict")


class EarlyStopping:
    """Feed it one epoch at a time (:meth:`update`); it says whether to keep the epoch's weights
    and whether to stop after it.

    ``is_better(new, best)``: the task's comparison of its primary metric (``best`` may be
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
        if self.rule == "val_loss_window":
            return self._loss_window(loss)
        if self.rule == "val_metric_patience":
            return self._metric_patience(metric)
        if self.rule == "val_metric_strict":
            return self._metric_strict(metric)
        keep = self.is_better(metric, self.best_metric)
        if keep:
            self.best_metric = metric
        return keep, False

    def _loss_window(self, loss: float) -> tuple[bool, bool]:
        keep = loss < self.best_loss
        if keep:
            self.best_loss = loss
        epoch = len(self.losses)
        self.losses.append(loss)
        stop = False
        if epoch > self.patience:
            window = self.losses[-(self.patience + 1):-1]
            stop = loss > sum(window) / len(window)
        return keep, stop

    def _metric_patience(self, metric: float) -> tuple[bool, bool]:
        keep = self.best_metric is None or not self.is_better(self.best_metric, metric)
        if keep:
            self.best_metric, self.bad_epochs = metric, 0
        else:
            self.bad_epochs += 1
        return keep, self.bad_epochs > self.patience

    def _metric_strict(self, metric: float) -> tuple[bool, bool]:
        keep = self.is_better(metric, self.best_metric)
        if keep:
            self.best_metric, self.bad_epochs = metric, 0
        else:
            self.bad_epochs += 1
        return keep, self.bad_epochs >= self.patience

    def state_dict(self) -> dict:
        """What :meth:`update` has accumulated (a resumed run continues from it)."""
        return {"best_metric": self.best_metric, "best_loss": self.best_loss,
                "losses": list(self.losses), "bad_epochs": self.bad_epochs}

    def load_state_dict(self, state: dict) -> None:
        self.best_metric, self.best_loss = state["best_metric"], state["best_loss"]
        self.losses, self.bad_epochs = list(state["losses"]), int(state["bad_epochs"])

"""Continuing a run folder (``--resume RUN_DIR``, docs/reproducing.md): what must match
(the config but :data:`FREE_KEYS`, the seeds, the data's fingerprint, an intact state file of
this format) and where to pick up. A ``complete`` run is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn

from train.checkpoint import STATE_FILE, ResumeError, load_state, rng_state, set_rng_state
from train.results import refresh_status
from train.stopping import EarlyStopping

#: Config keys that may differ between a run and its continuation: where files are, which
#: device, how many processes collate or build data. Nothing else changes a result.
FREE_KEYS = ("out_dir", "gpu", "data.data_dir", "data.cache_dir", "data.workers",
             "data.loader_workers")
#: Graphs of each split whose features and edges enter the data hash (with every graph's
#: size and label): enough to tell another dataset or another preprocessing, cheap on 60k graphs.
HASHED_GRAPHS = 32


def comparable(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` without :data:`FREE_KEYS`."""
    out = json.loads(json.dumps(cfg))  # a deep copy of plain values
    for key in FREE_KEYS:
        section, _, name = key.rpartition(".")
        holder = out.get(section, {}) if section else out
        holder.pop(name, None)
    return out


def config_difference(run_cfg: dict[str, Any], cfg: dict[str, Any]) -> str | None:
    """The first key whose value differs (``"params.lr ..."``), or ``None``."""
    def flat(d: dict, prefix: str = "") -> dict[str, Any]:
        out = {}
        for key, value in d.items():
            if isinstance(value, dict):
                out.update(flat(value, f"{prefix}{key}."))
            else:
                out[f"{prefix}{key}"] = value
        return out

    a, b = flat(comparable(run_cfg)), flat(comparable(cfg))
    for key in sorted(set(a) | set(b)):
        if a.get(key, "(unset)") != b.get(key, "(unset)"):
            return f"{key} is {a.get(key, '(unset)')!r} in the run, {b.get(key, '(unset)')!r} now"
    return None


def _dense_parts(t: torch.Tensor) -> list[torch.Tensor]:
    """A sparse tensor (features of some node datasets) as its indices and values."""
    if t.layout == torch.strided:
        return [t]
    t = t.to_sparse_coo().coalesce()
    return [t.indices(), t.values()]


def _hash(parts: Iterable[torch.Tensor]) -> str:
    digest = hashlib.sha256()
    for t in (piece for part in parts for piece in _dense_parts(part)):
        t = t.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{t.dtype}{t.numel()};".encode())
        digest.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()[:16]


def graph_data_fingerprint(splits: dict[str, Any]) -> dict[str, Any]:
    """Per split: graphs, nodes and edges, and a hash of every graph's size and label plus the
    features and edges of the first and last :data:`HASHED_GRAPHS` graphs."""
    out: dict[str, Any] = {}
    for name, split in splits.items():
        if split is None:
            continue
        graphs = split.graphs
        nodes = torch.tensor([g.num_nodes() for g in graphs], dtype=torch.int64)
        edges = torch.tensor([g.num_edges() for g in graphs], dtype=torch.int64)
        labels = [torch.as_tensor(y).reshape(-1) for y in split.labels]
        sample = graphs[:HASHED_GRAPHS] + graphs[max(HASHED_GRAPHS, len(graphs) - HASHED_GRAPHS):]
        parts = [nodes, edges, *labels]
        for g in sample:
            parts += [g.src, g.dst, *(g.ndata[k] for k in sorted(g.ndata))]
        out[name] = {"graphs": len(graphs), "nodes": int(nodes.sum()),
                     "edges": int(edges.sum()), "sha256": _hash(parts)}
    return out


def node_data_fingerprint(graph, features: torch.Tensor, labels: torch.Tensor) -> dict[str, Any]:
    """Nodes, edges, feature width and a hash of the edges, features and labels."""
    return {"nodes": graph.num_nodes(), "edges": graph.num_edges(),
            "features": int(features.shape[1]),
            "sha256": _hash([graph.src, graph.dst, features, labels])}


@dataclass
class ResumePoint:
    """Where a run folder continues: its record so far and the saved state of its unfinished
    seed (``None``: that seed starts from its first epoch)."""

    run_dir: Path
    record: dict[str, Any]
    state: dict[str, Any] | None

    @property
    def complete(self) -> bool:
        return self.record.get("status") == "complete"

    @property
    def finished_runs(self) -> int:
        return len(self.record.get("runs", []))


def run_config(run_dir: str | os.PathLike) -> Path:
    """The config file of the run folder ``run_dir`` (:class:`ResumeError` if it is none)."""
    run_dir = Path(run_dir)
    for name in ("results.json", "config.json"):
        if not (run_dir / name).is_file():
            raise ResumeError(f"--resume {run_dir}: no {name} there (not a run folder)")
    return run_dir / "config.json"


def open_run(run_dir: str | os.PathLike, cfg: dict[str, Any], seeds: list[int] | None,
             fingerprint: dict[str, Any]) -> ResumePoint:
    """The :class:`ResumePoint` of ``run_dir`` for a run of ``cfg`` with ``seeds`` (``None``:
    the run's own) on data of ``fingerprint``; :class:`ResumeError` (one line) where it cannot
    be continued."""
    run_dir = Path(run_dir)
    path = run_config(run_dir).with_name("results.json")
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ResumeError(f"--resume {run_dir}: results.json is unreadable "
                          f"({type(err).__name__})") from None
    if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
        raise ResumeError(f"--resume {run_dir}: results.json is not a run record of this "
                          "project")
    record = refresh_status(path, record)  # a dead "running" process becomes "killed"
    point = ResumePoint(run_dir, record, None)
    if point.complete:
        return point
    if record.get("status") == "running":
        raise ResumeError(f"--resume {run_dir}: the run is still going (process "
                          f"{record.get('pid')} on {record.get('host')})")
    what = config_difference(record["config"], cfg)
    if what:
        raise ResumeError(f"--resume {run_dir}: another config ({what}); resume with the "
                          "run's own config, or --restart")
    if not isinstance(record.get("seeds"), list) or seeds not in (None, record["seeds"]):
        raise ResumeError(f"--resume {run_dir}: other seeds ({record.get('seeds')} in the run, "
                          f"{seeds} now)")
    recorded = (record.get("data") or {}).get("fingerprint")
    if recorded != fingerprint:
        raise ResumeError(f"--resume {run_dir}: other data than the run's (sizes or contents "
                          "differ); resume on the run's data, or --restart")
    state_path = run_dir / STATE_FILE
    if state_path.exists():
        state = load_state(state_path)
        if state.get("fingerprint") != fingerprint or \
                config_difference(state.get("config", {}), cfg):
            raise ResumeError(f"--resume {run_dir}: its state file belongs to another "
                              "config or other data")
        if state["run"] == point.finished_runs:  # an older seed's state is of no use
            point.state = state
    return point


@dataclass
class Progress:
    """How far one seed's training has got: what the epoch loop carries from epoch to epoch
    besides the modules (``epoch``: the last one finished, -1 before the first)."""

    epoch: int = -1
    best_epoch: int = -1
    best_state: dict[str, torch.Tensor] | None = None
    epoch_times: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0
    stop_reason: str | None = None  # set once the run has decided to stop (early stop, min_lr)
    scalars: list[dict[str, float]] = field(default_factory=list)  # tensorboard's, per epoch


def run_state(index: int, seed: int, cfg: dict[str, Any], fingerprint: dict[str, Any],
              progress: Progress, model: nn.Module, optimizer: torch.optim.Optimizer,
              scheduler: Any, stopping: EarlyStopping,
              generator: torch.Generator | None) -> dict[str, Any]:
    """The state of seed ``index`` after ``progress.epoch`` (for :func:`save_state`), taken
    after all that epoch draws at random."""
    return {
        "run": index, "seed": seed, "config": cfg, "fingerprint": fingerprint, **vars(progress),
        "model": model.state_dict(), "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "stopping": stopping.state_dict(), "rng": rng_state(generator),
    }


def restore_run(state: dict[str, Any], model: nn.Module, optimizer: torch.optim.Optimizer,
                scheduler: Any, stopping: EarlyStopping, loop: Any) -> Progress:
    """Put the saved ``state`` into freshly built modules and ``loop`` (its workers started
    first, see :meth:`~train.loop.GraphBatches.start_workers`); the random states last."""
    device = next(model.parameters()).device
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(state["scheduler"])
    stopping.load_state_dict(state["stopping"])
    loop.start_workers()
    set_rng_state(state["rng"], loop.generator)
    progress = Progress(**{f.name: state[f.name] for f in fields(Progress)})
    if progress.best_state is not None:
        progress.best_state = {k: v.to(device) for k, v in progress.best_state.items()}
    return progress

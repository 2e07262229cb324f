"""Run folders and result files that never overwrite an earlier run.

Each experiment gets ``<out_dir>/<MODEL>_<DATASET>_<timestamp>[_<n>]`` (its files and statuses:
docs/reproducing.md). Every file is written by :func:`write_atomic` (:mod:`data.files`): a
failed write leaves the previous version and raises :class:`WriteError` naming the folder.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import numpy as np

from data import files
from data.files import output_problem, write_error
from train.errors import OutputError

# What a full disk under a run folder tells the user to do (data.files.write_error).
OUT_DIR_REMEDY = "free some space there or give another --out_dir"


def check_out_dir(out_dir: str | os.PathLike) -> Path:
    """:class:`OutputError` unless run folders can be created in ``out_dir`` (nothing is
    written: the check looks at the nearest existing folder on the way)."""
    problem = output_problem(out_dir, "folder")
    if problem:
        raise OutputError(f"out_dir: {problem}; give another --out_dir")
    return Path(out_dir)


def make_run_dir(out_dir: str | os.PathLike, model: str, dataset: str) -> Path:
    """Create a fresh, uniquely named folder for one experiment in ``out_dir`` (checked
    before: :func:`check_out_dir`)."""
    base = path = Path(out_dir)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    try:
        base.mkdir(parents=True, exist_ok=True)
        for n in range(1000):
            path = base / (f"{model}_{dataset}_{stamp}" + (f"_{n}" if n else ""))
            try:
                path.mkdir()  # atomic: fails if another process created it first
            except FileExistsError:
                continue
            (path / "logs").mkdir()
            (path / "checkpoints").mkdir()
            return path
    except OSError as err:
        raise write_error(err, path, OUT_DIR_REMEDY) from None
    raise OutputError(f"could not create a unique run folder under {base}")


def write_atomic(path: str | os.PathLike, content: str | bytes) -> None:
    """:func:`data.files.write_atomic` of a run folder's file: a full disk names the folder and
    ``--out_dir``."""
    files.write_atomic(path, content, OUT_DIR_REMEDY)


def _mean_std(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "std": float(arr.std(ddof=0)), "n": int(arr.size)}


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean and std (ddof 0, as the release) of every final metric over runs."""
    summary: dict[str, Any] = {}
    if not runs:
        return summary
    for split in ("train", "val", "test"):
        metrics = [r["final"].get(split) for r in runs]
        if any(m is None for m in metrics):
            continue
        summary[split] = {k: _mean_std([m[k] for m in metrics]) for k in metrics[0]}
    for key in ("s_per_epoch", "epochs", "total_time_s"):
        summary[key] = _mean_std([r[key] for r in runs])
    return summary


class ExperimentRecord:
    """Accumulates per-run results and keeps the files in ``run_dir`` up to date."""

    def __init__(self, run_dir: Path, header: dict[str, Any]) -> None:
        """``header``: the record besides its runs (a resumed run's: its runs too)."""
        self.run_dir = run_dir
        self.data: dict[str, Any] = {"status": "running", **header}  # status on the first line
        self.data.update(status="running", pid=os.getpid(), host=socket.gethostname())
        self.data.setdefault("runs", [])
        self.data.setdefault("summary", {})
        self.save()

    def heartbeat(self) -> None:
        """Record that the experiment is alive (after every epoch)."""
        self.data["updated"] = time.strftime("%Y-%m-%d %H:%M:%S")
        write_atomic(self.run_dir / "results.json", _dump(self.data))

    def add_run(self, run: dict[str, Any]) -> None:
        self.data["runs"].append(run)
        self.data["summary"] = summarise(self.data["runs"])
        self.save()

    def finish(self, status: str, error: str | None = None) -> None:
        """Record how the experiment ended. Where the disk is full, ``results.json`` keeps its
        last whole version (``running``), which readers report as killed once the process is
        gone (:func:`refresh_status`)."""
        self.data["status"] = status
        self.data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        if error:
            self.data["error"] = error
        self.save()

    def save(self) -> None:
        write_atomic(self.run_dir / "results.json", _dump(self.data))
        write_atomic(self.run_dir / "results.txt", format_text(self.data))


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, default=str)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        pass
    return True


def refresh_status(path: str | os.PathLike, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (the contents of ``path``, a ``results.json``) with a ``running`` experiment
    whose process is gone from this machine marked ``killed``, in the file too. A file
    :func:`format_text` cannot describe raises before either file is written."""
    pid = data.get("pid")
    if data.get("status") != "running" or data.get("host") != socket.gethostname() or \
            not isinstance(pid, int) or _alive(pid):
        return data
    data = {**data, "status": "killed",
            "error": f"process {pid} ended without recording a status: it was killed, or "
                     "its last write failed (a full disk?)"}
    texts = (_dump(data), format_text(data))
    try:
        write_atomic(path, texts[0])
        write_atomic(Path(path).with_name("results.txt"), texts[1])
    except OSError:
        pass  # a read-only results folder: report the status without recording it
    return data


def format_text(data: dict[str, Any]) -> str:
    """The human-readable results file."""
    lines = [
        f"Model: {data.get('model')}   Dataset: {data.get('dataset')}   Status: {data['status']}",
        f"Parameters: {data.get('num_params')}   Device: {data.get('device')}",
        f"Seeds: {data.get('seeds')}",
        "",
    ]
    for i, run in enumerate(data["runs"]):
        final = "  ".join(
            f"{split} " + ", ".join(f"{k}={v:.4f}" for k, v in m.items())
            for split, m in run["final"].items() if m
        )
        lines.append(
            f"run {i} seed {run['seed']}: epochs {run['epochs']} (best {run['best_epoch']}), "
            f"{run['s_per_epoch']:.2f} s/epoch, stop: {run['stop_reason']}  |  {final}"
        )
    summary = data.get("summary") or {}
    if summary:
        lines.append("")
        for split in ("test", "val", "train"):
            for k, v in summary.get(split, {}).items():
                lines.append(f"{split} {k}: {v['mean']:.4f} ± {v['std']:.4f} (n={v['n']})")
        lines.append(f"s/epoch: {summary['s_per_epoch']['mean']:.2f}")
    lines += ["", "Config:", json.dumps(data.get("config"), indent=2)]
    return "\n".join(lines) + "\n"

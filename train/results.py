"""Run folders and result files that never overwrite an earlier run.

Each experiment gets its own folder ``<out_dir>/<MODEL>_<DATASET>_<timestamp>[_<n>]`` holding
``config.json``, ``results.json`` (machine-readable), ``results.txt`` (human-readable),
``train.log``, ``logs/`` (tensorboard) and ``checkpoints/``. Result files are rewritten
atomically after every finished run (and ``results.json`` after every epoch, as a heartbeat), so
a crash or an interrupt leaves the runs done so far readable, with ``status`` saying how the
experiment ended: ``running``, ``complete``, ``interrupted`` (Ctrl-C, SIGTERM), ``diverged`` (a
non-finite loss), ``failed`` (an error) or ``killed`` (the process died without saying so —
SIGKILL, a node failure — detected later by :func:`refresh_status`).

Every file is written by :func:`write_atomic` (the project's one atomic write,
:mod:`data.files`): a failed write (a full disk) leaves the previous version in place, removes
its temporary file and raises :class:`WriteError`, one line naming the folder.
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
from data.files import FULL_DISK, write_error
from data.files import WriteError as WriteError  # what the runner and the tools catch
from train.cli import link_problem


class OutputError(ValueError):
    """The output folder cannot be written; the message names it and says why."""


# What a full disk under a run folder tells the user to do (data.files.write_error).
OUT_DIR_REMEDY = "free some space there or give another --out_dir"


def check_out_dir(out_dir: str | os.PathLike) -> Path:
    """:class:`OutputError` unless run folders can be created in ``out_dir`` (nothing is
    written: the check looks at the nearest existing folder on the way)."""
    base = Path(out_dir)
    link = link_problem(base)
    if link:  # a loop or a dangling link: mkdir would only say "File exists"
        where = "out_dir " if link.startswith(f"{base} ") else f"out_dir {base}: "
        raise OutputError(f"{where}{link}; remove or fix the link, or give another --out_dir")
    existing = base
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = f"out_dir {base}" if existing == base else f"out_dir {base}: {existing}"
        raise OutputError(f"{where} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == base else f" (its folder {existing} is not writable)"
        raise OutputError(f"out_dir {base} is not writable{where}")
    return base


def make_run_dir(out_dir: str | os.PathLike, model: str, dataset: str) -> Path:
    """Create a fresh, uniquely named folder for one experiment."""
    base = check_out_dir(out_dir)
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputError(f"cannot create out_dir {base}: {err.strerror or err}") from None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        path = base / (f"{model}_{dataset}_{stamp}" + (f"_{n}" if n else ""))
        try:
            path.mkdir()  # atomic: fails if another process created it first
        except FileExistsError:
            continue
        except OSError as err:
            if err.errno in FULL_DISK:
                raise write_error(err, path, OUT_DIR_REMEDY) from None
            raise OutputError(f"cannot create a run folder in {base}: "
                              f"{err.strerror or err}") from None
        try:
            (path / "logs").mkdir()
            (path / "checkpoints").mkdir()
        except OSError as err:
            raise write_error(err, path, OUT_DIR_REMEDY) from None
        return path
    raise RuntimeError(f"could not create a unique run folder under {base}")


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
        self.run_dir = run_dir
        self.data: dict[str, Any] = {"status": "running", "pid": os.getpid(),
                                     "host": socket.gethostname(), **header, "runs": [],
                                     "summary": {}}
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
        """Record how the experiment ended. When the files cannot be written (a full disk) the
        status still reaches ``results.json`` if at all possible (:meth:`_save_status`), then the
        write error is raised as usual."""
        self._set_status(status, error)
        try:
            self.save()
        except OSError as err:
            if status == "complete":  # the command now exits with this error: the run failed
                self._set_status("failed", " ".join(str(err).split()))
            self._save_status()
            raise

    def _set_status(self, status: str, error: str | None) -> None:
        self.data["status"] = status
        self.data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        if error:
            self.data["error"] = error

    def _save_status(self) -> None:
        """After a failed :meth:`save`: ``results.json`` alone, compact (the runs included), and
        where even that does not fit, a failure's ``failed`` written over ``running`` in place
        (:func:`_patch_status`). Else the file keeps its last whole version and readers say that
        its end went unrecorded (:func:`refresh_status`)."""
        path = self.run_dir / "results.json"
        try:
            write_atomic(path, json.dumps(self.data, separators=(",", ":"), default=str))
        except OSError:
            # Only a failure fits in place; an interrupt stays "running", which readers report
            # as killed or unrecorded (the exit code and the one line said what happened).
            if self.data["status"] in ("failed", "diverged"):
                _patch_status(path, "failed")

    def save(self) -> None:
        write_atomic(self.run_dir / "results.json", _dump(self.data))
        write_atomic(self.run_dir / "results.txt", format_text(self.data))


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, default=str)


# How every results.json written while running starts (``status`` is the first key, _dump's
# layout); :func:`_patch_status` overwrites the value in place.
_RUNNING_HEAD = b'{\n  "status": "running"'
_NO_RECORD = "its last write failed (a full disk?), so how it ended was not recorded"


def _patch_status(path: Path, status: str) -> bool:
    """Overwrite ``"running"`` at the head of ``path`` with ``status`` (padded with a space),
    in place: no new file and no new disk block, so it works on a full disk where a temporary
    copy cannot be written. Only statuses no longer than ``running`` fit; True when written."""
    value = f'"{status}"'.encode().ljust(len(b'"running"'))
    new = _RUNNING_HEAD[: -len(b'"running"')] + value
    if len(new) != len(_RUNNING_HEAD):
        return False
    try:
        with open(path, "r+b") as f:
            if f.read(len(_RUNNING_HEAD)) != _RUNNING_HEAD:
                return False
            f.seek(0)
            f.write(new)
            f.flush()
            os.fsync(f.fileno())
    except OSError:
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def refresh_status(path: str | os.PathLike, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (the contents of ``path``, a ``results.json``) with a dead ``running`` experiment
    marked ``killed``, in the file too.

    A status stays ``running`` while its process lives. Where the process is gone (SIGKILL, an
    out-of-memory kill, a node that went down) the runner could not record it; on the machine
    that ran it that is certain, so the file is rewritten with status ``killed``. The error says
    the other possible cause: a last write that failed on a full disk. A ``failed`` written in
    place on a full disk (:func:`_patch_status`, no ``error``) gets that note too, unwritten.
    Results written on another machine are left as they are. Both texts are made before either
    file is written: a file :func:`format_text` cannot describe raises (KeyError, TypeError...)
    with both files left as they were.
    """
    pid = data.get("pid")
    if data.get("status") == "failed" and "error" not in data:
        return {**data, "error": f"the run failed and {_NO_RECORD}"}
    if data.get("status") != "running" or data.get("host") != socket.gethostname() or \
            not isinstance(pid, int) or _alive(pid):
        return data
    data = {**data, "status": "killed",
            "error": f"process {pid} ended without recording a status: it was killed, or "
                     f"{_NO_RECORD}"}
    # A file not in the runner's form makes format_text raise (the callers report it as
    # malformed): before anything is written, so neither file is changed.
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

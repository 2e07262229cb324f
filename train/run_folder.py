"""The run folder: one experiment's files, written and read here and nowhere else.

``<out_dir>/<MODEL>_<DATASET>_<timestamp>[_<n>]/`` holds ``config.json``, ``results.json`` and
``results.txt`` (the record: status, per-seed results, summary), ``train.log``, ``logs/``
(tensorboard), ``checkpoints/`` (each seed's best weights) and, while a seed is unfinished,
``state.pt`` (what it needs to continue, :mod:`train.checkpoint`). Every file is written
atomically: a failed write leaves the previous version and raises a one-line error naming the
folder. Statuses: ``running`` (a live process), ``complete``, ``interrupted``, ``failed``,
``diverged``, and ``killed`` (``running`` whose process is gone: :func:`refresh_status`).

The identity of a result is its resolved config minus a named set of free keys (where files
are, which device, how many processes): :data:`RESUME_FREE` for continuing a run,
:data:`CELL_FREE` (the number of runs and whether it is compiled too) for a table's cell.
:func:`latest` answers "which result in this folder is the one asked for", for the sweep, the
records and ``--resume`` alike.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from data import files
from data.files import output_problem, write_error
from train.checkpoint import STATE_FILE, ResumeError, load_state
from train.config import validate, without_unused
from train.errors import ConfigError, OutputError

# What a full disk under a run folder tells the user to do (data.files.write_error).
OUT_DIR_REMEDY = "free some space there or give another --out_dir"
#: Config keys that may differ between a run and its continuation: where files are, which
#: device, how many processes collate or build data. Nothing else changes a result.
RESUME_FREE = ("out_dir", "gpu", "data.data_dir", "data.cache_dir", "data.workers",
               "data.loader_workers")
#: For a table's cell also the number of seeds (compared on its own: more than asked is still
#: complete, fewer is partial) and compiling, which changes how a result is computed, not what
#: (float32 rounding, docs/performance.md).
CELL_FREE = RESUME_FREE + ("params.runs", "params.compile")
#: Statuses of a run that a rerun continues (``--resume``) rather than starts anew.
RESUMABLE = ("interrupted", "killed", "failed")
RESULTS = "results.json"


# ------------------------------------------------------------------------------ identity
def identity(cfg: dict[str, Any], free: Sequence[str] = RESUME_FREE) -> dict[str, Any]:
    """``cfg`` as a flat ``{"section.key": value}`` without the ``free`` keys, comments, and the
    keys its model and dataset do not use (:func:`train.config.without_unused`).

    A config recorded by an older version of the project lacks keys added since, or holds a
    default changed since: it is read through today's schema first
    (:func:`train.config.validate`), so neither makes an old result someone else's."""
    try:
        cfg = without_unused(validate(cfg, origin="recorded config", recorded=True))
    except ConfigError:
        pass  # a key since removed or renamed: compared as recorded, so it differs
    flat: dict[str, Any] = {}

    def walk(d: dict, prefix: str) -> None:
        for key, value in d.items():
            if key.startswith("_"):
                continue
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            else:
                flat[f"{prefix}{key}"] = value
    walk(json.loads(json.dumps(cfg, default=str)), "")
    for key in free:
        for name in [k for k in flat if k == key or k.startswith(key + ".")]:
            del flat[name]
    return flat


def difference(recorded: dict[str, Any], wanted: dict[str, Any],
               free: Sequence[str] = RESUME_FREE) -> str | None:
    """The first key whose value differs (``"params.epochs is 2 in the run, 1000 now"``), or
    ``None`` when the two configs give the same result."""
    a, b = identity(recorded, free), identity(wanted, free)
    for key in sorted(set(a) | set(b)):
        if a.get(key, "(unset)") != b.get(key, "(unset)"):
            return f"{key} is {a.get(key, '(unset)')!r} in the run, {b.get(key, '(unset)')!r} now"
    return None


# ------------------------------------------------------------------------------- writing
def check_out_dir(out_dir: str | os.PathLike) -> Path:
    """:class:`OutputError` unless run folders can be created in ``out_dir`` (nothing is
    written: the check looks at the nearest existing folder on the way)."""
    problem = output_problem(out_dir, "folder")
    if problem:
        raise OutputError(f"out_dir: {problem}; give another --out_dir")
    return Path(out_dir)


def write_atomic(path: str | os.PathLike, content: str | bytes) -> None:
    """:func:`data.files.write_atomic` of a run folder's file: a full disk names the folder and
    ``--out_dir``."""
    files.write_atomic(path, content, OUT_DIR_REMEDY)


def _new_folder(out_dir: str | os.PathLike, model: str, dataset: str) -> Path:
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


class RunFolder:
    """A run folder being written: its record (``results.json``/``results.txt``) kept up to
    date, each epoch's end (best checkpoint, state, heartbeat) and how the experiment ended."""

    def __init__(self, path: Path, record: dict[str, Any]) -> None:
        self.path = path
        self.data: dict[str, Any] = {"status": "running", **record}  # status on the first line
        self.data.update(status="running", pid=os.getpid(), host=socket.gethostname())
        self.data.setdefault("runs", [])
        self.data.setdefault("summary", {})
        self.save()

    @classmethod
    def create(cls, out_dir: str | os.PathLike, record: dict[str, Any]) -> RunFolder:
        """A fresh, uniquely named folder in ``out_dir`` (checked before: :func:`check_out_dir`)
        with ``config.json`` and the record's header."""
        path = _new_folder(out_dir, record["model"], record["dataset"])
        write_atomic(path / "config.json", json.dumps(record["config"], indent=2))
        return cls(path, record)

    @classmethod
    def reopen(cls, point: ResumePoint, command: list[str], device: str,
               versions: dict[str, str]) -> RunFolder:
        """The folder of ``point`` continued: its finished runs kept, and a ``resumed`` entry
        saying from where and with which command."""
        data = {k: v for k, v in point.record.items() if k not in ("finished", "error")}
        data.update(device=device, versions=versions)
        data["resumed"] = [*data.get("resumed", []), {
            "at": time.strftime("%Y-%m-%d %H:%M:%S"), "runs_finished": point.finished_runs,
            "after_epoch": point.state["epoch"] if point.state is not None else None,
            "command": command}]
        return cls(point.run_dir, data)

    def checkpoint_path(self, index: int, seed: int) -> Path:
        return self.path / "checkpoints" / f"run{index}_seed{seed}_best.pt"

    def keep_best(self, path: Path, checkpoint: bytes) -> None:
        """A seed's best weights so far (``checkpoint``: encoded) in its file."""
        write_atomic(path, checkpoint)

    def end_epoch(self, state_bytes: bytes, best: tuple[Path, bytes] | None = None,
                  last: bool = False) -> None:
        """After an epoch: the best weights (``best``: their file and bytes) when they
        improved, the state to continue from, then the heartbeat (not after the ``last``
        epoch: the record of the finished seed follows)."""
        if best is not None:
            self.keep_best(*best)
        write_atomic(self.path / STATE_FILE, state_bytes)
        if not last:
            self.data["updated"] = time.strftime("%Y-%m-%d %H:%M:%S")
            write_atomic(self.path / RESULTS, _dump(self.data))

    def add_run(self, run: dict[str, Any]) -> None:
        self.data["runs"].append(run)
        self.data["summary"] = summarise(self.data["runs"])
        self.save()

    def finish(self, status: str, error: str | None = None) -> None:
        """Record how the experiment ended. Where the disk is full, ``results.json`` keeps its
        last whole version (``running``), which readers report as killed once the process is
        gone (:func:`refresh_status`). A complete run needs its state no more."""
        self.data["status"] = status
        self.data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        if error:
            self.data["error"] = error
        self.save()
        if status == "complete":
            (self.path / STATE_FILE).unlink(missing_ok=True)

    def save(self) -> None:
        write_atomic(self.path / RESULTS, _dump(self.data))
        write_atomic(self.path / "results.txt", format_text(self.data))


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, default=str)


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


# ------------------------------------------------------------------------------- reading
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


@dataclass
class Result:
    """One run folder's record as read: ``problem`` says why it cannot be used (damaged,
    malformed), else ``data`` is the record with its status refreshed."""

    path: Path  # the results.json
    data: dict[str, Any]
    problem: str | None = None

    @property
    def status(self) -> str:
        return "damaged" if self.problem else str(self.data.get("status"))

    @property
    def run_dir(self) -> Path:
        return self.path.parent

    def finished_seeds(self) -> list[int]:
        """Seeds whose run has every recorded metric finite."""
        return [r["seed"] for r in self.data.get("runs", []) if _finite_run(r)]


def _finite_run(run: Any) -> bool:
    if not isinstance(run, dict) or not isinstance(run.get("final"), dict):
        return False
    values = [v for split in run["final"].values() if isinstance(split, dict)
              for v in split.values()]
    return bool(values) and all(isinstance(v, (int, float)) and math.isfinite(v)
                                for v in values)


def read(path: Path) -> Result:
    """The record at ``path`` (a ``results.json``); never raises for a damaged file."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as err:  # RecursionError: deep nesting
        what = "truncated or not JSON" if isinstance(err, ValueError) else type(err).__name__
        return Result(path, {}, f"unreadable results.json ({what})")
    if not isinstance(data, dict) or not isinstance(data.get("runs", []), list):
        return Result(path, {}, "malformed results.json (not a record with a list of runs)")
    if not isinstance(data.get("status"), str):
        return Result(path, {}, f"malformed results.json (status {data.get('status')!r})")
    try:
        data = refresh_status(path, data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        return Result(path, {}, f"malformed results.json ({type(err).__name__}: {err})")
    return Result(path, data)


def results_in(folder: Path) -> list[Result]:
    """Every ``*/results.json`` in ``folder`` (and its own), newest first: by the recorded
    start time, then folder name, then file time."""
    if not folder.is_dir():
        return []
    paths = sorted(folder.glob(f"*/{RESULTS}"))
    if (folder / RESULTS).is_file():
        paths.insert(0, folder / RESULTS)
    found = [read(p) for p in paths]

    def key(r: Result) -> tuple[str, str, float]:
        try:
            mtime = r.path.stat().st_mtime
        except OSError:
            mtime = 0.0
        return (str(r.data.get("started", "")), r.run_dir.name, mtime)

    return sorted(found, key=key, reverse=True)


@dataclass
class Latest:
    """What a folder holds for a request (:func:`latest`). ``state``: ``complete``, ``partial``
    (the request's, fewer seeds finished), ``running``, one of :data:`RESUMABLE`, ``diverged``,
    ``stale`` (only other requests' results: ``why``), ``damaged`` (``why``) or ``missing``;
    ``result`` the record that decided it; ``others`` the results that are not the request's,
    with why."""

    state: str
    result: Result | None = None
    why: str | None = None
    seeds: int = 0  # how many the request asks for
    others: list[tuple[Result, str]] = field(default_factory=list)

    @property
    def resume_dir(self) -> Path | None:
        """The run folder a rerun continues: an unfinished run of the request with its seeds,
        else None (a new run folder)."""
        if self.state in RESUMABLE and self.result is not None and \
                len(self.result.data.get("seeds") or []) == self.seeds:
            return self.result.run_dir
        return None


def mismatch(result: Result, cfg: dict[str, Any] | None, seeds: Sequence[int],
             free: Sequence[str] = CELL_FREE) -> str | None:
    """Why ``result`` is not a run of ``cfg`` with (a prefix of) ``seeds``, or None
    (``cfg=None``: any run is)."""
    if result.problem:
        return result.problem
    if cfg is None:
        return None
    recorded = result.data.get("config")
    if not isinstance(recorded, dict):
        return "its record holds no config"
    what = difference(recorded, cfg, free)
    if what:
        return what
    have = result.data.get("seeds")
    n = min(len(have), len(seeds)) if isinstance(have, list) else 0
    if not isinstance(have, list) or list(have[:n]) != list(seeds[:n]):
        return f"seeds {have} in the run, {list(seeds)} now"
    return None


def latest(folder: str | os.PathLike, cfg: dict[str, Any] | None, seeds: Sequence[int],
           free: Sequence[str] = CELL_FREE) -> Latest:
    """Which result in ``folder`` (a cell's folder of run folders, or one run folder) is the
    one asked for: a run of ``cfg`` (compared without the ``free`` keys; ``None``: any) with
    ``seeds``. The sweep, the tables, the records and ``--resume`` all ask here.

    The newest complete result of the request with every seed finished counts; else the
    request's newest result decides (running, unfinished, or ``partial``: complete with fewer
    seeds, or a seed without its metrics). Results of other requests never count: with nothing
    else the folder is ``stale`` (or ``damaged``, when its newest record cannot be read)."""
    results = results_in(Path(folder))
    found = Latest("missing", seeds=len(seeds))
    own = []
    for r in results:
        why = mismatch(r, cfg, seeds, free)
        if why is None:
            own.append(r)
        else:
            found.others.append((r, why))
    for r in own:
        if r.status == "complete" and len(r.finished_seeds()) >= len(seeds):
            found.state, found.result = "complete", r
            return found
    if own:
        newest = own[0]
        found.state = "partial" if newest.status == "complete" else newest.status
        found.result = newest
    elif results:
        newest, why = found.others[0]
        found.state = "damaged" if newest.problem else "stale"
        found.result, found.why = newest, why
    return found


# ------------------------------------------------------------------------------- resuming
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
    for name in (RESULTS, "config.json"):
        if not (run_dir / name).is_file():
            raise ResumeError(f"--resume {run_dir}: no {name} there (not a run folder)")
    return run_dir / "config.json"


_TMP = re.compile(r"^\..+\.tmp(\d+)$")


def remove_leftovers(run_dir: Path) -> list[Path]:
    """Delete the partial files (``.NAME.tmpPID``) of writers that are gone; returns them."""
    removed = []
    for path in [*run_dir.glob(".*"), *run_dir.glob("checkpoints/.*")]:
        m = _TMP.match(path.name)
        if m and not _alive(int(m.group(1))):
            try:
                path.unlink()
                removed.append(path)
            except OSError:
                pass  # a read-only folder: the leftover stays, harmless
    return removed


def open_run(run_dir: str | os.PathLike, cfg: dict[str, Any], seeds: list[int] | None,
             fingerprint: dict[str, Any]) -> ResumePoint:
    """The :class:`ResumePoint` of ``run_dir`` for a run of ``cfg`` with ``seeds`` (``None``:
    the run's own) on data of ``fingerprint``; :class:`ResumeError` (one line) where it cannot
    be continued. Partial files of killed writers are removed on the way."""
    run_dir = Path(run_dir)
    result = read(run_config(run_dir).with_name(RESULTS))
    if result.problem or not isinstance(result.data.get("config"), dict):
        problem = result.problem or "results.json is not a run record of this project"
        raise ResumeError(f"--resume {run_dir}: {problem}")
    record = result.data
    if record.get("status") == "running":
        raise ResumeError(f"--resume {run_dir}: the run is still going (process "
                          f"{record.get('pid')} on {record.get('host')})")
    remove_leftovers(run_dir)
    point = ResumePoint(run_dir, record, None)
    if point.complete:
        return point
    what = difference(record["config"], cfg)
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
    if state_path.is_symlink() and not state_path.exists():
        raise ResumeError(f"--resume {run_dir}: {STATE_FILE} is a link to nothing "
                          f"({os.readlink(state_path)}); put the state back, or delete the "
                          "link to restart the unfinished seed from its first epoch")
    if state_path.exists():
        state = load_state(state_path)
        if state.get("fingerprint") != fingerprint or \
                difference(state.get("config", {}), cfg):
            raise ResumeError(f"--resume {run_dir}: its state file belongs to another "
                              "config or other data")
        if state["run"] == point.finished_runs:  # an older seed's state is of no use
            point.state = state
    return point

"""The run folder: one experiment's files, written and read here and nowhere else. Its layout,
statuses, atomic writes and which keys make a result the same: docs/reproducing.md.
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
from train.errors import ConfigError, UsageError

# What a full disk under a run folder tells the user to do (data.files.write_error).
OUT_DIR_REMEDY = "free some space there or give another --out_dir"
#: Config keys that may differ between a run and its continuation: where files are, which
#: device, how many processes collate or build data, and compiling, which like the device
#: changes how a result is computed, not what (float32 rounding, docs/performance.md); a run
#: started on a GPU, compiled, may go on eagerly on a CPU. Nothing else changes a result.
RESUME_FREE = ("out_dir", "gpu", "params.compile", "data.data_dir", "data.cache_dir",
               "data.workers", "data.loader_workers")
#: For a table's cell also the number of seeds (compared on its own: more than asked is still
#: complete, fewer is partial).
CELL_FREE = RESUME_FREE + ("params.runs",)
#: Statuses of a run that a rerun continues (``--resume``) rather than starts anew.
RESUMABLE = ("interrupted", "killed", "failed")
RESULTS = "results.json"


# ------------------------------------------------------------------------------ identity
def identity(cfg: dict[str, Any], free: Sequence[str] = RESUME_FREE) -> dict[str, Any]:
    """``cfg`` flat (``{"section.key": value}``) without the ``free``, comment and unused keys,
    read through today's schema: a key or default added since changes nothing."""
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
    return {k: v for k, v in flat.items() if not any(k == f or k.startswith(f"{f}.") for f in free)}


def difference(recorded: dict[str, Any], wanted: dict[str, Any],
               free: Sequence[str] = RESUME_FREE) -> str | None:
    """The first key whose value differs (``"params.epochs is 2 in the run, 1000 now"``)."""
    a, b = identity(recorded, free), identity(wanted, free)
    for key in sorted(set(a) | set(b)):
        if a.get(key, "(unset)") != b.get(key, "(unset)"):
            return f"{key} is {a.get(key, '(unset)')!r} in the run, {b.get(key, '(unset)')!r} now"
    return None


# ------------------------------------------------------------------------------- writing
def check_out_dir(out_dir: str | os.PathLike) -> Path:
    """:class:`UsageError` unless run folders can be created in ``out_dir`` (nothing written)."""
    problem = output_problem(out_dir, "folder")
    if problem:
        raise UsageError(f"out_dir: {problem}; give another --out_dir")
    return Path(out_dir)


def write_atomic(path: str | os.PathLike, content: str | bytes) -> None:
    """:func:`data.files.write_atomic`, a full disk naming ``--out_dir``."""
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
    raise UsageError(f"could not create a unique run folder under {base}")


class RunFolder:
    """A run folder being written: its record kept up to date, each epoch's end, the end."""

    def __init__(self, path: Path, record: dict[str, Any]) -> None:
        self.path = path
        self.data: dict[str, Any] = {"status": "running", **record}  # status on the first line
        self.data.update(status="running", pid=os.getpid(), host=socket.gethostname())
        self.data.setdefault("runs", [])
        self.data.setdefault("summary", {})
        self.save()

    @classmethod
    def create(cls, out_dir: str | os.PathLike, record: dict[str, Any]) -> RunFolder:
        """A fresh, uniquely named folder in ``out_dir`` with ``config.json`` and the record."""
        path = _new_folder(out_dir, record["model"], record["dataset"])
        write_atomic(path / "config.json", json.dumps(record["config"], indent=2))
        return cls(path, record)

    @classmethod
    def reopen(cls, point: Result, command: list[str], device: str,
               versions: dict[str, str]) -> RunFolder:
        """The folder of ``point`` continued, with a ``resumed`` entry (from where, how)."""
        data = {k: v for k, v in point.data.items() if k not in ("finished", "error")}
        data["resumed"] = [*data.get("resumed", []), {
            "at": time.strftime("%Y-%m-%d %H:%M:%S"), "runs_finished": point.finished_runs,
            "after_epoch": point.saved_state["epoch"] if point.saved_state else None,
            "command": command, "before": {"device": data.get("device"),
                                           "versions": data.get("versions")}}]
        data.update(device=device, versions=versions)
        return cls(point.run_dir, data)

    def checkpoint_path(self, index: int, seed: int) -> Path:
        return self.path / "checkpoints" / f"run{index}_seed{seed}_best.pt"

    def end_epoch(self, state_bytes: bytes, best: tuple[Path, bytes] | None = None,
                  last: bool = False) -> None:
        """After an epoch: the ``best`` weights (file, bytes) when they improved, the state, then
        the heartbeat (not after the ``last``: the finished seed's record follows)."""
        if best is not None:
            write_atomic(*best)
        write_atomic(self.path / STATE_FILE, state_bytes)
        if not last:
            self.data["updated"] = time.strftime("%Y-%m-%d %H:%M:%S")
            write_atomic(self.path / RESULTS, _dump(self.data))

    def add_run(self, run: dict[str, Any]) -> None:
        self.data["runs"].append(run)
        self.data["summary"] = summarise(self.data["runs"])
        self.save()

    def finish(self, status: str, error: str | None = None) -> None:
        """Record how the experiment ended (a full disk leaves ``running``, read as killed)."""
        self.data["status"] = status
        self.data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        if error:
            self.data["error"] = error
        self.save()
        if status == "complete":
            (self.path / STATE_FILE).unlink(missing_ok=True)

    def save(self) -> None:
        _write_record(self.path / RESULTS, self.data)


def _write_record(path: Path, data: dict[str, Any]) -> None:
    """``results.json`` at ``path`` and ``results.txt``, both made before either is written."""
    texts = (_dump(data), format_text(data))
    write_atomic(path, texts[0])
    write_atomic(path.with_name("results.txt"), texts[1])


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
    lines = [f"Model: {data.get('model')}   Dataset: {data.get('dataset')}   "
             f"Status: {data['status']}",
             f"Parameters: {data.get('num_params')}   Device: {data.get('device')}",
             f"Seeds: {data.get('seeds')}", ""]
    for i, run in enumerate(data["runs"]):
        final = "  ".join(f"{split} " + ", ".join(f"{k}={v:.4f}" for k, v in m.items())
                          for split, m in run["final"].items() if m)
        lines.append(f"run {i} seed {run['seed']}: epochs {run['epochs']} (best "
                     f"{run['best_epoch']}), {run['s_per_epoch']:.2f} s/epoch, stop: "
                     f"{run['stop_reason']}  |  {final}")
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
    """``data`` (``path``'s) marked ``killed``, in the file too, if its process is gone."""
    pid = data.get("pid")
    if data.get("status") != "running" or data.get("host") != socket.gethostname() or \
            not isinstance(pid, int) or _alive(pid):
        return data
    data = {**data, "status": "killed",
            "error": f"process {pid} ended without recording a status: it was killed, or "
                     "its last write failed (a full disk?)"}
    try:
        _write_record(Path(path), data)
    except OSError:
        pass  # a read-only results folder: report the status without recording it
    return data


@dataclass
class Result:
    """A run folder's record as read (``problem``: why it cannot be used); ``saved_state``: the
    unfinished seed's, where :func:`open_run` continues it (``None``: from its epoch 0)."""

    path: Path  # the results.json
    data: dict[str, Any]
    problem: str | None = None
    saved_state: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        return "damaged" if self.problem else str(self.data.get("status"))

    @property
    def run_dir(self) -> Path:
        return self.path.parent

    @property
    def finished_runs(self) -> int:
        return len(self.data.get("runs", []))

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
    """Every ``*/results.json`` in ``folder`` (and its own), newest first."""
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
    """What a folder holds for a request (:func:`latest`): ``state``, the ``result`` deciding
    it, ``why``, and the ``others`` (not the request's, with why)."""

    state: str
    result: Result | None = None
    why: str | None = None
    seeds: int = 0  # how many the request asks for
    others: list[tuple[Result, str]] = field(default_factory=list)

    @property
    def resume_dir(self) -> Path | None:
        """The run folder a rerun continues (``None``: a new one)."""
        if self.state in RESUMABLE and self.result is not None and \
                len(self.result.data.get("seeds") or []) == self.seeds:
            return self.result.run_dir
        return None


def mismatch(result: Result, cfg: dict[str, Any] | None, seeds: Sequence[int],
             free: Sequence[str] = CELL_FREE) -> str | None:
    """Why ``result`` is not a run of ``cfg`` (``None``: any) with (a prefix of) ``seeds``."""
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
    """Which result in ``folder`` (of run folders, or one) is the request's: the newest complete
    run of ``cfg`` with every one of ``seeds`` finished, else its newest (docs/reproducing.md)."""
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
             fingerprint: dict[str, Any]) -> Result:
    """``run_dir``'s record and state to continue it as a run of ``cfg`` with ``seeds``
    (``None``: its own) on data of ``fingerprint``; :class:`ResumeError` where it cannot be."""
    run_dir = Path(run_dir)
    result = read(run_config(run_dir).with_name(RESULTS))
    if result.problem or not isinstance(result.data.get("config"), dict):
        problem = result.problem or "results.json is not a run record of this project"
        raise ResumeError(f"--resume {run_dir}: {problem}")
    record = result.data
    if result.status == "running":
        raise ResumeError(f"--resume {run_dir}: the run is still going (process "
                          f"{record.get('pid')} on {record.get('host')})")
    remove_leftovers(run_dir)
    if result.status == "complete":
        return result
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
        if state["run"] == result.finished_runs:  # an older seed's state is of no use
            result.saved_state = state
    return result

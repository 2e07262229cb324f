"""Committed evidence of the paper's tables: one JSON record per measured cell,
``<records>/<table>/<cell id>.json`` (ZINC cells also keep their first seed's best checkpoint,
``<cell id>.pt``), made from the result :mod:`scripts.report.cells` chooses and checked whenever
it is written or read (:func:`check_record`). Its fields and checks: ``docs/reproducing.md``,
"Records and the report"."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import platform
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters
from scripts import sweep
from scripts.report.cells import EXPECTED_RUNS, CellResult, load_tables, table_results
from scripts.sweep import ROOT, TABLES, Cell, Table, requested_runs
from train.checkpoint import CheckpointError, load_checkpoint
from train.errors import UsageError
from train.run_folder import CELL_FREE, difference, summarise, write_atomic

RESULTS = ROOT / "results"
#: The project's checkout: its commit is the one a record states.
PROJECT = ROOT
#: 2: ``config``, ``setup`` and ``evaluations`` (format 1 had none; its records were migrated).
FORMAT = 2
#: Datasets whose cells also get their first seed's best checkpoint (small nets, ~0.4 MB each).
CHECKPOINT_DATASETS = ("ZINC",)
MAX_CHECKPOINT_BYTES = 1_000_000
#: Fields of a main script's ``results.json`` that a record keeps as they are.
KEPT = ("model", "dataset", "task", "num_params", "seeds", "primary_metric", "higher_is_better",
        "summary", "versions", "device", "started", "finished")
#: Fields of each run that a record keeps (the checkpoint's file name is dropped).
RUN_KEPT = ("seed", "epochs", "best_epoch", "stop_reason", "s_per_epoch", "total_time_s", "final",
            "compiled", "device")
#: Numbers of each run that the summary averages besides the final metrics.
RUN_NUMBERS = ("s_per_epoch", "epochs", "total_time_s")
#: An absolute or home-relative path inside a text (a folder of some machine).
LOCAL_PATH = re.compile(r"(?:^|[\s\"'=(,])([~/][\w.~-]+(?:/[\w.~-]*)*)")
#: ``host:/path`` or ``host:~/path`` (a URL's ``scheme://`` is not one).
HOST_PATH = re.compile(r"(?<![\w.-])[\w.-]+:(?:/(?!/)|~)")
#: A dotted host name (labels of two or more characters, the first a letter) or ``user@host``.
HOST_NAME = re.compile(r"\b[A-Za-z][\w-]+(?:\.[A-Za-z][\w-]+)+\b|[\w.-]+@[\w.-]+")
COMMIT = re.compile(r"[0-9a-f]{7,40}(\+dirty)?")
#: What an evaluation of a record's checkpoint runs (``python`` + this + the checkpoint ...).
EVALUATE = "evaluate_checkpoint.py"


class RecordError(ValueError):
    """A record that does not hold what it claims; the message starts with the file."""


# ------------------------------------------------------------------------------- making
def _generic(value: Any, key: str = "") -> Any:
    """``value`` (a config, or an argument after option ``key``) with every absolute path
    ``OUT`` (the output folder) or ``DIR``, and no ``_`` keys (comments no run reads)."""
    if isinstance(value, dict):
        return {k: _generic(v, k) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list):
        return [_generic(v, key) for v in value]
    if isinstance(value, str) and os.path.isabs(os.path.expanduser(value)):
        return "OUT" if key in ("out_dir", "--out_dir") else "DIR"
    return value


def generic_command(command: Sequence[str]) -> str:
    """``python SCRIPT ...`` with no folder of this machine (:func:`_generic`)."""
    return shlex.join(["python", *(_generic(a, k) for k, a in zip(["", *command], command))])


def project_commit(commit: str | None) -> str:
    """``commit`` (``--commit``) checked, else HEAD (``+dirty``) of the project's own checkout
    (not of a repository it lies in); :class:`UsageError` when neither is known."""
    if commit is not None:
        if not COMMIT.fullmatch(commit):
            raise UsageError(f"--commit {commit!r}: expected a commit id (7 to 40 hex digits, "
                             "optionally +dirty)")
        return commit

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(PROJECT), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        top, head = git("rev-parse", "--show-toplevel", "HEAD").splitlines()
        if Path(top).resolve() == Path(PROJECT).resolve():
            dirty = git("status", "--porcelain", "--untracked-files=no")
            return head + ("+dirty" if dirty else "")
    raise UsageError("cannot tell the project's commit: the project folder is not a git "
                     "checkout (or git is missing); give --commit SHA")


def describe_machine(device: str) -> str:
    """The CPU model and hardware threads, or the GPU, of this machine (no host name)."""
    if device.startswith("cuda"):
        name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "model unknown"
        return f"GPU: {name}"
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        model = next((s.split(":", 1)[1].strip() for s in lines if s.startswith("model name")),
                     model)
    return f"CPU: {model}, {os.cpu_count()} hardware threads"


def make_record(table: Table, res: CellResult, data: dict, runs: int, commit: str,
                machine: str | None) -> dict[str, Any]:
    """The record of a cell from its chosen ``results.json`` (``data``, at ``res.path``)."""
    devices = {r.get("device", data.get("device")) for r in data.get("runs", [])}
    if machine is None and len(devices) > 1:  # this machine's description fits only some
        raise RecordError(f"{res.path}: its seeds ran on several devices "
                          f"({', '.join(sorted(map(str, devices)))}): give --machine naming each")
    return {"format": FORMAT, "table": table.name, "cell": res.cell.id,
            **{key: data[key] for key in KEPT if key in data}, "seeds_protocol": runs,
            "runs": [{k: r[k] for k in RUN_KEPT if k in r} for r in data.get("runs", [])],
            "io": _first_checkpoint(res, data)["io"],
            "command": generic_command(data.get("command") or []),
            "config": _generic(data.get("config") or {}), "setup": res.cell.setup,
            "commit": commit,
            "machine": machine or describe_machine(str(data.get("device", "cpu")))}


def with_evaluation(record: dict[str, Any], seed: int, split: str, metrics: dict[str, float],
                    command: Sequence[str], commit: str) -> dict[str, Any]:
    """``record`` with ``metrics`` from ``evaluate_checkpoint.py`` (``command``) as seed
    ``seed``'s ``final[split]``, named in ``evaluations``, the summary recomputed."""
    out = json.loads(json.dumps(record))
    run = next(r for r in out["runs"] if r["seed"] == seed)
    run["final"][split] = dict(metrics)
    out["evaluations"] = [*out.get("evaluations", []), {
        "seed": seed, "split": split, "command": generic_command(command), "commit": commit,
        "metrics": dict(metrics)}]
    out["summary"] = summarise(out["runs"])
    return out


def _first_checkpoint(res: CellResult, data: dict) -> dict[str, Any]:
    first = (data.get("runs") or [{}])[0]
    name = first.get("checkpoint") if isinstance(first, dict) else None
    if not name:
        raise RecordError(f"{res.path}: its first run names no checkpoint")
    return load_checkpoint(res.path.parent / "checkpoints" / name)


def portable_checkpoint(ckpt: dict[str, Any]) -> bytes:
    """A checkpoint's bytes with its config's folders reset to their defaults (no folder of
    the machine that trained it is kept)."""
    cfg = json.loads(json.dumps(ckpt["config"]))
    cfg["out_dir"] = "out/"
    for key in ("data_dir", "cache_dir"):
        if key in cfg.get("data", {}):
            cfg["data"][key] = None
    buffer = io.BytesIO()
    torch.save({**ckpt, "config": cfg}, buffer)
    return buffer.getvalue()


# ------------------------------------------------------------------------------- checking
def cell_config(table: str, cell: Cell, runs: int = EXPECTED_RUNS) -> dict[str, Any]:
    """The config the sweep gives ``cell`` (its folders, devices and runs are free keys)."""
    return sweep.script_config(cell.dataset, sweep.build_command(cell, table, "out", runs=runs)[2:])


def config_problem(record: dict, table: str, cell: Cell) -> str | None:
    """Why the record's ``config`` is not a run of its cell's (:data:`~train.run_folder.CELL_FREE`
    aside), or ``None``."""
    cfg = record.get("config")
    if not isinstance(cfg, dict) or not cfg:
        return "no config (a record states the run's resolved config)"
    try:
        wanted = cell_config(table, cell)
    except ValueError as err:
        return f"its cell's command is not its main script's: {' '.join(str(err).split())}"
    why = difference(cfg, wanted, CELL_FREE)
    return None if why is None else f"its config is another experiment's: {why}"


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def record_problem(record: Any, table: str, cell_id: str, cells: dict[str, Cell]) -> str | None:
    """Why ``record`` (read from ``<table>/<cell_id>.json``) is refused, or ``None``."""
    if not isinstance(record, dict):
        return "not a JSON object"
    cell = cells.get(cell_id)
    if cell is None:
        return f"no cell {cell_id} in the {table} table"
    for key in ("model", "dataset", "setup"):
        if record.get(key) != getattr(cell, key):
            return f"{key} {record.get(key)!r}, but the cell {cell_id} is {getattr(cell, key)}"
    if record.get("table") != table or record.get("cell") != cell_id:
        return f"says it is {record.get('table')}/{record.get('cell')}"
    if record.get("format") != FORMAT:
        return f"format {record.get('format')!r}; this project reads format {FORMAT}"
    seeds, runs = record.get("seeds"), record.get("runs")
    if not isinstance(seeds, list) or not seeds or not isinstance(runs, list):
        return "no seeds or no runs"
    ran = [r.get("seed") if isinstance(r, dict) else None for r in runs]
    missing = [s for s in seeds if s not in ran]
    if len(set(map(str, seeds))) != len(seeds):
        return f"a seed is listed twice ({seeds})"
    if missing or len(ran) != len(seeds):
        return (f"seed {missing[0]} has no run" if missing else
                f"{len(ran)} runs for {len(seeds)} seeds")
    if not all(isinstance(r.get("final"), dict) for r in runs):
        return "a run without final metrics"
    why = config_problem(record, table, cell)
    if why:
        return why
    cfg = record["config"]
    for what, n in (("command", requested_runs(shlex.split(str(record.get("command", ""))))),
                    ("config", (cfg.get("params") or {}).get("runs"))):
        if n != len(seeds):
            return f"its {what} asks for {n} runs, it holds {len(seeds)}"
    try:
        params = count_parameters(build_net(cfg["model"], NetIO.from_dict(record["io"]),
                                            cfg["net_params"]))
    except (KeyError, TypeError, ValueError) as err:
        return f"cannot rebuild its net ({' '.join(str(err).split())[:120]})"
    if record.get("num_params") != params:
        return f"#Param {record.get('num_params')}, but its config builds {params}"
    local = next((m.group(1) for s in _strings(record) if (m := LOCAL_PATH.search(s))), None)
    return None if local is None else f"holds a machine path ({local[:60]})"


def _is_finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


def _leaves(value: Any, path: tuple[str, ...] = ()) -> Iterable[tuple[str, Any]]:
    """``("test acc mean", 0.86)``... for every number of a nested summary."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, str(k)))
    else:
        yield " ".join(path), value


def machine_problem(machine: str) -> str | None:
    """Why ``machine`` is not a description of hardware (``CPU: ...`` or ``GPU: ...``, naming
    no host and no path)."""
    if not machine.startswith(("CPU: ", "GPU: ")):
        return f"machine {machine!r}: expected 'CPU: MODEL, N hardware threads' or 'GPU: MODEL'"
    host = socket.gethostname().split(".")[0]
    named = [m.group(0) for pattern in (HOST_PATH, LOCAL_PATH, HOST_NAME)
             for m in pattern.finditer(machine)]
    named += [host] if host and host != "localhost" and re.search(
        rf"\b{re.escape(host)}\b", machine) else []
    return f"machine names a host or a path ({named[0].strip()[:60]})" if named else None


def evidence_problem(record: dict) -> str | None:
    """Why a record that passed :func:`record_problem` states what its runs do not support
    (a metric, its summary, its commit, evaluations, machine, a host path), or ``None``."""
    for run in record["runs"]:
        numbers = [(f"{split} {name}", v) for split, block in run["final"].items()
                   if isinstance(block, dict) for name, v in block.items()]
        for what, v in numbers + [(key, run[key]) for key in RUN_NUMBERS if key in run]:
            # an accuracy lies in [0, 1]; an error, a loss or a time is not negative
            bad = "not a finite number" if not _is_finite(v) else "outside its range" if (
                v < 0 or what.split()[-1].startswith("acc") and v > 1) else None
            if bad:
                return f"seed {run.get('seed')}: {what} is {v!r}, {bad}"
    try:
        want = dict(_leaves(summarise(record["runs"])))
    except (KeyError, TypeError, ValueError) as err:
        return f"cannot summarise its runs ({type(err).__name__}: {err})"
    got = dict(_leaves(record.get("summary")))
    for key in dict.fromkeys([*want, *got]):
        a, b = got.get(key), want.get(key)
        if not (_is_finite(a) and _is_finite(b) and math.isclose(a, b, rel_tol=1e-9,
                                                                  abs_tol=1e-12)):
            return f"summary {key or '(none)'} is {a!r}, but its runs give {b!r}"
    if not COMMIT.fullmatch(str(record.get("commit"))):
        return f"commit {record.get('commit')!r} is not a commit id"
    why = evaluations_problem(record) or machine_problem(str(record.get("machine")))
    if why:
        return why
    remote = next((m.group(0) for s in _strings(record) if (m := HOST_PATH.search(s))), None)
    return None if remote is None else f"holds a host path ({remote[:60]})"


def evaluations_problem(record: dict) -> str | None:
    """Why the record's ``evaluations`` (each: seed, split, command, commit and metrics,
    exactly that seed's ``final[split]``) do not support its runs' figures, or ``None``."""
    evaluations = record.get("evaluations", [])
    if not isinstance(evaluations, list):
        return "evaluations: not a list"
    by_seed = {r.get("seed"): r for r in record["runs"]}
    for i, ev in enumerate(evaluations):
        where = f"evaluations[{i}]"
        if not isinstance(ev, dict) or set(ev) != {"seed", "split", "command", "commit",
                                                   "metrics"}:
            return f"{where}: expected seed, split, command, commit and metrics"
        words = shlex.split(str(ev["command"]))
        if words[:2] != ["python", EVALUATE] or len(words) < 3 \
                or Path(words[2]).name != f"{record['cell']}.pt":
            return f"{where}: its command is not python {EVALUATE} {record['cell']}.pt ..."
        if not COMMIT.fullmatch(str(ev["commit"])):
            return f"{where}: commit {ev['commit']!r} is not a commit id"
        if ev["seed"] not in by_seed or ev["split"] not in ("train", "val", "test"):
            return f"{where}: no run of seed {ev['seed']!r} with a split {ev['split']!r}"
        final = by_seed[ev["seed"]]["final"].get(ev["split"])
        if not isinstance(ev["metrics"], dict) or not ev["metrics"] or final != ev["metrics"]:
            return (f"{where}: seed {ev['seed']} {ev['split']} is {final!r} in its run, "
                    f"{ev['metrics']!r} in the evaluation")
    return None


def checkpoint_problem(record: dict, path: Path) -> str | None:
    """Why the checkpoint beside ``record`` (at ``path``) is not its evaluations' seed's."""
    for ev in record.get("evaluations", []):
        try:
            seed = load_checkpoint(path.with_suffix(".pt")).get("seed")
        except CheckpointError as err:
            return f"its evaluation's checkpoint: {' '.join(str(err).split())}"
        if seed != ev["seed"]:
            return f"its checkpoint is seed {seed}'s, its evaluation says seed {ev['seed']}"
    return None


def check_record(record: Any, table: str, cell_id: str, cells: dict[str, Cell]) -> str | None:
    """Why a record is refused (:func:`record_problem`, then :func:`evidence_problem`)."""
    return record_problem(record, table, cell_id, cells) or evidence_problem(record)


def read_records(root: str | os.PathLike = RESULTS) -> dict[str, dict[str, dict]]:
    """Every record under ``root``: table -> cell id -> record, each checked (the first
    refused one raises :class:`RecordError`, one line naming the file)."""
    out: dict[str, dict[str, dict]] = {}
    root = Path(root)
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        if folder.name not in TABLES:
            raise RecordError(f"{sweep.shown(folder.resolve())}: not a table ({', '.join(TABLES)})")
        cells = {c.id: c for c in load_tables([folder.name])[0].cells}
        out[folder.name] = {}
        for path in sorted(folder.glob("*.json")):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError) as err:
                raise RecordError(f"{path}: unreadable ({' '.join(str(err).split())})") from None
            why = check_record(record, folder.name, path.stem, cells) \
                or checkpoint_problem(record, path)
            if why:
                raise RecordError(f"{sweep.shown(path.resolve())}: {why}")
            out[folder.name][path.stem] = record
    return out


# ------------------------------------------------------------------------------- collecting
def collect_cell(table: Table, res: CellResult, into: Path, runs: int, commit: str,
                 machine: str | None, replace: bool) -> str:
    """Write one cell's record (and checkpoint); returns what happened, for one line."""
    if res.state not in ("ok", "partial"):
        return {"missing": "no result", "stale": "only results of another experiment"}.get(
            res.state, f"not complete ({res.state} {res.runs}/{runs})")
    data = json.loads(res.path.read_text())
    record = make_record(table, res, data, runs, commit, machine)
    why = check_record(record, table.name, res.cell.id, {res.cell.id: res.cell})
    if why:
        raise RecordError(f"{res.path}: refused: {why}")
    path = into / table.name / f"{res.cell.id}.json"
    old = None
    with contextlib.suppress(OSError, ValueError):
        old = json.loads(path.read_text())
    n_old = len(old.get("seeds", [])) if isinstance(old, dict) else 0
    seeds = f"{len(record['seeds'])}/{runs} seeds"
    if n_old > len(record["seeds"]) and not replace:
        return f"kept: the record has {n_old} seeds, the newest result {seeds} (--replace)"
    ckpt_path = path.with_suffix(".pt")
    wants_ckpt = res.cell.dataset in CHECKPOINT_DATASETS
    if old == record and (ckpt_path.is_file() or not wants_ckpt):
        return f"unchanged ({seeds})"
    path.parent.mkdir(parents=True, exist_ok=True)
    note = ""
    if wants_ckpt:
        blob = portable_checkpoint(_first_checkpoint(res, data))
        write_atomic(ckpt_path, blob)
        note = f", checkpoint {len(blob) / 1e6:.2f} MB" + (
            " (over 1 MB)" if len(blob) > MAX_CHECKPOINT_BYTES else "")
    write_atomic(path, json.dumps(record, indent=1) + "\n")
    return f"{'updated' if old is not None else 'written'} ({seeds}{note})"


def collect_records(results: str | os.PathLike, tables: Sequence[str], into: Path,
                    runs: int = EXPECTED_RUNS, commit: str | None = None,
                    machine: str | None = None, replace: bool = False,
                    log: Callable[[str], Any] = print) -> int:
    """Collect every cell of ``tables`` found under ``results``; returns the number of
    results refused (each named on stderr). :class:`UsageError` before anything is read for
    an unknown commit or a ``machine`` naming a host."""
    commit = project_commit(commit)
    why = machine_problem(machine) if machine is not None else None
    if why:
        raise UsageError(f"--{why}")
    refused, tally = 0, {}  # what happened -> how many cells
    for table in load_tables(tables):
        for res in table_results(table, sweep.resolve(results) / table.name, runs).values():
            if res.state == "not implemented":
                continue
            try:
                what = collect_cell(table, res, into, runs, commit, machine, replace)
            except (RecordError, CheckpointError) as err:
                print(f"error: {err}", file=sys.stderr)
                refused += 1
                continue
            word = what.split(" (")[0].split(":")[0]
            tally[word] = tally.get(word, 0) + 1
            if what != "no result":
                log(f"{table.name}/{res.cell.id}: {what}")
    log("cells: " + ", ".join(f"{word} {n}" for word, n in tally.items())
        + (f", refused {refused}" if refused else ""))
    return refused

"""Committed evidence of the paper's tables: one small JSON record per measured cell.

    python -m scripts.records collect --results OUT_ROOT [--tables node,heterophily,graph]
        [--into results] [--runs 5] [--commit SHA] [--machine TEXT] [--replace]
    python -m scripts.records check [--into results]

``collect`` reads a sweep's output folder (``scripts/reproduce.sh TABLE --out_root OUT_ROOT``)
with :mod:`scripts.make_tables`' reading code (the same choice of result folder, the same test
that a result is the cell's own) and writes, for every cell whose chosen result is complete,
``<into>/<table>/<cell id>.json`` (cell ids are ``<MODEL>_<DATASET>``). Only results of the
protocol count: one run with other arguments than the sweep gives the cell (a smoke run's
``-- --epochs 2``; devices, paths, ``--runs`` and ``--compile`` aside) is reported as another
experiment's, never recorded. A record keeps the fields of the main scripts' ``results.json``
(``model``, ``dataset``, ``num_params``, ``seeds``, ``runs`` with each run's per-split final
metrics, epochs and s/epoch, ``summary``, ``versions``, ``device``) and adds:

* ``commit``: the commit of the git work tree holding ``OUT_ROOT`` when collected (``+dirty``
  when its tracked files differ from it), or ``--commit``;
* ``command``: the main script's command line, every absolute path replaced by ``DIR``
  (``OUT`` for ``--out_dir``);
* ``machine``: the CPU model and its hardware threads, or the GPU, of the machine that collects
  (run ``collect`` where the runs ran, or describe it with ``--machine``);
* ``io``: the net's input/output sizes (from the first seed's checkpoint), so that ``num_params``
  can be recomputed from the config without the data;
* ``seeds_protocol``: the number of seeds the paper's protocol asks for (``--runs``, 5). A
  record holds every seed its command asked for (``seeds``, one run each); ``len(seeds)`` below
  ``seeds_protocol`` is a partial cell (ZINC here: one seed by design).

No machine paths and no host names are kept. Cells of :data:`CHECKPOINT_DATASETS` also get the
best checkpoint of their first seed, ``<into>/<table>/<cell id>.pt``, with its config's folders
reset to the defaults (``evaluate_checkpoint.py FILE --data_dir DIR`` evaluates it).

Collecting is idempotent: a record is rewritten only when the chosen result says something
else, and never replaced by one with fewer seeds unless ``--replace`` is given; one line per
cell says what happened. Every record is checked before it is written (:func:`record_problem`);
``check`` checks every committed record the same way. Exit codes: 0, 1 a record was refused
(one line naming the file), 2 bad input.
"""

from __future__ import annotations

if not __package__:  # run as a file: python scripts/records.py
    import _project_root  # noqa: F401

import contextlib
import io
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from train.interrupts import startup

with startup():
    import torch

    from nets.gnn_net import NetIO
    from nets.registry import build_net, count_parameters
    from scripts.cli import MAX_RUNS, ArgumentParser, UsageError, int_in
    from scripts.make_tables import EXPECTED_RUNS, CellResult, collect, load_tables
    from scripts.sweep import ROOT, TABLES, Cell, Table, requested_runs, resolve, script_config
    from train.checkpoint import CheckpointError, load_checkpoint
    from train.errors import run_tool
    from train.results import write_atomic

RESULTS = ROOT / "results"
FORMAT = 1
#: Datasets whose cells also get their first seed's best checkpoint (small nets, ~0.4 MB each).
CHECKPOINT_DATASETS = ("ZINC",)
MAX_CHECKPOINT_BYTES = 1_000_000
#: Fields of a main script's ``results.json`` that a record keeps as they are.
KEPT = ("model", "dataset", "task", "num_params", "seeds", "primary_metric", "higher_is_better",
        "summary", "versions", "device", "started", "finished")
#: Fields of each run that a record keeps (the checkpoint's file name is dropped).
RUN_KEPT = ("seed", "epochs", "best_epoch", "stop_reason", "s_per_epoch", "total_time_s", "final",
            "compiled")
#: Options of a command line whose value is a folder of this machine.
PATH_OPTIONS = {"--out_dir": "OUT"}
#: An absolute or home-relative path inside a text (a folder of some machine).
LOCAL_PATH = re.compile(r"(?:^|[\s\"'=(,])([~/][\w.~-]+(?:/[\w.~-]*)*)")


class RecordError(ValueError):
    """A record that does not hold what it claims; the message starts with the file."""


# ------------------------------------------------------------------------------- making
def generic_command(command: Sequence[str]) -> str:
    """``python SCRIPT ...`` with every absolute path replaced: ``DIR`` (``OUT`` for
    ``--out_dir``), so that no folder of this machine is recorded."""
    out, previous = ["python"], ""
    for arg in command:
        if os.path.isabs(os.path.expanduser(arg)):
            arg = PATH_OPTIONS.get(previous, "DIR")
        out.append(arg)
        previous = arg
    return shlex.join(out)


def git_commit(folder: Path) -> str | None:
    """HEAD of the git work tree holding ``folder``, ``+dirty`` when tracked files differ."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def describe_machine(device: str) -> str:
    """The CPU model and hardware threads, or the GPU, of this machine (no host name)."""
    if device.startswith("cuda"):
        name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "model unknown"
        return f"GPU: {name}"
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"CPU: {model}, {os.cpu_count()} hardware threads"


def make_record(table: Table, res: CellResult, data: dict, runs: int, commit: str | None,
                machine: str | None) -> dict[str, Any]:
    """The record of a cell from its chosen ``results.json`` (``data``, at ``res.path``)."""
    record: dict[str, Any] = {"format": FORMAT, "table": table.name, "cell": res.cell.id}
    record.update({key: data[key] for key in KEPT if key in data})
    record["seeds_protocol"] = runs
    record["runs"] = [{k: r[k] for k in RUN_KEPT if k in r} for r in data.get("runs", [])]
    record["io"] = _first_checkpoint(res, data)["io"]
    record["command"] = generic_command(data.get("command") or [])
    record["commit"] = commit or git_commit(res.path.parent) or "unknown"
    record["machine"] = machine or describe_machine(str(data.get("device", "cpu")))
    return record


def _first_checkpoint(res: CellResult, data: dict) -> dict[str, Any]:
    first = (data.get("runs") or [{}])[0]
    name = first.get("checkpoint") if isinstance(first, dict) else None
    if not name:
        raise RecordError(f"{res.path}: its first run names no checkpoint")
    return load_checkpoint(res.path.parent / "checkpoints" / name)


def portable_checkpoint(ckpt: dict[str, Any]) -> bytes:
    """A checkpoint's bytes with the config's folders reset to their defaults (``None``, and
    ``out/``), so that no folder of the machine that trained it is kept."""
    cfg = json.loads(json.dumps(ckpt["config"]))
    cfg["out_dir"] = "out/"
    for key in ("data_dir", "cache_dir"):
        if key in cfg.get("data", {}):
            cfg["data"][key] = None
    buffer = io.BytesIO()
    torch.save({**ckpt, "config": cfg}, buffer)
    return buffer.getvalue()


# ------------------------------------------------------------------------------- checking
def _config_of(command: str, dataset: str) -> dict[str, Any]:
    """The resolved config of a recorded command, parsed as its main script does."""
    return script_config(dataset, shlex.split(command)[2:])


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
    for key in ("model", "dataset"):
        if record.get(key) != getattr(cell, key):
            return f"{key} {record.get(key)!r}, but the cell {cell_id} is {getattr(cell, key)}"
    if record.get("table") != table or record.get("cell") != cell_id:
        return f"says it is {record.get('table')}/{record.get('cell')}"
    seeds, runs = record.get("seeds"), record.get("runs")
    if not isinstance(seeds, list) or not seeds or not isinstance(runs, list):
        return "no seeds or no runs"
    ran = [r.get("seed") if isinstance(r, dict) else None for r in runs]
    missing = [s for s in seeds if s not in ran]
    if missing or len(ran) != len(seeds):
        return (f"seed {missing[0]} has no run" if missing else
                f"{len(ran)} runs for {len(seeds)} seeds")
    if not all(isinstance(r.get("final"), dict) for r in runs):
        return "a run without final metrics"
    command = str(record.get("command", ""))
    if requested_runs(shlex.split(command)) != len(seeds):
        return f"its command asks for {requested_runs(shlex.split(command))} runs, " \
               f"it holds {len(seeds)}"
    try:
        cfg = _config_of(command, cell.dataset)
    except ValueError as err:
        return f"its command is not its main script's: {' '.join(str(err).split())}"
    if (cfg["model"], cfg["dataset"]) != (cell.model, cell.dataset):
        return f"its command's config is {cfg['model']} on {cfg['dataset']}, not {cell_id}"
    try:
        params = count_parameters(build_net(cfg["model"], NetIO.from_dict(record["io"]),
                                            cfg["net_params"]))
    except (KeyError, TypeError, ValueError) as err:
        return f"cannot rebuild its net ({' '.join(str(err).split())[:120]})"
    if record.get("num_params") != params:
        return f"#Param {record.get('num_params')}, but its config builds {params}"
    local = next((m.group(1) for s in _strings(record) if (m := LOCAL_PATH.search(s))), None)
    if local is not None:
        return f"holds a machine path ({local[:60]})"
    return None


def read_record(path: Path, cells: dict[str, Cell]) -> dict[str, Any]:
    """The checked record at ``<root>/<table>/<cell id>.json``; :class:`RecordError` (one line
    naming the file) when it is refused."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise RecordError(f"{path}: unreadable ({' '.join(str(err).split())})") from None
    why = record_problem(record, path.parent.name, path.stem, cells)
    if why:
        raise RecordError(f"{_shown(path)}: {why}")
    return record


def _shown(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(ROOT))
    return str(path)


def table_cells(table: str) -> dict[str, Cell]:
    return {c.id: c for c in load_tables([table])[0].cells}


def read_records(root: str | os.PathLike = RESULTS) -> dict[str, dict[str, dict]]:
    """Every record under ``root``: table -> cell id -> record, each checked (the first
    refused one raises :class:`RecordError`)."""
    out: dict[str, dict[str, dict]] = {}
    root = Path(root)
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        if folder.name not in TABLES:
            raise RecordError(f"{_shown(folder)}: not a table ({', '.join(TABLES)})")
        cells = table_cells(folder.name)
        out[folder.name] = {p.stem: read_record(p, cells) for p in sorted(folder.glob("*.json"))}
    return out


# ------------------------------------------------------------------------------- collecting
def _dump(record: dict) -> str:
    return json.dumps(record, indent=1, sort_keys=False) + "\n"


def collect_cell(table: Table, res: CellResult, into: Path, runs: int, commit: str | None,
                 machine: str | None, replace: bool) -> str:
    """Write one cell's record (and checkpoint); returns what happened, for one line."""
    if res.state not in ("ok", "partial"):
        return {"missing": "no result", "stale": "only results of another experiment"}.get(
            res.state, f"not complete ({res.state} {res.runs}/{runs})")
    data = json.loads(res.path.read_text())
    record = make_record(table, res, data, runs, commit, machine)
    why = record_problem(record, table.name, res.cell.id, {res.cell.id: res.cell})
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
        note = f", checkpoint {len(blob) / 1e6:.2f} MB"
        if len(blob) > MAX_CHECKPOINT_BYTES:
            note += " (over 1 MB)"
    write_atomic(path, _dump(record))
    return f"{'updated' if old is not None else 'written'} ({seeds}{note})"


def collect_records(results: str | os.PathLike, tables: Sequence[str], into: Path,
                    runs: int = EXPECTED_RUNS, extra: Sequence[str] = (),
                    commit: str | None = None, machine: str | None = None,
                    replace: bool = False, log=print) -> int:
    """Collect every cell of ``tables`` found under ``results``; returns the number of
    results refused (each named on stderr)."""
    refused, tally = 0, {}  # what happened -> how many cells
    for table in load_tables(tables):
        for (_, _), res in collect(table, resolve(results), runs, extra=extra).items():
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


# ------------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="write the records of a sweep's complete cells")
    c.add_argument("--results", required=True, help="the sweep's --out_root")
    c.add_argument("--tables", default="node,heterophily,graph",
                   help=f"comma-separated table names ({', '.join(TABLES)})")
    c.add_argument("--runs", type=int_in(1, MAX_RUNS), default=EXPECTED_RUNS,
                   help="seeds of the paper's protocol (default 5)")
    c.add_argument("--commit", help="the commit the runs used (default: the HEAD of the git "
                                     "work tree holding --results)")
    c.add_argument("--machine", help="what the runs ran on (default: this machine's CPU or GPU)")
    c.add_argument("--replace", action="store_true",
                   help="let a result with fewer seeds replace a record")
    for s in (c, sub.add_parser("check", help="check every record")):
        s.add_argument("--into", default=str(RESULTS), help="the records' folder")
    args = p.parse_args(argv)
    into = resolve(args.into)
    if args.command == "check":
        records = read_records(into)
        print(f"{sum(map(len, records.values()))} records, all consistent with their configs")
        return 0
    if not resolve(args.results).is_dir():
        raise UsageError(f"--results {args.results}: no such folder (the sweep's --out_root)")
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    unknown = [t for t in tables if t not in TABLES]
    if unknown or not tables:
        raise UsageError(f"--tables: {', '.join(unknown) or 'none given'}; the paper's tables "
                         f"are {', '.join(TABLES)}")
    refused = collect_records(args.results, tables, into, args.runs, (), args.commit,
                              args.machine, args.replace)
    return 1 if refused else 0


def _run(argv: Sequence[str] | None = None) -> int:
    try:
        return main(argv)
    except RecordError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(run_tool(_run))

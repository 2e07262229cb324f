"""Run the cells of one of the paper's tables: models × datasets × config overrides, 5 seeds each.

    python -m scripts.sweep TABLE [--gpus 0,1 | --jobs N] [--only PATTERN] [--dry-run]
        [--out_root out/reproduce] [--data_root datasets] [--data_dir ZINC=PATH ...]
        [--force] [--list] [--cell INDEX] [-- EXTRA ARGS FOR EVERY CELL]

TABLE is ``node``, ``heterophily``, ``graph``, ``ablation`` or ``depth`` (the cells are listed in
``scripts/tables/TABLE.yaml``) or the path of such a YAML file. Every cell is one invocation of
a main script (``--config ... --runs 5`` plus the cell's overrides) writing into
``<out_root>/<table>/<cell id>/``; its output goes to ``stdout.log`` there.

* Resuming: a cell is skipped when its folder already holds a ``results.json`` with status
  ``complete``, at least the requested number of runs and the same arguments (device and path
  options aside), so an interrupted sweep picks up where it stopped and a smoke run (``-- --epochs
  2``) is never mistaken for the real thing. ``--force`` reruns.
* Parallelism: ``--gpus 0,1,...`` runs one cell per GPU at a time, each pinned to its GPU with
  ``CUDA_VISIBLE_DEVICES`` (ids are those this process sees: under an inherited
  ``CUDA_VISIBLE_DEVICES=3,5``, ``--gpus 0,1`` means GPUs 3 and 5) and run as ``--gpu_id 0``;
  without it the cells run on the CPU (``--use_gpu False``), ``--jobs N`` at a time. Either
  way every cell gets ``OMP_NUM_THREADS = cores / cells at a time`` unless it is set.
* ``--list`` prints the cells with their index and state; ``--cell INDEX`` runs just that one
  (Slurm job arrays: ``scripts/slurm_reproduce.sbatch``).
* Paths in the YAML and on the command line are relative to the project root.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from train.cli import ArgumentParser
from train.results import refresh_status

ROOT = Path(__file__).resolve().parent.parent
TABLES_DIR = Path(__file__).resolve().parent / "tables"
TABLES = ("node", "heterophily", "graph", "ablation", "depth")
DEFAULT_RUNS = 5
# Options that may legitimately differ between a run and its resumption (devices, paths): they
# are ignored when deciding whether a finished result belongs to the cell as now configured.
_IGNORED_OPTIONS = ("--gpu_id", "--use_gpu", "--out_dir", "--data_dir", "--cache_dir")


class SweepError(ValueError):
    """A problem with a table file or the command line, with a message saying what."""


class Terminated(KeyboardInterrupt):
    """SIGTERM to the sweep: forwarded to the running cells, then handled like Ctrl-C."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


@dataclass
class Cell:
    """One experiment of a table (see the header of any ``scripts/tables/*.yaml``)."""

    id: str
    row: str
    column: str
    dataset: str
    model: str = ""
    script: str = ""
    config: str = ""
    data_dir: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    not_implemented: str | None = None


@dataclass
class Table:
    name: str
    title: str
    columns: list[dict[str, Any]]
    rows: list[str]
    cells: list[Cell]
    path: Path


def table_path(table: str) -> Path:
    """``scripts/tables/<table>.yaml`` for a table name, else ``table`` as a path."""
    if table in TABLES:
        return TABLES_DIR / f"{table}.yaml"
    return Path(table)


def cell_defaults(model: str, dataset: str) -> dict[str, str]:
    """What a cell need not state: its main script, its config file (the release's naming:
    ``configs/<task prefix>_<MODEL>_<DATASET>.json``) and its data folder under
    ``{data_root}`` (SBM graphs are generated into the root itself)."""
    from train.tasks import task_for_dataset

    task = task_for_dataset(dataset)
    prefix = "SBMs_node_clustering" if task.name == "SBMs_node_classification" else task.name
    short = dataset.removeprefix("SBM_")
    return {"script": f"main_{task.name}.py", "config": f"configs/{prefix}_{model}_{short}.json",
            "data_dir": "{data_root}" if dataset.startswith("SBM_") else
            f"{{data_root}}/{dataset}"}


def load_table(table: str) -> Table:
    """Read and check a table file; a cell's script, config and data folder default to
    :func:`cell_defaults` of its model and dataset."""
    import yaml

    path = table_path(table)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise SweepError(f"no table file {path} (tables: {', '.join(TABLES)})") from None
    except yaml.YAMLError as err:
        raise SweepError(f"{path}: invalid YAML ({err})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        raise SweepError(f"{path}: expected a mapping with a 'cells' list")
    cells, seen = [], set()
    known = set(Cell.__dataclass_fields__)
    for i, c in enumerate(raw["cells"]):
        if not isinstance(c, dict):
            raise SweepError(f"{path}: cell {i} is not a mapping")
        unknown = set(c) - known
        missing = {"id", "row", "column", "dataset"} - set(c)
        if not c.get("not_implemented"):
            missing |= {"model"} - set(c)
        if unknown or missing:
            raise SweepError(f"{path}: cell {c.get('id', i)}: unknown keys {sorted(unknown)}, "
                             f"missing {sorted(missing)}")
        if not c.get("not_implemented"):
            try:
                c = {**cell_defaults(c["model"], c["dataset"]), **c}
            except ValueError as err:
                raise SweepError(f"{path}: cell {c['id']}: {err}") from None
            if not (ROOT / c["config"]).is_file():
                raise SweepError(f"{path}: cell {c['id']}: no config {c['config']}")
        cell = Cell(**{k: v for k, v in c.items()})
        cell.row, cell.column = str(cell.row), str(cell.column)
        cell.overrides = dict(cell.overrides or {})
        cell.data = dict(cell.data or {})
        if cell.id in seen:
            raise SweepError(f"{path}: duplicate cell id {cell.id}")
        seen.add(cell.id)
        cells.append(cell)
    return Table(str(raw.get("table", path.stem)), str(raw.get("title", path.stem)),
                 list(raw.get("columns", [])), [str(r) for r in raw.get("rows", [])], cells, path)


def select(cells: Sequence[Cell], only: str | None) -> list[Cell]:
    """Cells whose id contains one of the comma-separated substrings of ``only``."""
    if not only:
        return list(cells)
    patterns = [p for p in only.split(",") if p]
    return [c for c in cells if any(p in c.id for p in patterns)]


# ------------------------------------------------------------------------------- commands
def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def resolve(path: str | os.PathLike) -> Path:
    """A path relative to the project root (absolute paths unchanged)."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else ROOT / p


def _shown(path: Path) -> str:
    """``path`` relative to the project root when inside it (the cells run in the root)."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def cell_dir(out_root: str | os.PathLike, table: str, cell: Cell) -> Path:
    return resolve(out_root) / table / cell.id


def data_dir_for(cell: Cell, data_root: str, data_dirs: dict[str, str]) -> str | None:
    """``--data_dir DATASET=PATH`` if given, else the cell's folder under ``data_root``.

    ``DATASET`` is the cell's dataset or the name of its default folder (a dataset derived from
    another one's files, such as SQUIRREL_FILTERED reading ``{data_root}/SQUIRREL``, follows
    ``--data_dir SQUIRREL=PATH``)."""
    if cell.dataset in data_dirs:
        return data_dirs[cell.dataset]
    if cell.data_dir is None:
        return None
    folder = Path(str(cell.data_dir)).name
    if folder in data_dirs and str(cell.data_dir) == f"{{data_root}}/{folder}":
        return data_dirs[folder]
    return str(cell.data_dir).format(data_root=data_root)


def build_command(cell: Cell, table: str, out_root: str, data_root: str = "datasets",
                  data_dirs: dict[str, str] | None = None, runs: int = DEFAULT_RUNS,
                  device: str | None = None, extra: Sequence[str] = (),
                  python: str = sys.executable) -> list[str]:
    """The command line of ``cell``: script, config, runs, output folder, data, overrides,
    device (``None``: CPU, else a GPU id) and the extra arguments, in that order (later
    options win in the main scripts)."""
    cmd = [python, cell.script, "--config", cell.config, "--runs", str(runs),
           "--out_dir", _shown(cell_dir(out_root, table, cell))]
    ddir = data_dir_for(cell, data_root, data_dirs or {})
    if ddir is not None:
        cmd += ["--data_dir", ddir]
    for key, value in cell.data.items():
        cmd += [f"--{key}", _fmt(value).format(data_root=data_root)]
    for key, value in cell.overrides.items():
        cmd += [f"--{key}", _fmt(value)]
    # a GPU cell sees only its own GPU (cell_env), which is then device 0
    cmd += ["--use_gpu", "False"] if device is None else ["--gpu_id", "0"]
    cmd += list(extra)
    return cmd


def parse_gpus(text: str, environ: dict[str, str] | None = None) -> list[str]:
    """The physical ids behind ``--gpus`` (ids as this process sees them), validated."""
    environ = os.environ if environ is None else environ
    ids = [g.strip() for g in text.split(",") if g.strip()]
    if not ids or not all(g.isdigit() for g in ids):
        raise SweepError(f"--gpus expects comma-separated GPU ids like 0,1, got {text!r}")
    if len(set(ids)) != len(ids):
        raise SweepError(f"--gpus names a GPU twice: {text!r}")
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return ids
    seen = [v.strip() for v in visible.split(",") if v.strip()]
    missing = [g for g in ids if int(g) >= len(seen)]
    if missing:
        raise SweepError(f"--gpus {text}: CUDA_VISIBLE_DEVICES={visible!r} leaves "
                         f"{len(seen)} GPU(s) visible (ids 0-{len(seen) - 1})")
    return [seen[int(g)] for g in ids]


def cell_env(base: dict[str, str], device: str | None) -> dict[str, str]:
    """The environment of a cell: pinned to its GPU (``device``: a physical id) or to none."""
    env = dict(base)
    if device is not None:
        env["CUDA_VISIBLE_DEVICES"] = device
    return env


def requested_runs(cmd: Sequence[str]) -> int:
    """The ``--runs`` value the main script will use (the last one given)."""
    runs = DEFAULT_RUNS
    for i, arg in enumerate(cmd[:-1]):
        if arg == "--runs":
            try:
                runs = int(cmd[i + 1])
            except ValueError:
                pass
    return runs


def signature(args: Sequence[str]) -> list[str]:
    """Arguments that define a result: the options after the script, minus devices/paths."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in _IGNORED_OPTIONS:
            skip = True
            continue
        out.append(arg)
    return out


# ------------------------------------------------------------------------------- results
def read_results(folder: Path) -> tuple[list[tuple[Path, dict]], list[str]]:
    """Every readable ``*/results.json`` below ``folder`` (one level, or the folder itself);
    problems (malformed JSON, not a mapping) are returned as messages, never raised. A
    ``running`` result whose process is gone is marked ``killed`` (:func:`refresh_status`)."""
    found, problems = [], []
    if not folder.is_dir():
        return found, problems
    candidates = sorted(folder.glob("*/results.json"))
    if (folder / "results.json").is_file():
        candidates.insert(0, folder / "results.json")
    for path in candidates:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            problems.append(f"{path}: unreadable ({type(err).__name__}: {err})")
            continue
        if not isinstance(data, dict) or not isinstance(data.get("runs", []), list):
            problems.append(f"{path}: not a results file (expected an object with 'runs')")
            continue
        found.append((path, refresh_status(path, data)))
    return found, problems


def newest_first(results: list[tuple[Path, dict]]) -> list[tuple[Path, dict]]:
    """Newest first: by the recorded start time, then folder name, then file time."""
    def key(item: tuple[Path, dict]) -> tuple[str, str, float]:
        path, data = item
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = 0.0
        return (str(data.get("started", "")), path.parent.name, mtime)

    return sorted(results, key=key, reverse=True)


def matches(data: dict, cmd: Sequence[str] | None) -> bool:
    """Whether a result was produced by ``cmd`` (results without a command line match)."""
    recorded = data.get("command")
    if cmd is None or not isinstance(recorded, list) or len(recorded) < 1:
        return True
    return signature([str(a) for a in recorded[1:]]) == signature(cmd[2:])


def cell_state(folder: Path, runs: int = DEFAULT_RUNS, cmd: Sequence[str] | None = None
               ) -> tuple[str, Path | None]:
    """``complete`` (skip it), ``partial``, ``running``, ``interrupted``, ``failed``,
    ``diverged``, ``killed``, ``stale`` (complete but with other arguments) or ``missing``, and
    the result file."""
    results, _ = read_results(folder)
    if not results:
        return "missing", None
    ordered = newest_first(results)
    for path, data in ordered:
        if data.get("status") == "complete" and len(data.get("runs", [])) >= runs \
                and matches(data, cmd):
            return "complete", path
    path, data = ordered[0]
    status = str(data.get("status", "unknown"))
    if status == "complete":
        return ("partial" if len(data.get("runs", [])) < runs else "stale"), path
    return status, path


# ------------------------------------------------------------------------------- running
def _log_header(log: Any, cmd: Sequence[str]) -> None:
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    log.write(f"\n===== {stamp} sweep.py: {shlex.join(cmd)}\n")
    log.flush()


def run_cell(cmd: list[str], folder: Path, env: dict[str, str],
             procs: dict[int, subprocess.Popen], lock: threading.Lock) -> int:
    """Run one cell in the project root, appending its output to ``<folder>/stdout.log``."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "stdout.log", "a") as log:
        _log_header(log, cmd)
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        with lock:
            procs[proc.pid] = proc
        try:
            return proc.wait()
        finally:
            with lock:
                procs.pop(proc.pid, None)


def run_cells(jobs: list[tuple[Cell, Path, Any]],
              make_cmd: Callable[[Cell, str | None], list[str]], devices: list[str | None],
              base_env: dict[str, str]) -> dict[str, int]:
    """Run ``jobs`` (cell, folder, _) on ``devices`` (one worker each); return codes by id."""
    work: queue.Queue = queue.Queue()
    for job in jobs:
        work.put(job)
    codes: dict[str, int] = {}
    procs: dict[int, subprocess.Popen] = {}
    lock = threading.Lock()

    def worker(device: str | None) -> None:
        while True:
            try:
                cell, folder, _ = work.get_nowait()
            except queue.Empty:
                return
            cmd = make_cmd(cell, device)
            where = "cpu" if device is None else f"gpu {device}"
            print(f"[{time.strftime('%H:%M:%S')}] start {cell.id} ({where}) -> {folder}",
                  flush=True)
            t0 = time.time()
            code = run_cell(cmd, folder, cell_env(base_env, device), procs, lock)
            codes[cell.id] = code
            state = "done" if code == 0 else f"FAILED (exit {code}, see {folder}/stdout.log)"
            print(f"[{time.strftime('%H:%M:%S')}] {state}: {cell.id} after "
                  f"{(time.time() - t0) / 60:.1f} min", flush=True)

    threads = [threading.Thread(target=worker, args=(d,), daemon=True) for d in devices]
    for t in threads:
        t.start()
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.5)
    except KeyboardInterrupt as err:
        # Ctrl-C: the children share our terminal's process group and got the same SIGINT.
        # SIGTERM (kill, a Slurm time limit) reached this process only: pass it on. Either way
        # the cells record their finished runs as "interrupted"; wait for them.
        forward = signal.SIGTERM if isinstance(err, Terminated) else signal.SIGINT
        print("interrupted: waiting for the running cells to save their results", flush=True)
        while not work.empty():
            work.get_nowait()
        with lock:
            alive = list(procs.values())
        for p in alive:
            if p.poll() is None:
                p.send_signal(forward)
        for p in alive:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.terminate()
        raise
    return codes


# ------------------------------------------------------------------------------- main
def parse_data_dirs(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        for part in item.split(","):
            if not part:
                continue
            name, sep, path = part.partition("=")
            if not sep or not name or not path:
                raise SweepError(f"--data_dir expects DATASET=PATH, got {part!r}")
            out[name.strip().upper()] = path.strip()
    return out


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        description="Run the cells of a table of the AutoGCN paper (see scripts/tables/).",
        epilog="Arguments after -- are passed to every cell, e.g. -- --epochs 2 --max_graphs 100")
    p.add_argument("table", help=f"one of {', '.join(TABLES)}, or a table YAML file")
    p.add_argument("--out_root", default="out/reproduce",
                   help="results go to OUT_ROOT/<table>/<cell id>/ (default out/reproduce)")
    p.add_argument("--data_root", default="datasets",
                   help="where the datasets live: SBM_* in DATA_ROOT, others in "
                        "DATA_ROOT/<DATASET> (default datasets)")
    p.add_argument("--data_dir", action="append", default=[], metavar="DATASET=PATH",
                   help="data folder of one dataset, e.g. ZINC=../shared/data/zinc (repeatable)")
    p.add_argument("--gpus", default=None,
                   help="comma-separated GPU ids; one cell per GPU at a time")
    p.add_argument("--jobs", type=int, default=1, help="parallel cells on the CPU (default 1)")
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="seeds per cell (default 5)")
    p.add_argument("--only", default=None, help="only cells whose id contains one of these "
                                                "comma-separated substrings")
    p.add_argument("--force", action="store_true", help="rerun cells that are complete")
    p.add_argument("--dry-run", "--dry_run", dest="dry_run", action="store_true",
                   help="print the commands, run nothing")
    p.add_argument("--list", action="store_true", help="print the cells (index, id, state)")
    p.add_argument("--cell", type=int, default=None, metavar="INDEX",
                   help="run only the cell with this index in --list (Slurm array task)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = build_parser().parse_args(argv)
    try:
        table = load_table(args.table)
        data_dirs = parse_data_dirs(args.data_dir)
    except SweepError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("error: --jobs must be at least 1", file=sys.stderr)
        return 2
    devices: list[str | None]
    if args.gpus:
        try:
            devices = list(parse_gpus(args.gpus))
        except SweepError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    else:
        devices = [None] * args.jobs
    cells = select(table.cells, args.only)
    if args.cell is not None:
        if not 0 <= args.cell < len(cells):
            print(f"error: --cell {args.cell} out of range (0..{len(cells) - 1})",
                  file=sys.stderr)
            return 2
        cells = [cells[args.cell]]
    if not cells:
        print(f"no cells of {table.name} match --only {args.only!r}", file=sys.stderr)
        return 2

    def make_cmd(cell: Cell, device: str | None) -> list[str]:
        return build_command(cell, table.name, args.out_root, args.data_root, data_dirs,
                             args.runs, device, extra)

    first = args.cell or 0
    jobs, todo = [], []
    for i, cell in enumerate(cells):
        folder = cell_dir(args.out_root, table.name, cell)
        if cell.not_implemented:
            state, path = "not implemented", None
        else:
            cmd = make_cmd(cell, devices[0])
            state, path = cell_state(folder, requested_runs(cmd), cmd)
        jobs.append((i + first, cell, folder, state))
        if cell.not_implemented or (state == "complete" and not args.force):
            continue
        todo.append((cell, folder, state))

    if args.list:
        for index, cell, _folder, state in jobs:
            print(f"{index:3d}  {cell.id:<28} {state}")
        return 0
    if args.dry_run:
        n_run = 0
        for index, cell, folder, state in jobs:
            if cell.not_implemented:
                print(f"# [{index}] {cell.id}: not implemented ({cell.not_implemented})")
                continue
            skip = state == "complete" and not args.force
            print(f"# [{index}] {cell.id}: {state}{' -> skip' if skip else ''}")
            if not skip:
                # devices are handed out as they free up; round robin is what a dry run can show
                device = devices[n_run % len(devices)]
                n_run += 1
                pin = "" if device is None else f"CUDA_VISIBLE_DEVICES={device} "
                print(pin + shlex.join(make_cmd(cell, device))
                      + f"  > {_shown(folder)}/stdout.log")
        print(f"# {len(todo)} of {len(jobs)} cell(s) of {table.name} to run")
        return 0

    skipped = [c.id for _, c, _, s in jobs if s == "complete" and not args.force]
    for _, c, _, _ in jobs:
        if c.not_implemented:
            print(f"not implemented, skipped: {c.id} ({c.not_implemented})")
    if skipped:
        print(f"complete, skipped ({len(skipped)}): {', '.join(skipped)}")
    if not todo:
        print(f"nothing to run: every cell of {table.name} is complete (--force reruns)")
        return 0
    env = dict(os.environ)
    if "OMP_NUM_THREADS" not in env:
        # one process per cell at a time (CPU jobs or GPUs): split the cores between them
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // len(devices)))
    print(f"{table.name}: running {len(todo)} cell(s) on "
          f"{'GPU ' + ','.join(d for d in devices if d) if args.gpus else 'CPU'} "
          f"({len(devices)} at a time), results in {resolve(args.out_root) / table.name}",
          flush=True)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        codes = run_cells(todo, make_cmd, devices, env)
    except KeyboardInterrupt as err:
        return 143 if isinstance(err, Terminated) else 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    failed = [cid for cid, code in codes.items() if code != 0]
    print(f"{table.name}: {len(codes) - len(failed)} cell(s) done, {len(failed)} failed"
          + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    sys.exit(main())

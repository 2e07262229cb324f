"""Run the cells of one of the paper's tables: models × datasets × config overrides, 5 seeds each.

    python -m scripts.sweep TABLE [--gpus 0,1 | --jobs N] [--only PATTERN] [--dry-run]
        [--out_root out/reproduce] [--data_root datasets] [--data_dir ZINC=PATH ...]
        [--force] [--list] [--cell INDEX] [-- EXTRA ARGS FOR EVERY CELL]

TABLE is ``node``, ``heterophily``, ``graph``, ``ablation``, ``depth`` (the paper's), ``successors``
or ``successors_published`` (AutoGCN's successors, docs/reproducing.md) (the cells are listed in
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
* ``--gpus`` is refused (exit 2) where this process sees no such CUDA GPU, since a cell would
  fall back to the CPU; where a cell ran is reported from its ``results.json`` (``device``),
  never from what was asked for.
* Two sweeps on one ``--out_root``: a cell is claimed (an exclusive lock on
  ``<cell folder>/.sweep.claim``, naming the process) while it runs; another sweep skips it and
  says who holds it. The kernel drops the lock when its process ends; the next sweep takes over
  the file, with one line.
* ``--list`` prints the cells with their index and state; ``--cell INDEX`` runs just that one
  (Slurm job arrays: ``scripts/slurm_reproduce.sbatch``).
* Exit codes: 0 every cell done or skipped, 1 a cell failed or could not be started (one
  ``error:`` line lists them; a full disk names the folder and starts no more cells), 2 bad
  input (found before any cell runs: table, ``--only``, ``--gpus``, ``--runs``, ``--data_dir``,
  ``--out_root``, and the cells' commands with the extra arguments, parsed as the main scripts
  do), 130 Ctrl-C, 143 SIGTERM.
* Paths in the YAML and on the command line are relative to the project root.
"""

from __future__ import annotations

if not __package__:  # run as a file: python scripts/sweep.py
    import _project_root  # noqa: F401

import argparse
import datetime
import errno
import fcntl
import json
import os
import queue
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from train.interrupts import startup

with startup("nothing was written"):  # Ctrl-C or SIGTERM while torch loads: one line
    from train import interrupts
    from train.cli import (
        MAX_RUNS,
        MAX_WORKERS,
        ArgumentParser,
        int_in,
        output_problem,
        run_tool,
    )
    from train.results import refresh_status

ROOT = Path(__file__).resolve().parent.parent
TABLES_DIR = Path(__file__).resolve().parent / "tables"
TABLES = ("node", "heterophily", "graph", "ablation", "depth")
# Not tables of the paper, but run and made the same way by name: AutoGCN's successors at equal
# budgets, and under their own papers' protocol (docs/reproducing.md).
EXTRA_TABLES = ("successors", "successors_published")
DEFAULT_RUNS = 5
# Options that may legitimately differ between a run and its resumption (devices, paths): they
# are ignored when deciding whether a finished result belongs to the cell as now configured.
# --runs too: the number of runs a result holds is compared on its own (more runs than asked for
# is still complete; fewer is partial). --compile changes how a result is computed, not what
# (float32 rounding: docs/performance.md).
_IGNORED_OPTIONS = ("--gpu_id", "--use_gpu", "--out_dir", "--data_dir", "--cache_dir", "--runs",
                    "--compile")
# In every cell folder while a sweep runs the cell: an exclusive lock held by that sweep (see
# claim_cell), so that two sweeps on one out_root never run the same cell at once.
CLAIM_FILE = ".sweep.claim"
# Options of the main scripts that the sweep sets itself and a cell's extra arguments may not.
_SWEEP_OPTIONS = ("--out_dir", "--config")


class SweepError(ValueError):
    """A problem with a table file or the command line, with a message saying what."""


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
    if table in TABLES or table in EXTRA_TABLES:
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
    except (yaml.YAMLError, ValueError, RecursionError) as err:  # also not UTF-8, too deep
        raise SweepError(f"{path}: invalid YAML ({' '.join(str(err).split())})") from None
    except OSError as err:  # a folder, an unreadable file
        raise SweepError(f"cannot read the table {path}: {err.strerror or err}") from None
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
    if not seen:
        raise SweepError(f"--gpus {text} but no CUDA GPU is visible (CUDA_VISIBLE_DEVICES is "
                         "empty; leave out --gpus to run the cells on the CPU)")
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
        except (OSError, ValueError, RecursionError) as err:  # RecursionError: deep nesting
            problems.append(f"{path}: unreadable ({type(err).__name__}: {err})")
            continue
        if not isinstance(data, dict) or not isinstance(data.get("runs", []), list):
            problems.append(f"{path}: not a results file (expected an object with 'runs')")
            continue
        try:
            data = refresh_status(path, data)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            # a dead "running" result whose runs cannot be summarised: another program's file
            problems.append(f"{path}: malformed results ({type(err).__name__}: {err})")
            continue
        found.append((path, data))
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


def _options(args: Sequence[str]) -> list[str]:
    """``--key value`` pairs (and bare words) of an argument list, each as one string."""
    out: list[str] = []
    for arg in args:
        if out and out[-1].startswith("--") and " " not in out[-1] and not arg.startswith("--"):
            out[-1] += f" {arg}"
        else:
            out.append(arg)
    return out


def mismatch(data: dict, cmd: Sequence[str] | None, cell: Cell | None = None) -> str | None:
    """Why a result (a ``results.json``) is not the cell's, or ``None`` when it is.

    It is not when it records another model or dataset than ``cell`` states, or when its
    command line differs from ``cmd`` (the cell's command, as :func:`build_command` makes it)
    in anything but devices, paths and the number of runs (:func:`signature`). What a result
    does not record is not compared. The sweep (resuming, ``--list``) and ``make_tables`` use
    this one test, so a result the sweep would rerun is never shown as the cell's."""
    for key in ("model", "dataset"):
        want, got = getattr(cell, key, "") if cell is not None else "", data.get(key)
        if want and got is not None and str(got) != want:
            return f"{key} {got}, not {want}"
    recorded = data.get("command")
    if cmd is None or not isinstance(recorded, list) or len(recorded) < 1:
        return None
    got, want = _options(signature([str(a) for a in recorded[1:]])), _options(signature(cmd[2:]))
    if got == want:
        return None
    extra = [o for o in got if o not in want]
    missing = [o for o in want if o not in got]
    parts = ([f"ran with {' '.join(extra)}"] if extra else []) + \
        ([f"without {' '.join(missing)}"] if missing else [])
    return "other arguments: " + ("; ".join(parts) or "in another order")


def matches(data: dict, cmd: Sequence[str] | None, cell: Cell | None = None) -> bool:
    """Whether a result is the cell's (:func:`mismatch` finds no difference)."""
    return mismatch(data, cmd, cell) is None


def cell_state(folder: Path, runs: int = DEFAULT_RUNS, cmd: Sequence[str] | None = None,
               cell: Cell | None = None) -> tuple[str, Path | None]:
    """``complete`` (skip it), ``partial``, ``running``, ``interrupted``, ``failed``,
    ``diverged``, ``killed``, ``stale`` (complete but another model, dataset or arguments:
    :func:`mismatch`) or ``missing``, and the result file."""
    results, _ = read_results(folder)
    if not results:
        return "missing", None
    ordered = newest_first(results)
    for path, data in ordered:
        if data.get("status") == "complete" and len(data.get("runs", [])) >= runs \
                and matches(data, cmd, cell):
            return "complete", path
    path, data = ordered[0]
    status = str(data.get("status", "unknown"))
    if status == "complete":
        partial = len(data.get("runs", [])) < runs and matches(data, cmd, cell)
        return ("partial" if partial else "stale"), path
    return status, path


# ------------------------------------------------------------------------------- claims
@dataclass
class Claim:
    """A cell this process runs: it holds an exclusive lock on ``<cell folder>/.sweep.claim``.

    The lock is the claim. The kernel drops it when the process ends, however it ends, so a
    crash never leaves a cell claimed; its file (naming the holder, for the messages of the
    sweeps that skip the cell) may stay behind, and the next sweep takes it over, saying so."""

    path: Path
    fd: int

    def release(self) -> None:
        try:
            if os.stat(self.path).st_ino == os.fstat(self.fd).st_ino:
                self.path.unlink()
        except OSError:
            pass  # gone already, or a read-only folder: the lock goes with the descriptor
        finally:
            os.close(self.fd)


def _holder(fd: int) -> str:
    """Who a claim file names: ``pid P on host H since T`` ("" for an empty file)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return ""
    if not isinstance(info, dict) or "pid" not in info:
        return ""
    return f"pid {info['pid']} on host {info.get('host')} since {info.get('since')}"


def _lock(fd: int, tries: int = 5) -> bool:
    """An exclusive lock on ``fd`` without waiting for a holder; a few quick retries let a
    ``--list`` that looks at the claim (a shared lock held for microseconds) pass."""
    for attempt in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < tries:
                time.sleep(0.02)
    return False


def claim_cell(folder: Path) -> tuple[Claim | None, str]:
    """Claim a cell folder for this process (``fcntl.flock`` on its claim file, never waiting).

    ``(claim, "")``; ``(claim, note)`` after taking over the claim file of a process that ended
    without releasing it; ``(None, holder)`` when another process holds the claim. The lock is
    taken on the file that is in the folder at that moment (a claim released and removed while
    we opened it is retried), so two sweeps can never both hold one cell."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CLAIM_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        locked = False
        try:
            if not _lock(fd):
                holder = _holder(fd) or "another process"
                os.close(fd)
                return None, holder
            locked = True
            try:
                current = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            if not current:
                os.close(fd)
                continue
            previous = _holder(fd)
            info = {"pid": os.getpid(), "host": socket.gethostname(),
                    "since": time.strftime("%Y-%m-%d %H:%M:%S")}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except BaseException:  # e.g. a full disk: no claim, and no claim file left behind
            try:
                if locked and os.stat(path).st_ino == os.fstat(fd).st_ino:
                    path.unlink()
                os.close(fd)
            except OSError:
                pass
            raise
        note = f"took over the claim of {previous}, which has ended" if previous else ""
        return Claim(path, fd), note


def claim_holder(folder: Path) -> str | None:
    """Who holds the claim of a cell folder now (``None``: nobody), without claiming it."""
    try:
        fd = os.open(folder / CLAIM_FILE, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(fd) or "another process"
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


# ------------------------------------------------------------------------------- running
def result_device(folder: Path, cmd: Sequence[str], cell: Cell | None, since: float
                  ) -> str | None:
    """The device the cell's newest result written since ``since`` (a ``time.time()``) records
    having used (``results.json``'s ``device``: ``cpu``, ``cuda:0``), or ``None``."""
    results, _ = read_results(folder)
    for path, data in newest_first(results):
        try:
            fresh = path.stat().st_mtime >= since - 1
        except OSError:
            fresh = False
        if fresh and matches(data, cmd, cell):
            return str(data["device"]) if data.get("device") else None
    return None


def ran_on(used: str | None, gpu: str | None) -> str:
    """Where a cell ran, from its result (never from what was asked for)."""
    if used is None:
        return "device not recorded in results.json"
    if used.startswith("cuda"):
        return f"on {used}" + (f" (GPU {gpu})" if gpu is not None else "")
    if gpu is not None:
        return f"on {used}, NOT on GPU {gpu}: the cell found no usable GPU (see its stdout.log)"
    return f"on {used}"


def _alive_here(path: Path | None) -> bool:
    """Whether a ``running`` result belongs to a live process of this machine
    (:func:`refresh_status` has marked dead ones ``killed``)."""
    try:
        data = json.loads(path.read_text()) if path is not None else {}
    except (OSError, ValueError):
        return False
    return data.get("status") == "running" and data.get("host") == socket.gethostname()


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


def _stamp() -> str:
    return time.strftime("%H:%M:%S")


def run_cells(jobs: list[tuple[Cell, Path, Any]],
              make_cmd: Callable[[Cell, str | None], list[str]], devices: list[str | None],
              base_env: dict[str, str], force: bool = False,
              used: dict[str, str | None] | None = None) -> dict[str, int | str]:
    """Run ``jobs`` (cell, folder, state when planned) on ``devices`` (one worker each).

    Returns, by cell id, the exit code of each cell that ran (1 where the sweep itself could not
    run it), or why it was not run: claimed by another sweep (:func:`claim_cell`), completed by
    one meanwhile, or still running in a live process. Cells never started (a full disk stops
    the sweep) are absent. ``used`` receives the device each finished cell's result records."""
    work: queue.Queue = queue.Queue()
    for job in jobs:
        work.put(job)
    codes: dict[str, int | str] = {}
    procs: dict[int, subprocess.Popen] = {}
    lock = threading.Lock()
    stop = threading.Event()  # a full disk: start no more cells

    def run_job(cell: Cell, folder: Path, planned: Any, device: str | None) -> int | str:
        cmd = make_cmd(cell, device)
        claim, note = claim_cell(folder)
        if claim is None:
            return f"claimed by {note} (another sweep runs it)"
        try:
            if note:
                print(f"[{_stamp()}] {cell.id}: {note}", flush=True)
            state, path = cell_state(folder, requested_runs(cmd), cmd, cell)
            if state == "complete" and (not force or planned != "complete"):
                return "completed meanwhile by another sweep"
            if state == "running" and _alive_here(path):
                return f"still running in another process ({path})"
            asked = "CPU" if device is None else f"GPU {device} requested"
            print(f"[{_stamp()}] start {cell.id} ({asked}) -> {folder}", flush=True)
            t0 = time.time()
            code = run_cell(cmd, folder, cell_env(base_env, device), procs, lock)
            if code == 0:
                device_used = result_device(folder, cmd, cell, t0)
                if used is not None:
                    used[cell.id] = device_used
                state = f"done {ran_on(device_used, device)}"
            else:
                state = f"FAILED (exit {code}, see {folder}/stdout.log)"
            print(f"[{_stamp()}] {cell.id} {state}, after {(time.time() - t0) / 60:.1f} min",
                  flush=True)
            return code
        finally:
            claim.release()

    def worker(device: str | None) -> None:
        while not stop.is_set():
            try:
                cell, folder, planned = work.get_nowait()
            except queue.Empty:
                return
            try:
                codes[cell.id] = run_job(cell, folder, planned, device)
            except OSError as err:  # the cell's folder, log or claim cannot be written
                codes[cell.id] = 1
                if err.errno in (errno.ENOSPC, errno.EDQUOT):
                    stop.set()
                    print(f"error: disk full: cannot write in {folder} ({cell.id}); free some "
                          "space there and rerun the sweep (no more cells are started)",
                          file=sys.stderr, flush=True)
                else:
                    print(f"error: {cell.id}: cannot write in {folder}: "
                          f"{err.strerror or err}", file=sys.stderr, flush=True)
            except Exception as err:  # never let one cell end the sweep silently
                codes[cell.id] = 1
                text = " ".join(str(err).split()) or type(err).__name__
                print(f"error: {cell.id}: the sweep could not run it: "
                      f"{type(err).__name__}: {text}", file=sys.stderr, flush=True)

    threads = [threading.Thread(target=worker, args=(d,), daemon=True) for d in devices]
    for t in threads:
        t.start()
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.5)
            interrupts.check()  # Ctrl-C / SIGTERM only set a flag (train.interrupts)
    except KeyboardInterrupt as err:
        # Pass the signal on: SIGTERM (kill, a Slurm time limit) may have reached this process
        # only. A cell that got it already (Ctrl-C reaches the terminal's whole process group)
        # takes the repeat as the same request. The cells record their finished runs as
        # "interrupted"; wait for them.
        request = interrupts.as_interrupted(err)  # (`stop` is the workers' event)
        forward = request.signum
        print(f"{request.word}: waiting for the running cells to save their results", flush=True)
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


# ------------------------------------------------------------------------------- checks
def parse_data_dirs(items: Sequence[str]) -> dict[str, str]:
    """``--data_dir DATASET=PATH`` entries by dataset, checked: a known dataset name, given
    once, and a path that is not a file (a missing folder is allowed: some loaders download
    into it, SBM graphs are generated there)."""
    from train.tasks import TASKS

    known = sorted({d for task in TASKS.values() for d in task.datasets})
    out: dict[str, str] = {}
    for item in items:
        for part in item.split(","):
            if not part.strip():
                continue
            name, sep, path = part.partition("=")
            name, path = name.strip().upper(), path.strip()
            if not sep or not name or not path:
                raise SweepError(f"--data_dir expects DATASET=PATH, got {part!r}")
            if name not in known:
                raise SweepError(f"--data_dir {part}: unknown dataset {name}; known: "
                                 f"{', '.join(known)}")
            if out.get(name, path) != path:
                raise SweepError(f"--data_dir gives {name} twice ({out[name]} and {path})")
            if resolve(path).exists() and not resolve(path).is_dir():
                raise SweepError(f"--data_dir {part}: {path} is a file, not a data folder")
            out[name] = path
    return out


def select_only(cells: Sequence[Cell], only: str | None, table: str) -> list[Cell]:
    """:func:`select`, with every pattern of ``--only`` required to match some cell (a typo
    would otherwise quietly drop cells)."""
    if only is None:
        return list(cells)
    patterns = [p.strip() for p in only.split(",") if p.strip()]
    if not patterns:
        raise SweepError(f"--only {only!r} names no pattern; give cell id substrings, "
                         "e.g. --only ZINC,AUTOGCN")
    unmatched = [p for p in patterns if not any(p in c.id for c in cells)]
    if unmatched:
        raise SweepError(f"--only {','.join(unmatched)} matches no cell of {table} (see "
                         f"--list; ids like {cells[0].id if cells else '?'})")
    return select(cells, ",".join(patterns))


def cuda_device_count() -> int:
    """The CUDA GPUs this process can use (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_gpus(text: str) -> None:
    """:class:`SweepError` unless every id of ``--gpus`` is a CUDA GPU visible here: a cell
    given a GPU that is not there would run on the CPU (the main scripts fall back to it)."""
    count = cuda_device_count()
    if count == 0:
        raise SweepError(f"--gpus {text} but no CUDA GPU is visible (leave out --gpus to run "
                         "the cells on the CPU, --jobs N at a time)")
    absent = [g for g in text.split(",") if g.strip() and int(g) >= count]
    if absent:
        raise SweepError(f"--gpus {text}: {count} CUDA GPU(s) visible here (ids 0-{count - 1})")


def check_extra(extra: Sequence[str]) -> None:
    """:class:`SweepError` for arguments after ``--`` that the sweep sets itself."""
    for option in _SWEEP_OPTIONS:
        if option in extra:
            raise SweepError(f"{option} after --: the sweep sets it for every cell "
                             "(--out_root moves the results; a cell's config is in its table)")


def check_command(cell: Cell, cmd: Sequence[str]) -> None:
    """:class:`SweepError` unless the cell's main script accepts ``cmd``: parsed and resolved
    as the script does (config file, overrides, ranges), nothing loaded or run, so a bad value
    after ``--`` stops the sweep before its first cell rather than failing every cell."""
    import contextlib
    import io

    from train.runner import build_parser as script_parser
    from train.runner import resolve_config
    from train.tasks import task_for_dataset

    task = task_for_dataset(cell.dataset)
    parser = script_parser(task, "")
    parser.prog = cell.script
    messages = io.StringIO()
    try:
        with contextlib.redirect_stderr(messages), contextlib.redirect_stdout(messages):
            args = parser.parse_args(list(cmd[2:]))
        if args.config:
            args.config = str(resolve(args.config))
        resolve_config(task, args)
    except SystemExit:
        text = messages.getvalue().strip().splitlines()
        why = text[-1].removeprefix("error: ") if text else "not accepted by its main script"
        raise SweepError(f"cell {cell.id}: {why}") from None
    except ValueError as err:  # ConfigError and the data options' own checks
        raise SweepError(f"cell {cell.id}: {' '.join(str(err).split())}") from None


def check_out_root(out_root: str, writing: bool) -> None:
    """:class:`SweepError` when ``--out_root`` is a file (or, before running, cannot be
    written); ``--list`` and ``--dry-run`` read a results folder that may be read-only."""
    problem = output_problem(resolve(out_root) if out_root.strip() else out_root, "folder")
    if problem and (writing or "is a file" in problem or "must not be empty" in problem):
        raise SweepError(f"--out_root: {problem}")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        description="Run the cells of a table of the AutoGCN paper (see scripts/tables/).",
        epilog="Arguments after -- are passed to every cell, e.g. -- --epochs 2 --max_graphs "
               "100. Exit codes: 0 every cell done (or skipped), 1 a cell failed or the sweep "
               "could not run it, 2 bad input, 130 Ctrl-C, 143 SIGTERM.")
    p.add_argument("table", help=f"one of {', '.join(TABLES + EXTRA_TABLES)}, or a table "
                                 "YAML file")
    p.add_argument("--out_root", default="out/reproduce",
                   help="results go to OUT_ROOT/<table>/<cell id>/ (default out/reproduce)")
    p.add_argument("--data_root", default="datasets",
                   help="where the datasets live: SBM_* in DATA_ROOT, others in "
                        "DATA_ROOT/<DATASET> (default datasets)")
    p.add_argument("--data_dir", action="append", default=[], metavar="DATASET=PATH",
                   help="data folder of one dataset, e.g. ZINC=DIR (repeatable)")
    p.add_argument("--gpus", default=None,
                   help="comma-separated ids of CUDA GPUs visible here; one cell per GPU at a "
                        "time (refused where no GPU is visible)")
    p.add_argument("--jobs", type=int_in(1, MAX_WORKERS), default=None,
                   help="parallel cells on the CPU (default 1; not with --gpus)")
    p.add_argument("--runs", type=int_in(1, MAX_RUNS), default=DEFAULT_RUNS,
                   help="seeds per cell (default 5)")
    p.add_argument("--only", default=None, help="only cells whose id contains one of these "
                                                "comma-separated substrings")
    p.add_argument("--force", action="store_true", help="rerun cells that are complete")
    p.add_argument("--dry-run", "--dry_run", dest="dry_run", action="store_true",
                   help="print the commands, run nothing")
    p.add_argument("--list", action="store_true",
                   help="print the cells (index, id, state, and who claims a running one)")
    p.add_argument("--cell", type=int_in(0), default=None, metavar="INDEX",
                   help="run only the cell with this index in --list (Slurm array task)")
    return p


def plan(args: argparse.Namespace, extra: list[str]
         ) -> tuple[Table, list[Cell], dict[str, str], list[str | None]]:
    """The table, its selected cells, the data folders and the devices, every argument
    checked (:class:`SweepError` on the first problem) before anything is written."""
    table = load_table(args.table)
    writing = not (args.list or args.dry_run)
    check_out_root(args.out_root, writing)
    if not args.data_root.strip() or resolve(args.data_root).is_file():
        what = "a file" if args.data_root.strip() else "empty"
        raise SweepError(f"--data_root {args.data_root!r} is {what}; give the datasets' folder")
    data_dirs = parse_data_dirs(args.data_dir)
    check_extra(extra)
    devices: list[str | None]
    if args.gpus is not None:
        if args.jobs is not None:
            raise SweepError("--jobs is for CPU cells; with --gpus one cell runs per GPU")
        devices = list(parse_gpus(args.gpus))
        if writing:
            check_gpus(args.gpus)
    else:
        devices = [None] * (args.jobs or 1)
    cells = select_only(table.cells, args.only, table.name)
    if args.cell is not None:
        if args.cell >= len(cells):
            raise SweepError(f"--cell {args.cell} out of range (0..{len(cells) - 1})")
        cells = [cells[args.cell]]
    for cell in cells:
        if not cell.not_implemented:
            check_command(cell, build_command(cell, table.name, args.out_root, args.data_root,
                                              data_dirs, args.runs, devices[0], extra))
    return table, cells, data_dirs, devices


# ------------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = build_parser().parse_args(argv)
    try:
        table, cells, data_dirs, devices = plan(args, extra)
    except SweepError as err:
        print(f"error: {err}", file=sys.stderr)
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
            state, path = cell_state(folder, requested_runs(cmd), cmd, cell)
        jobs.append((i + first, cell, folder, state))
        if cell.not_implemented or (state == "complete" and not args.force):
            continue
        todo.append((cell, folder, state))

    if args.list:
        for index, cell, folder, state in jobs:
            holder = None if cell.not_implemented else claim_holder(folder)
            print(f"{index:3d}  {cell.id:<28} {state}"
                  + (f" (claimed by {holder})" if holder else ""))
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
    where = "the CPU" if args.gpus is None else f"--gpus {args.gpus}"
    print(f"{table.name}: running {len(todo)} cell(s) on {where} ({len(devices)} at a time), "
          f"results in {resolve(args.out_root) / table.name}", flush=True)
    used: dict[str, str | None] = {}
    try:
        with interrupts.handle_interrupts(), interrupts.deferred():
            codes = run_cells(todo, make_cmd, devices, env, args.force, used)
    except KeyboardInterrupt as err:  # one line, as every entry point (train/cli.py)
        print(f"{interrupts.as_interrupted(err).word}: finished cells and runs are kept in "
              f"{_shown(resolve(args.out_root) / table.name)}; rerunning resumes",
              file=sys.stderr)
        return interrupts.exit_code(err)
    return summarise(table.name, todo, codes, used, args.gpus is not None)


def summarise(table: str, todo: Sequence[tuple[Cell, Path, Any]], codes: dict[str, int | str],
              used: dict[str, str | None], gpus: bool) -> int:
    """Print what happened to every cell; the sweep's exit code: 1 when a cell failed or was
    never started, else 0. Where a cell ran is what its result records."""
    for cid, code in codes.items():
        if isinstance(code, str):
            print(f"skipped {cid}: {code}")
    done = [cid for cid, code in codes.items() if code == 0]
    failed = [f"{cid} (exit {code})" for cid, code in codes.items()
              if isinstance(code, int) and code != 0]
    never = [cell.id for cell, _, _ in todo if cell.id not in codes]
    on_cpu = [cid for cid in done if gpus and not str(used.get(cid) or "").startswith("cuda")]
    print(f"{table}: {len(done)} cell(s) done, {len(failed)} failed, "
          f"{len(codes) - len(done) - len(failed)} skipped"
          + (f", {len(never)} not started" if never else "")
          + (f"; results not recorded on a GPU although --gpus was given: "
             f"{', '.join(on_cpu)}" if on_cpu else ""),
          flush=True)
    if failed or never:
        parts = ([f"{len(failed)} cell(s) failed: {', '.join(failed)}"] if failed else []) + \
            ([f"{len(never)} not started: {', '.join(never)}"] if never else [])
        print(f"error: {table}: {'; '.join(parts)} (see each cell's stdout.log; rerunning "
              "resumes)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    sys.exit(run_tool(main))

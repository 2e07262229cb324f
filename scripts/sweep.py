"""Run the cells of one of the paper's tables: models × datasets × config overrides, 5 seeds each.

    python -m scripts.sweep TABLE [--gpus 0,1 [--per_gpu N] | --jobs N] [--cell_memory GIB]
        [--only PATTERN] [--dry-run]
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
  2``) is never mistaken for the real thing. ``--force`` reruns. A cell whose newest run
  stopped unfinished (interrupted, killed, failed) is continued with ``--resume`` from its last
  finished epoch (:attr:`train.run_folder.Latest.resume_dir`).
* Parallelism (:mod:`scripts.scheduler`): ``--gpus 0,1,...`` runs one cell per GPU at a time,
  pinned with ``CUDA_VISIBLE_DEVICES`` (ids as this process sees them: under an inherited
  ``CUDA_VISIBLE_DEVICES=3,5``, ``--gpus 0,1`` means GPUs 3 and 5) and run as ``--gpu_id 0``;
  without it the cells run on the CPU (``--use_gpu False``), ``--jobs N`` at a time. ``--per_gpu
  N`` runs N cells at once on each GPU. Several cells on one device pass a memory guard (another
  starts only while ``--cell_memory`` GiB are free there; one that runs out of memory beside
  others is queued again, with one cell fewer on its device), each decision one ``memory
  guard:`` line. Every cell gets ``OMP_NUM_THREADS = cores / cells at a time`` unless it is set.
* ``--gpus`` is refused (exit 2) where this process sees no such CUDA GPU, since a cell would
  fall back to the CPU; where a cell ran is reported from its ``results.json`` (``device``),
  never from what was asked for.
* Two sweeps on one ``--out_root``: a running cell is claimed; another sweep skips it and says
  who holds it.
* ``--list`` prints the cells with their index and state; ``--cell INDEX`` runs just that one
  (Slurm job arrays: ``scripts/slurm_reproduce.sbatch``).
* Exit codes: 0 every cell done or skipped, 1 a cell failed or could not be started (one
  ``error:`` line lists them; a full disk names the folder and starts no more cells), 2 bad
  input (found before any cell runs: table, ``--only``, ``--gpus``, ``--runs``, ``--data_dir``,
  ``--out_root``, and the cells' commands with the extra arguments, parsed as the main scripts
  do), 130 Ctrl-C, 143 SIGTERM.
* Paths on the command line (``--out_root``, ``--data_root``, ``--data_dir``, a table file)
  are relative to the folder the command is run from; left out, ``--out_root`` and
  ``--data_root`` are ``out/reproduce`` and ``datasets`` in the project. Paths in a table
  (configs) are relative to the project root, where the cells run.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from train.interrupts import startup

with startup():
    from data.files import output_problem
    from scripts import scheduler
    from scripts.cli import MAX_RUNS, MAX_WORKERS, ArgumentParser, float_in, int_in, split_extra
    from scripts.scheduler import INTERRUPT_CODES, claim_holder, free_bytes, say
    from train import interrupts
    from train.errors import UsageError, run_tool
    from train.run_folder import Latest, latest, results_in
    from train.runner import release_seeds

ROOT = Path(__file__).resolve().parent.parent
TABLES_DIR = Path(__file__).resolve().parent / "tables"
TABLES = ("node", "heterophily", "graph", "ablation", "depth")
# Not tables of the paper, but run and made the same way by name: AutoGCN's successors at equal
# budgets, and under their own papers' protocol (docs/reproducing.md).
EXTRA_TABLES = ("successors", "successors_published")
DEFAULT_RUNS = 5
# Where results and data go when --out_root / --data_root are left out: in the project, wherever
# the command runs (a path given on the command line is relative to the user's folder).
DEFAULT_OUT_ROOT = "out/reproduce"
DEFAULT_DATA_ROOT = "datasets"
# Options of the main scripts (argparse dests) that the sweep or a cell's table sets, which a
# cell's extra arguments may therefore not (a later option wins in the main scripts: `-- --runs
# 1` would quietly run one seed of a cell the sweep asked five of), with what to do instead.
_SWEEP_OPTIONS = {
    "config": "a cell's config is in its table",
    "dataset": "a cell's dataset is in its table",
    "override_model": "a cell's model is in its table",
    "override_runs": "give --runs N to the sweep, and the same to report tables",
    "override_seed": "a cell runs the release's seeds; give --runs N to the sweep for more",
    "override_out_dir": "give --out_root to the sweep",
    "override_data_dir": "give --data_root or --data_dir DATASET=PATH to the sweep",
    "override_gpu_id": "give --gpus to the sweep",
    "override_use_gpu": "the sweep runs cells on the CPU unless given --gpus",
    "resume": "the sweep resumes unfinished cells itself",
}


class SweepError(ValueError):
    """A problem with a table file or the command line, with a message saying what."""


# A cell's setup where the paper's text and the release disagree (docs/deviations.md): the one
# that gives the published figures, or the one the paper's text describes.
SETUPS = ("published", "paper_text")


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
    setup: str = "published"


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
        if cell.setup not in SETUPS:
            raise SweepError(f"{path}: cell {cell.id}: setup {cell.setup!r}; use one of {SETUPS}")
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


def resolve(path: str | os.PathLike | None, default: str | os.PathLike = "") -> Path:
    """A path the user gave, relative to the folder the command was run from (absolute paths
    unchanged); an option left out (``None``) is its ``default``, relative to the project root
    (``out/reproduce``, ``datasets``: the project's layout, wherever the command runs)."""
    if path is None:
        return ROOT / default
    return Path(os.path.abspath(Path(path).expanduser()))


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


# ------------------------------------------------------------------------------- results
Request = Callable[[Cell, Sequence[str]], tuple[dict | None, list[int]]]


def cell_request(cell: Cell, cmd: Sequence[str]) -> tuple[dict, list[int]]:
    """What a cell's command asks for: the config its main script resolves, and the release's
    seeds for its ``--runs``."""
    return script_config(cell.dataset, cmd[2:], cmd[1]), release_seeds(requested_runs(cmd))


def cell_results(folder: Path, cmd: Sequence[str] | None, cell: Cell | None = None,
                 runs: int = DEFAULT_RUNS, request: Request = cell_request) -> Latest:
    """Which result in a cell's ``folder`` is the cell's (:func:`train.run_folder.latest`, as
    for the tables, the records and ``--resume``): a run of what ``request`` says the cell's
    command ``cmd`` asks for (without ``cmd`` or ``cell``: any run, with ``runs`` seeds)."""
    if cmd is None or cell is None:
        return latest(folder, None, release_seeds(runs))
    return latest(folder, *request(cell, cmd))


def cell_state(folder: Path, runs: int = DEFAULT_RUNS, cmd: Sequence[str] | None = None,
               cell: Cell | None = None) -> tuple[str, Path | None]:
    """The cell's state (:class:`train.run_folder.Latest`; ``complete`` skips it) and the
    result that decided it."""
    found = cell_results(folder, cmd, cell, runs)
    return found.state, found.result.path if found.result else None


def fresh_result(folder: Path, since: float) -> dict:
    """The newest result in a cell's ``folder`` written since ``since`` (a ``time.time()``),
    else ``{}``: the run this sweep just launched there (it holds the cell's claim). Plain file
    reads: this runs in a scheduler thread while a signal may be ending the sweep, when torch
    work in a thread would abort the process at exit."""
    for result in results_in(folder):
        try:
            if not result.problem and result.path.stat().st_mtime >= since - 1:
                return result.data
        except OSError:
            continue
    return {}


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
    (:func:`train.run_folder.refresh_status` has marked dead ones ``killed``)."""
    try:
        data = json.loads(path.read_text()) if path is not None else {}
    except (OSError, ValueError):
        return False
    return data.get("status") == "running" and data.get("host") == socket.gethostname()


def _outcome(cell: Cell, folder: Path, cmd: Sequence[str], code: int, result: dict,
             device: str | None, used: dict[str, str | None] | None) -> tuple[int, str]:
    """A finished cell's exit code for the sweep and the words for it, from its exit code and
    its newest result: done (where the result says it ran), interrupted (130/143; its finished
    runs are kept) or failed."""
    stopped = scheduler.interrupt_code(code, result.get("status"))
    # a signal while the cell exits, after its result was recorded complete: done
    finished = stopped is not None and result.get("status") == "complete" \
        and len(result.get("runs", [])) >= requested_runs(cmd)
    if code == 0 or finished:
        device_used = str(result["device"]) if result.get("device") else None
        if used is not None:
            used[cell.id] = device_used
        return 0, f"done {ran_on(device_used, device)}" + (
            f" (stopped by a signal, exit {code}, after recording it)" if code else "")
    if stopped is not None:  # a time limit, Ctrl-C: the finished runs are kept
        runs = len(result.get("runs", []))
        return stopped, (f"interrupted (exit {code}; {runs} finished run(s) kept, rerunning "
                         "resumes)")
    return code, f"FAILED (exit {code}, see {folder}/stdout.log)"


def run_claimed(cell: Cell, folder: Path, planned: Any, device: str | None,
                launch: Callable[[list[str]], int], *,
                make_cmd: Callable[[Cell, str | None], list[str]], force: bool,
                used: dict[str, str | None] | None, request: Request = cell_request
                ) -> int | str:
    """Run a cell this sweep has claimed (:meth:`scheduler.Scheduler.run`), unless another
    sweep completed it meanwhile or a live process runs it; an unfinished run of the cell is
    continued (:attr:`train.run_folder.Latest.resume_dir`). The cell's exit code for the
    sweep, or why it did not run."""
    cmd = make_cmd(cell, device)
    found = cell_results(folder, cmd, cell, request=request)
    state, path = found.state, found.result.path if found.result else None
    if state == "complete" and (not force or planned != "complete"):
        return "completed meanwhile by another sweep"
    if state == "running" and _alive_here(path):
        return f"still running in another process ({path})"
    say(f"start {cell.id} ({'CPU' if device is None else f'GPU {device} requested'}) -> "
        f"{folder}")
    t0 = time.time()
    resume = None if force else found.resume_dir
    if resume is not None:  # continue its unfinished run where it stopped
        say(f"{cell.id}: resuming {resume.name} ({state})")
    code = launch(cmd if resume is None else [*cmd, "--resume", str(resume)])
    code, words = _outcome(cell, folder, cmd, code,
                           fresh_result(folder, t0), device, used)
    say(f"{cell.id} {words}, after {(time.time() - t0) / 60:.1f} min")
    return code


def run_cells(jobs: list[tuple[Cell, Path, Any]],
              make_cmd: Callable[[Cell, str | None], list[str]], devices: list[str | None],
              base_env: dict[str, str], force: bool = False,
              used: dict[str, str | None] | None = None, cell_memory: float = 0.0,
              read_free: Callable[[str | None], int | None] = free_bytes,
              request: Request = cell_request) -> dict[str, int | str]:
    """Run ``jobs`` (cell, folder, state when planned) on ``devices`` (:class:`scheduler.
    Scheduler`: one slot each, a memory guard wanting ``cell_memory`` GiB free, as
    ``read_free`` reads it, for each further cell on a device), each as :func:`run_claimed`.

    Returns, by cell id, the exit code of each cell that ran (1 where the sweep itself could not
    run it), or why it was not run: claimed by another sweep, completed by one meanwhile, or
    still running in a live process. Cells never started (a full disk stops the sweep) are
    absent. ``used`` receives the device each finished cell's result records; ``request``
    says what a cell's command asks for (:func:`cell_request`)."""
    run_one = partial(run_claimed, make_cmd=make_cmd, force=force, used=used, request=request)
    return scheduler.Scheduler(devices, base_env, cell_memory, read_free).run(jobs, run_one)


# ------------------------------------------------------------------------------- checks
def parse_data_dirs(items: Sequence[str]) -> dict[str, str]:
    """``--data_dir DATASET=PATH`` entries by dataset, checked: a known dataset name, given
    once, and a path that is not a file (a missing folder is allowed: some loaders download
    into it, SBM graphs are generated there)."""
    from train.tasks import TASKS

    known = sorted({d for task in TASKS.values() for d in task.datasets})
    out: dict[str, str] = {}
    given: dict[str, str] = {}
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
            if out.get(name, _shown(resolve(path))) != _shown(resolve(path)):
                raise SweepError(f"--data_dir gives {name} twice ({given[name]} and {path})")
            given[name] = path
            if resolve(path).exists() and not resolve(path).is_dir():
                raise SweepError(f"--data_dir {part}: {path} is a file, not a data folder")
            out[name] = _shown(resolve(path))  # as the cells, running in the project, need it
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


def check_extra(extra: Sequence[str], cells: Sequence[Cell]) -> None:
    """:class:`SweepError` for arguments after ``--`` that the sweep or the table sets
    (:data:`_SWEEP_OPTIONS`), however they are spelt (``--runs 1``, ``--runs=1``, ``--run
    1``): read by the cells' own parsers with every default left out, so that only what the
    extra arguments set is seen. Their other mistakes are left to :func:`check_command`."""
    import contextlib
    import io

    from train.runner import build_parser as script_parser
    from train.tasks import task_for_dataset

    tasks = {task_for_dataset(c.dataset).name: task_for_dataset(c.dataset)
             for c in cells if not c.not_implemented}
    if {"-h", "--help"} & set(extra):
        scripts = sorted({c.script for c in cells if not c.not_implemented})
        raise SweepError("--help after --: the cells' options are those of their main script: "
                         + ", ".join(f"python {s} --help" for s in scripts))
    for task in tasks.values():
        parser = script_parser(task, "")
        for action in parser._actions:
            action.default = argparse.SUPPRESS
        try:
            with contextlib.redirect_stderr(io.StringIO()), \
                    contextlib.redirect_stdout(io.StringIO()):
                given, _ = parser.parse_known_args(list(extra))
        except SystemExit:  # --help, a bad value: check_command says what is wrong
            continue
        for dest, hint in _SWEEP_OPTIONS.items():
            if dest in vars(given):
                option = next(a.option_strings[0] for a in parser._actions if a.dest == dest)
                raise SweepError(f"{option} after --: the sweep sets it for every cell ({hint})")


def script_config(dataset: str, argv: Sequence[str], prog: str = "") -> dict:
    """The config a main script would run with ``argv`` (its arguments, without ``python
    SCRIPT``): parsed and resolved as the script does (config file, overrides, ranges), nothing
    loaded or run. A table's config path is relative to the project root, where cells run.
    ``ValueError`` with the script's own one-line message when it would refuse ``argv``."""
    import contextlib
    import io

    from train.runner import build_parser as script_parser
    from train.runner import resolve_config
    from train.tasks import task_for_dataset

    task = task_for_dataset(dataset)
    parser = script_parser(task, "")
    parser.prog = prog or parser.prog
    messages = io.StringIO()
    try:
        with contextlib.redirect_stderr(messages), contextlib.redirect_stdout(messages):
            args = parser.parse_args(list(argv))
    except SystemExit:
        text = messages.getvalue().strip().splitlines()
        raise ValueError(text[-1].removeprefix("error: ") if text
                         else "not accepted by its main script") from None
    if args.config:
        args.config = str(ROOT / args.config)
    return resolve_config(task, args)[0]


def check_command(cell: Cell, cmd: Sequence[str]) -> None:
    """:class:`SweepError` unless the cell's main script accepts ``cmd`` (:func:`script_config`),
    so a bad value after ``--`` stops the sweep before its first cell rather than failing every
    cell."""
    try:
        script_config(cell.dataset, cmd[2:], cell.script)
    except ValueError as err:  # argparse, ConfigError and the data options' own checks
        raise SweepError(f"cell {cell.id}: {' '.join(str(err).split())}") from None


def check_out_root(out_root: str | None, writing: bool) -> str:
    """``--out_root`` resolved (:func:`resolve`); :class:`SweepError` when it is a file (or,
    before running, cannot be written); ``--list`` and ``--dry-run`` read a results folder that
    may be read-only."""
    path = resolve(out_root, DEFAULT_OUT_ROOT)
    problem = output_problem(path if out_root is None or out_root.strip() else out_root,
                             "folder")
    if problem and (writing or "is a file" in problem or "must not be empty" in problem):
        raise SweepError(f"--out_root: {problem}")
    return str(path)


def check_data_root(data_root: str | None) -> str:
    """``--data_root`` as the cells get it (:func:`resolve`, then relative to the project root
    where inside it, since the cells run there); :class:`SweepError` for an empty one or a
    file."""
    if data_root is not None and not data_root.strip():
        raise SweepError("--data_root is empty; give the datasets' folder")
    path = resolve(data_root, DEFAULT_DATA_ROOT)
    if path.is_file():
        raise SweepError(f"--data_root {data_root} is a file; give the datasets' folder")
    return _shown(path)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        description="Run the cells of a table of the AutoGCN paper (see scripts/tables/).",
        epilog="Arguments after -- are passed to every cell, e.g. -- --epochs 2 --max_graphs "
               "100. Exit codes: 0 every cell done (or skipped), 1 a cell failed or the sweep "
               "could not run it, 2 bad input, 130 Ctrl-C, 143 SIGTERM.")
    p.add_argument("table", help=f"one of {', '.join(TABLES + EXTRA_TABLES)}, or a table "
                                 "YAML file")
    p.add_argument("--out_root", default=None,
                   help="results go to OUT_ROOT/<table>/<cell id>/ (default: out/reproduce "
                        "in the project)")
    p.add_argument("--data_root", default=None,
                   help="where the datasets live: SBM_* in DATA_ROOT, others in "
                        "DATA_ROOT/<DATASET> (default: datasets in the project)")
    p.add_argument("--data_dir", action="append", default=[], metavar="DATASET=PATH",
                   help="data folder of one dataset, e.g. ZINC=DIR (repeatable)")
    p.add_argument("--gpus", default=None,
                   help="comma-separated ids of CUDA GPUs visible here; --per_gpu cells per GPU "
                        "at a time (refused where no GPU is visible)")
    p.add_argument("--per_gpu", type=int_in(1, MAX_WORKERS), default=None, metavar="N",
                   help="cells at a time on each GPU of --gpus (default 1; see --cell_memory)")
    p.add_argument("--jobs", type=int_in(1, MAX_WORKERS), default=None,
                   help="parallel cells on the CPU (default 1; not with --gpus)")
    p.add_argument("--cell_memory", type=float_in(0, 1e6, (False, True)), default=2.0,
                   metavar="GIB", help="with several cells on a device (--per_gpu, --jobs): "
                   "start another only while this much memory is free there (default 2)")
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


@dataclass
class Plan:
    """A sweep's table, its selected cells, data folders and device slots, and the options."""

    table: Table
    cells: list[Cell]
    data_dirs: dict[str, str]
    devices: list[str | None]
    args: argparse.Namespace
    extra: list[str]

    def command(self, cell: Cell, device: str | None) -> list[str]:
        a = self.args
        return build_command(cell, self.table.name, a.out_root, a.data_root, self.data_dirs,
                             a.runs, device, self.extra)

    def results(self) -> Path:
        return resolve(self.args.out_root) / self.table.name


def plan(args: argparse.Namespace, extra: list[str]) -> Plan:
    """The sweep's plan, every argument checked (:class:`SweepError` or
    :class:`~train.errors.UsageError` on the first problem) before anything is written."""
    table = load_table(args.table)
    writing = not (args.list or args.dry_run)
    # every path from here on absolute, or relative to the project root where the cells run
    args.out_root = check_out_root(args.out_root, writing)
    args.data_root = check_data_root(args.data_root)
    data_dirs = parse_data_dirs(args.data_dir)
    check_extra(extra, table.cells)
    devices = scheduler.device_slots(args.gpus, args.per_gpu, args.jobs, probe=writing)
    cells = select_only(table.cells, args.only, table.name)
    if args.cell is not None:
        if args.cell >= len(cells):
            raise SweepError(f"--cell {args.cell} out of range (0..{len(cells) - 1})")
        cells = [cells[args.cell]]
    p = Plan(table, cells, data_dirs, devices, args, extra)
    for cell in cells:
        if not cell.not_implemented:
            check_command(cell, p.command(cell, devices[0]))
    return p


# ------------------------------------------------------------------------------- main
def cell_states(p: Plan) -> list[tuple[int, Cell, Path, str]]:
    """``(index in --list, cell, folder, state)`` of every selected cell (:func:`cell_state`
    for the cell's command as planned)."""
    first = p.args.cell or 0
    out = []
    for i, cell in enumerate(p.cells):
        folder = cell_dir(p.args.out_root, p.table.name, cell)
        if cell.not_implemented:
            state = "not implemented"
        else:
            found = cell_results(folder, p.command(cell, p.devices[0]), cell)
            state = f"damaged: {found.why}" if found.state == "damaged" else found.state
        out.append((i + first, cell, folder, state))
    return out


def to_run(p: Plan, states: list[tuple[int, Cell, Path, str]]) -> list[tuple[Cell, Path, str]]:
    """The jobs of the cells to run: implemented and, unless ``--force``, not complete."""
    return [(cell, folder, state) for _, cell, folder, state in states
            if not cell.not_implemented and (state != "complete" or p.args.force)]


def print_list(states: list[tuple[int, Cell, Path, str]]) -> int:
    for index, cell, folder, state in states:
        holder = None if cell.not_implemented else claim_holder(folder)
        print(f"{index:3d}  {cell.id:<28} {state}"
              + (f" (claimed by {holder})" if holder else ""))
    return 0


def print_dry_run(p: Plan, states: list[tuple[int, Cell, Path, str]]) -> int:
    """Each cell's state and, for those to run, its command and log."""
    n_run = 0
    if Path.cwd().resolve() != ROOT.resolve():  # relative paths below are the project's
        print(f"# the cells run in the project: cd {ROOT}")
    for index, cell, folder, state in states:
        if cell.not_implemented:
            print(f"# [{index}] {cell.id}: not implemented ({cell.not_implemented})")
            continue
        skip = state == "complete" and not p.args.force
        print(f"# [{index}] {cell.id}: {state}{' -> skip' if skip else ''}")
        if not skip:
            # devices are handed out as they free up; round robin is what a dry run can show
            device = p.devices[n_run % len(p.devices)]
            n_run += 1
            pin = "" if device is None else f"CUDA_VISIBLE_DEVICES={device} "
            print(pin + shlex.join(p.command(cell, device)) + f"  > {_shown(folder)}/stdout.log")
    print(f"# {len(to_run(p, states))} of {len(states)} cell(s) of {p.table.name} to run")
    return 0


def run_table(p: Plan, states: list[tuple[int, Cell, Path, str]]) -> int:
    """Run the cells to run; the sweep's exit code (:func:`summarise`)."""
    todo = to_run(p, states)
    for _, c, _, _ in states:
        if c.not_implemented:
            print(f"not implemented, skipped: {c.id} ({c.not_implemented})")
    skipped = [c.id for _, c, _, s in states if s == "complete" and not p.args.force]
    if skipped:
        print(f"complete, skipped ({len(skipped)}): {', '.join(skipped)}")
    if not todo:
        print(f"nothing to run: every cell of {p.table.name} is complete (--force reruns)")
        return 0
    a = p.args
    where = "the CPU" if a.gpus is None else f"--gpus {a.gpus}" + (
        f" --per_gpu {a.per_gpu}" if a.per_gpu else "")
    print(f"{p.table.name}: running {len(todo)} cell(s) on {where} ({len(p.devices)} at a "
          f"time), results in {p.results()}", flush=True)
    used: dict[str, str | None] = {}
    try:
        with interrupts.handle_interrupts(), interrupts.deferred():
            codes = run_cells(todo, p.command, p.devices,
                              scheduler.thread_share(dict(os.environ), len(p.devices)),
                              a.force, used, a.cell_memory)
    except KeyboardInterrupt as err:  # one line, as every entry point (scripts/cli.py)
        print(f"{interrupts.as_interrupted(err).word}: finished cells and runs are kept in "
              f"{_shown(p.results())}; rerunning resumes", file=sys.stderr)
        return interrupts.exit_code(err)
    return summarise(p.table.name, todo, codes, used, a.gpus is not None)


def main(argv: Sequence[str] | None = None) -> int:
    argv, extra = split_extra(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        p = plan(args, extra)
    except (SweepError, UsageError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    states = cell_states(p)
    if args.list:
        return print_list(states)
    if args.dry_run:
        return print_dry_run(p, states)
    return run_table(p, states)


def summarise(table: str, todo: Sequence[tuple[Cell, Path, Any]], codes: dict[str, int | str],
              used: dict[str, str | None], gpus: bool) -> int:
    """Print what happened to every cell; the sweep's exit code: 1 when a cell failed or was
    never started, else 0. Where a cell ran is what its result records."""
    for cid, code in codes.items():
        if isinstance(code, str):
            print(f"skipped {cid}: {code}")
    done = [cid for cid, code in codes.items() if code == 0]
    stopped = {cid: code for cid, code in codes.items() if code in INTERRUPT_CODES}
    failed = [f"{cid} (exit {code})" for cid, code in codes.items()
              if isinstance(code, int) and code != 0 and cid not in stopped]
    never = [cell.id for cell, _, _ in todo if cell.id not in codes]
    on_cpu = [cid for cid in done if gpus and not str(used.get(cid) or "").startswith("cuda")]
    print(f"{table}: {len(done)} cell(s) done, {len(failed)} failed, "
          + (f"{len(stopped)} interrupted, " if stopped else "")
          + f"{len(codes) - len(done) - len(failed) - len(stopped)} skipped"
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
    if stopped:  # e.g. a time limit's SIGTERM that reached the cells only
        code = max(stopped.values())  # 143 (SIGTERM) over 130 (Ctrl-C)
        word = interrupts.Interrupted(INTERRUPT_CODES[code]).word
        print(f"{word}: {table}: {len(stopped)} cell(s) stopped before the end: "
              f"{', '.join(stopped)}; their finished runs are kept, rerunning resumes",
              file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    sys.exit(run_tool(main))

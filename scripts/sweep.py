"""Run the cells of a table (``scripts/tables/TABLE.yaml``: models × datasets × config
overrides, 5 seeds each), each one invocation of a main script writing into ``<out_root>/<table>/
<cell id>/``. Options, resuming, devices, claims, the memory guard, Slurm and exit codes:
docs/reproducing.md; how the cells are run: :mod:`scripts.scheduler`.
"""

from __future__ import annotations

import argparse
import contextlib
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
from typing import Any, NoReturn

from train.interrupts import startup

with startup():
    import yaml

    from data.files import output_problem
    from scripts import scheduler
    from scripts.cli import MAX_RUNS, MAX_WORKERS, ArgumentParser, float_in, int_in, split_extra
    from scripts.scheduler import INTERRUPT_CODES, claim_holder, free_bytes, say
    from train import interrupts
    from train.errors import UsageError, run_tool
    from train.run_folder import Latest, latest, results_in
    from train.runner import build_parser as script_parser
    from train.runner import release_seeds, resolve_config
    from train.tasks import TASKS, task_for_dataset

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
    **{dest: f"a cell's {dest.removeprefix('override_')} is in its table"
       for dest in ("config", "dataset", "override_model")},
    "override_runs": "give --runs N to the sweep, and the same to report tables",
    "override_seed": "a cell runs the release's seeds; give --runs N to the sweep for more",
    "override_out_dir": "give --out_root to the sweep",
    "override_data_dir": "give --data_root or --data_dir DATASET=PATH to the sweep",
    "override_gpu_id": "give --gpus to the sweep",
    "override_use_gpu": "the sweep runs cells on the CPU unless given --gpus",
    "resume": "the sweep resumes unfinished cells itself",
}
# A cell's setup where the paper's text and the release disagree (docs/deviations.md): the one
# that gives the published figures, or the one the paper's text describes.
SETUPS = ("published", "paper_text")


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
    setup: str = "published"


@dataclass
class Table:
    name: str
    title: str
    columns: list[dict[str, Any]]
    rows: list[str]
    cells: list[Cell]
    path: Path
    published_from: Any = None  # for the report, which checks it (report/cells.py)


def cell_defaults(model: str, dataset: str) -> dict[str, str]:
    """What a cell need not state: its main script, config file (the release's naming) and data
    folder under ``{data_root}`` (SBM graphs are generated into the root itself)."""
    task = task_for_dataset(dataset)
    prefix = "SBMs_node_clustering" if task.name == "SBMs_node_classification" else task.name
    short = dataset.removeprefix("SBM_")
    return {"script": f"main_{task.name}.py", "config": f"configs/{prefix}_{model}_{short}.json",
            "data_dir": "{data_root}" if dataset.startswith("SBM_") else
            f"{{data_root}}/{dataset}"}


def load_table(table: str) -> Table:
    """A table (a name or a YAML file), checked; its cells default to :func:`cell_defaults`."""
    path = TABLES_DIR / f"{table}.yaml" if table in TABLES + EXTRA_TABLES else Path(table)
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
    cells: list[Cell] = []
    for i, c in enumerate(raw["cells"]):
        if not isinstance(c, dict):
            raise SweepError(f"{path}: cell {i} is not a mapping")
        where = f"{path}: cell {c.get('id', i)}"
        needed = {"id", "row", "column", "dataset"} | (set() if c.get("not_implemented")
                                                       else {"model"})
        unknown, missing = set(c) - set(Cell.__dataclass_fields__), needed - set(c)
        if unknown or missing:
            raise SweepError(f"{where}: unknown keys {sorted(unknown)}, missing {sorted(missing)}")
        if not c.get("not_implemented"):
            try:
                c = {**cell_defaults(c["model"], c["dataset"]), **c}
            except ValueError as err:
                raise SweepError(f"{where}: {err}") from None
            if not (ROOT / c["config"]).is_file():
                raise SweepError(f"{where}: no config {c['config']}")
        if c.get("setup", "published") not in SETUPS:
            raise SweepError(f"{where}: setup {c['setup']!r}; use one of {SETUPS}")
        if any(c["id"] == other.id for other in cells):
            raise SweepError(f"{path}: duplicate cell id {c['id']}")
        cells.append(Cell(**{**c, "row": str(c["row"]), "column": str(c["column"]),
                             "data": dict(c.get("data") or {}),
                             "overrides": dict(c.get("overrides") or {})}))
    return Table(str(raw.get("table", path.stem)), str(raw.get("title", path.stem)),
                 list(raw.get("columns", [])), [str(r) for r in raw.get("rows", [])], cells, path,
                 raw.get("published_from"))


# ------------------------------------------------------------------------------- commands
def _fmt(value: Any) -> str:  # True / False as the main scripts parse them
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def resolve(path: str | os.PathLike | None, default: str | os.PathLike = "") -> Path:
    """A user's path (relative to their folder), or ``default`` in the project for ``None``."""
    return ROOT / default if path is None else Path(os.path.abspath(Path(path).expanduser()))


def shown(path: Path) -> str:
    """``path`` relative to the project root when inside it (the cells run in the root)."""
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def data_dir_for(cell: Cell, data_root: str, data_dirs: dict[str, str]) -> str | None:
    """``--data_dir DATASET=PATH`` if given (or for the cell's default folder: SQUIRREL_FILTERED
    reads SQUIRREL's), else the cell's folder under ``data_root``."""
    default = None if cell.data_dir is None else str(cell.data_dir)
    for key in (cell.dataset, (default or "").removeprefix("{data_root}/")):
        if key in data_dirs:
            return data_dirs[key]
    return None if default is None else default.format(data_root=data_root)


def build_command(cell: Cell, table: str, out_root: str, data_root: str = "datasets",
                  data_dirs: dict[str, str] | None = None, runs: int = DEFAULT_RUNS,
                  device: str | None = None, extra: Sequence[str] = (),
                  python: str = sys.executable) -> list[str]:
    """The command line of ``cell`` (``device`` None: the CPU), extra arguments last (they win)."""
    cmd = [python, cell.script, "--config", cell.config, "--runs", str(runs),
           "--out_dir", shown(resolve(out_root) / table / cell.id)]
    ddir = data_dir_for(cell, data_root, data_dirs or {})
    if ddir is not None:
        cmd += ["--data_dir", ddir]
    for key, value in cell.data.items():
        cmd += [f"--{key}", _fmt(value).format(data_root=data_root)]
    for key, value in cell.overrides.items():
        cmd += [f"--{key}", _fmt(value)]
    # a GPU cell sees only its own GPU (scheduler.Scheduler), which is then device 0
    cmd += ["--use_gpu", "False"] if device is None else ["--gpu_id", "0"]
    return cmd + list(extra)


def requested_runs(cmd: Sequence[str]) -> int:
    """The ``--runs`` value the main script will use (the last one given)."""
    given = [value for arg, value in zip(cmd, cmd[1:]) if arg == "--runs" and value.isdigit()]
    return int(given[-1]) if given else DEFAULT_RUNS


# ------------------------------------------------------------------------------- results
def cell_request(cell: Cell, cmd: Sequence[str]) -> tuple[dict, list[int]]:
    """What a cell's command asks for: its resolved config and the release's seeds."""
    return script_config(cell.dataset, cmd[2:], cmd[1]), release_seeds(requested_runs(cmd))


def cell_results(folder: Path, cmd: Sequence[str] | None, cell: Cell | None = None,
                 runs: int = DEFAULT_RUNS) -> Latest:
    """Which result in a cell's ``folder`` is the cell's (:func:`train.run_folder.latest`): a run
    of what ``cmd`` asks for (:func:`cell_request`; without ``cmd`` or ``cell``: any run)."""
    if cmd is None or cell is None:
        return latest(folder, None, release_seeds(runs))
    return latest(folder, *cell_request(cell, cmd))


def fresh_result(folder: Path, since: float) -> dict:
    """The result this sweep just ran in a cell's ``folder`` (the newest since ``since``), else
    ``{}``: plain reads, as torch work in a thread while a signal ends the sweep aborts it."""
    for result in results_in(folder):
        with contextlib.suppress(OSError):  # removed meanwhile
            if not result.problem and result.path.stat().st_mtime >= since - 1:
                return result.data
    return {}


def ran_on(used: str | None, gpu: str | None) -> str:
    """Where a cell ran, from its result (never from what was asked for)."""
    if used is None:
        return "device not recorded in results.json"
    if gpu is None or used.startswith("cuda"):
        return f"on {used}" + (f" (GPU {gpu})" if gpu is not None else "")
    return f"on {used}, NOT on GPU {gpu}: the cell found no usable GPU (see its stdout.log)"


def run_claimed(cell: Cell, folder: Path, planned: str, device: str | None,
                launch: Callable[[list[str]], int], *,
                make_cmd: Callable[[Cell, str | None], list[str]], force: bool,
                used: dict[str, str | None] | None) -> int | str:
    """Run a claimed cell (continuing its unfinished run) unless another sweep completed it or
    a live process runs it: its exit code for the sweep, from its own and its result's."""
    cmd = make_cmd(cell, device)
    found = cell_results(folder, cmd, cell)
    if found.state == "complete" and (not force or planned != "complete"):
        return "completed meanwhile by another sweep"
    # a running result of this machine is a live process (reading marks dead ones killed)
    if found.state == "running" and found.result.data.get("host") == socket.gethostname():
        return f"still running in another process ({found.result.path})"
    say(f"start {cell.id} ({'CPU' if device is None else f'GPU {device} requested'}) -> {folder}")
    t0 = time.time()
    resume = None if force else found.resume_dir
    if resume is not None:
        say(f"{cell.id}: resuming {resume.name} ({found.state})")
    code = launch(cmd if resume is None else [*cmd, "--resume", str(resume)])
    result = fresh_result(folder, t0)
    stopped = scheduler.interrupt_code(code, result.get("status"))
    # a signal while the cell exits, after its result was recorded complete: done
    if code == 0 or (stopped is not None and result.get("status") == "complete"
                     and len(result.get("runs", [])) >= requested_runs(cmd)):
        device_used = str(result["device"]) if result.get("device") else None
        if used is not None:
            used[cell.id] = device_used
        code, words = 0, f"done {ran_on(device_used, device)}" + (
            f" (stopped by a signal, exit {code}, after recording it)" if code else "")
    elif stopped is not None:  # a time limit, Ctrl-C: the finished runs are kept
        code, words = stopped, (f"interrupted (exit {code}; {len(result.get('runs', []))} "
                                "finished run(s) kept, rerunning resumes)")
    else:
        words = f"FAILED (exit {code}, see {folder}/stdout.log)"
    say(f"{cell.id} {words}, after {(time.time() - t0) / 60:.1f} min")
    return code


def run_cells(jobs: list[tuple[Cell, Path, str]],
              make_cmd: Callable[[Cell, str | None], list[str]], devices: list[str | None],
              base_env: dict[str, str], force: bool = False,
              used: dict[str, str | None] | None = None, cell_memory: float = 0.0,
              read_free: Callable[[str | None], int | None] = free_bytes
              ) -> dict[str, int | str]:
    """:meth:`scheduler.Scheduler.run` of ``jobs`` (cell, folder, planned state), each as
    :func:`run_claimed`; ``used`` receives the device each finished cell's result records."""
    run_one = partial(run_claimed, make_cmd=make_cmd, force=force, used=used)
    return scheduler.Scheduler(devices, base_env, cell_memory, read_free).run(jobs, run_one)


# ------------------------------------------------------------------------------- checks
def parse_data_dirs(items: Sequence[str]) -> dict[str, str]:
    """``--data_dir DATASET=PATH`` entries by dataset, checked: a known dataset, given once, not
    a file (a missing folder is fine: loaders download or generate data there)."""
    known = sorted({d for task in TASKS.values() for d in task.datasets})
    out: dict[str, str] = {}
    for part in (p for item in items for p in item.split(",") if p.strip()):
        name, sep, path = part.partition("=")
        name, path = name.strip().upper(), path.strip()
        if not sep or not name or not path:
            raise SweepError(f"--data_dir expects DATASET=PATH, got {part!r}")
        if name not in known:
            raise SweepError(f"--data_dir {part}: unknown dataset {name}; known: "
                             f"{', '.join(known)}")
        if out.setdefault(name, shown(resolve(path))) != shown(resolve(path)):
            raise SweepError(f"--data_dir gives {name} twice ({out[name]} and {path})")
        if resolve(path).exists() and not resolve(path).is_dir():
            raise SweepError(f"--data_dir {part}: {path} is a file, not a data folder")
    return out


def select_only(cells: Sequence[Cell], only: str | None, table: str) -> list[Cell]:
    """The cells whose id contains one of the comma-separated substrings of ``--only``, every
    one required to match some cell (a typo would otherwise quietly drop cells)."""
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
    return [c for c in cells if any(p in c.id for p in patterns)]


def _script_parser(dataset: str, prog: str = "") -> argparse.ArgumentParser:
    """A dataset's main-script parser raising ``ValueError`` (its one line) instead of exiting."""
    parser = script_parser(task_for_dataset(dataset), "")
    parser.prog = prog or parser.prog

    def refuse(status: int = 0, message: str | None = None) -> NoReturn:
        raise ValueError((message or "not accepted by its main script").strip()
                         .removeprefix("error: "))

    parser.exit = refuse
    return parser


def check_extra(extra: Sequence[str], cells: Sequence[Cell]) -> None:
    """:class:`SweepError` for arguments after ``--`` that the sweep or the table sets, however
    spelt (``--runs=1``, ``--run 1``): read by the cells' own parsers without defaults, so that
    only what they set is seen."""
    implemented = [c for c in cells if not c.not_implemented]
    if {"-h", "--help"} & set(extra):
        scripts = sorted({c.script for c in implemented})
        raise SweepError("--help after --: the cells' options are those of their main script: "
                         + ", ".join(f"python {s} --help" for s in scripts))
    for dataset in {task_for_dataset(c.dataset).name: c.dataset for c in implemented}.values():
        parser = _script_parser(dataset)
        for action in parser._actions:
            action.default = argparse.SUPPRESS
        try:
            given = parser.parse_known_args(list(extra))[0]
        except ValueError:  # a bad value: check_command says so
            continue
        for dest, hint in _SWEEP_OPTIONS.items():
            if dest in vars(given):
                option = next(a.option_strings[0] for a in parser._actions if a.dest == dest)
                raise SweepError(f"{option} after --: the sweep sets it for every cell ({hint})")


def script_config(dataset: str, argv: Sequence[str], prog: str = "") -> dict:
    """The config a main script would run with ``argv`` (without ``python SCRIPT``), nothing
    loaded or run; ``ValueError`` with the script's own one-line message where it refuses it."""
    args = _script_parser(dataset, prog).parse_args(list(argv))
    if args.config:
        args.config = str(ROOT / args.config)
    return resolve_config(task_for_dataset(dataset), args)[0]


def check_command(cell: Cell, cmd: Sequence[str]) -> None:
    """:class:`SweepError` unless the cell's main script accepts ``cmd``: a bad value after
    ``--`` stops the sweep before its first cell rather than failing every cell."""
    try:
        script_config(cell.dataset, cmd[2:], cell.script)
    except ValueError as err:  # argparse, ConfigError and the data options' own checks
        raise SweepError(f"cell {cell.id}: {' '.join(str(err).split())}") from None


def check_root(option: str, given: str | None, default: str, writing: bool) -> Path:
    """``--out_root`` or ``--data_root`` resolved; :class:`SweepError` when it is empty, a file
    or, ``writing``, cannot be written (``--list`` and ``--dry-run`` write nothing)."""
    path = resolve(given, default)
    problem = output_problem(path if given is None or given.strip() else given, "folder",
                             writable=writing)
    if problem:
        raise SweepError(f"{option}: {problem}")
    return path


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        description="Run the cells of a table of the AutoGCN paper (see scripts/tables/).",
        epilog="Arguments after -- are passed to every cell, e.g. -- --epochs 2 --max_graphs "
               "100. Exit codes: 0 every cell done (or skipped), 1 a cell failed or the sweep "
               "could not run it, 2 bad input, 130 Ctrl-C, 143 SIGTERM.")
    add = p.add_argument
    add("table", help=f"one of {', '.join(TABLES + EXTRA_TABLES)}, or a table YAML file")
    add("--out_root", help="results go to OUT_ROOT/<table>/<cell id>/ (default: out/reproduce "
                           "in the project)")
    add("--data_root", help="where the datasets live: SBM_* in DATA_ROOT, others in "
                            "DATA_ROOT/<DATASET> (default: datasets in the project)")
    add("--data_dir", action="append", default=[], metavar="DATASET=PATH",
        help="data folder of one dataset, e.g. ZINC=DIR (repeatable)")
    add("--gpus", help="comma-separated ids of CUDA GPUs visible here; --per_gpu cells per GPU "
                       "at a time (refused where no GPU is visible)")
    add("--per_gpu", type=int_in(1, MAX_WORKERS), metavar="N",
        help="cells at a time on each GPU of --gpus (default 1; see --cell_memory)")
    add("--jobs", type=int_in(1, MAX_WORKERS),
        help="parallel cells on the CPU (default 1; not with --gpus)")
    add("--cell_memory", type=float_in(0, 1e6, (False, True)), default=2.0, metavar="GIB",
        help="with several cells on a device (--per_gpu, --jobs): start another only while "
             "this much memory is free there (default 2)")
    add("--runs", type=int_in(1, MAX_RUNS), default=DEFAULT_RUNS,
        help="seeds per cell (default 5)")
    add("--only", help="only cells whose id contains one of these comma-separated substrings")
    add("--force", action="store_true", help="rerun cells that are complete")
    add("--dry-run", "--dry_run", dest="dry_run", action="store_true",
        help="print the commands, run nothing")
    add("--list", action="store_true",
        help="print the cells (index, id, state, and who claims a running one)")
    add("--cell", type=int_in(0), metavar="INDEX",
        help="run only the cell with this index in --list (Slurm array task)")
    return p


# ------------------------------------------------------------------------------- main
@dataclass
class Plan:
    """A sweep's table and options, and each cell's ``(index in --list, cell, folder, state)``."""

    table: Table
    devices: list[str | None]
    args: argparse.Namespace  # with data_dirs (--data_dir parsed) and extra (after --)
    states: list[tuple[int, Cell, Path, str]] = field(default_factory=list)

    def command(self, cell: Cell, device: str | None) -> list[str]:
        a = self.args
        return build_command(cell, self.table.name, a.out_root, a.data_root, a.data_dirs, a.runs,
                             device, a.extra)

    def to_run(self) -> list[tuple[Cell, Path, str]]:
        """The jobs of the cells to run: implemented and, unless ``--force``, not complete."""
        return [(cell, folder, state) for _, cell, folder, state in self.states
                if not cell.not_implemented and (state != "complete" or self.args.force)]


def plan(args: argparse.Namespace, extra: list[str]) -> Plan:
    """The sweep's plan, every argument checked before anything is written."""
    table = load_table(args.table)
    writing = not (args.list or args.dry_run)
    # every path from here on absolute, or relative to the project root where the cells run
    args.out_root = str(check_root("--out_root", args.out_root, DEFAULT_OUT_ROOT, writing))
    args.data_root = shown(check_root("--data_root", args.data_root, DEFAULT_DATA_ROOT, False))
    args.data_dirs, args.extra = parse_data_dirs(args.data_dir), extra
    check_extra(extra, table.cells)
    devices = scheduler.device_slots(args.gpus, args.per_gpu, args.jobs, probe=writing)
    cells = select_only(table.cells, args.only, table.name)
    if args.cell is not None:
        if args.cell >= len(cells):
            raise SweepError(f"--cell {args.cell} out of range (0..{len(cells) - 1})")
        cells = [cells[args.cell]]
    p = Plan(table, devices, args)
    implemented = [c for c in cells if not c.not_implemented]
    for cell in implemented:  # all checked before any result is read (which may mark one killed)
        check_command(cell, p.command(cell, devices[0]))
    for i, cell in enumerate(cells, start=args.cell or 0):
        folder = resolve(args.out_root) / table.name / cell.id
        found = cell_results(folder, p.command(cell, devices[0]), cell) if cell in implemented \
            else Latest("not implemented")
        p.states.append((i, cell, folder, f"damaged: {found.why}" if found.state == "damaged"
                         else found.state))
    return p


def print_list(p: Plan) -> int:
    for index, cell, folder, state in p.states:
        holder = None if cell.not_implemented else claim_holder(folder)
        print(f"{index:3d}  {cell.id:<28} {state}" + (f" (claimed by {holder})" if holder else ""))
    return 0


def print_dry_run(p: Plan) -> int:
    """Each cell's state and, for those to run, its command and log."""
    if Path.cwd().resolve() != ROOT.resolve():  # relative paths below are the project's
        print(f"# the cells run in the project: cd {ROOT}")
    todo = [cell for cell, _, _ in p.to_run()]
    for index, cell, folder, state in p.states:
        if cell.not_implemented:
            print(f"# [{index}] {cell.id}: not implemented ({cell.not_implemented})")
            continue
        print(f"# [{index}] {cell.id}: {state}{'' if cell in todo else ' -> skip'}")
        if cell in todo:
            # devices are handed out as they free up; round robin is what a dry run can show
            device = p.devices[todo.index(cell) % len(p.devices)]
            pin = "" if device is None else f"CUDA_VISIBLE_DEVICES={device} "
            print(pin + shlex.join(p.command(cell, device)) + f"  > {shown(folder)}/stdout.log")
    print(f"# {len(todo)} of {len(p.states)} cell(s) of {p.table.name} to run")
    return 0


def run_table(p: Plan) -> int:
    """Run the cells to run; the sweep's exit code (:func:`summarise`)."""
    todo, a, results = p.to_run(), p.args, resolve(p.args.out_root) / p.table.name
    for _, c, _, _ in p.states:
        if c.not_implemented:
            print(f"not implemented, skipped: {c.id} ({c.not_implemented})")
    skipped = [c.id for _, c, _, s in p.states if s == "complete" and not a.force]
    if skipped:
        print(f"complete, skipped ({len(skipped)}): {', '.join(skipped)}")
    if not todo:
        print(f"nothing to run: every cell of {p.table.name} is complete (--force reruns)")
        return 0
    where = "the CPU" if a.gpus is None else f"--gpus {a.gpus}" + (
        f" --per_gpu {a.per_gpu}" if a.per_gpu else "")
    print(f"{p.table.name}: running {len(todo)} cell(s) on {where} ({len(p.devices)} at a "
          f"time), results in {results}", flush=True)
    used: dict[str, str | None] = {}
    try:
        with interrupts.handle_interrupts(), interrupts.deferred():
            codes = run_cells(todo, p.command, p.devices, dict(os.environ), a.force, used,
                              a.cell_memory)
    except KeyboardInterrupt as err:  # one line, as every entry point (scripts/cli.py)
        print(f"{interrupts.as_interrupted(err).word}: finished cells and runs are kept in "
              f"{shown(results)}; rerunning resumes", file=sys.stderr)
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
    return (print_list if args.list else print_dry_run if args.dry_run else run_table)(p)


def summarise(table: str, todo: Sequence[tuple[Cell, Path, Any]], codes: dict[str, int | str],
              used: dict[str, str | None], gpus: bool) -> int:
    """Print what happened to every cell; the sweep's exit code: 1 when a cell failed or was
    never started, else 0 (130 / 143 when cells were stopped by a signal)."""
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
    parts = [f"{len(ids)} {what}: {', '.join(ids)}" for what, ids in
             (("cell(s) failed", failed), ("not started", never)) if ids]
    if parts:
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

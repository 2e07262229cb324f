"""Each cell of a table: what a sweep's results say (ours: the result
:func:`scripts.sweep.cell_results` takes) and what the paper published
(``scripts/tables/published.yaml``, and the sections a table's ``published_from`` names)."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scripts import sweep
from scripts.sweep import Cell, Table
from train.errors import UsageError

EXPECTED_RUNS = 5
PUBLISHED = sweep.TABLES_DIR / "published.yaml"


@dataclass
class CellResult:
    """What the results say about one cell."""

    cell: Cell
    state: str  # ok, partial, running, interrupted, failed, missing, stale, not implemented
    runs: int = 0
    split: str | None = None  # "test", or "val" where the data has no test split
    metric: str | None = None
    mean: float | None = None
    std: float | None = None
    params: int | None = None
    s_per_epoch: float | None = None
    epochs: float | None = None
    path: Path | None = None
    device: str | None = None
    problems: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # results of another experiment, skipped


def finite(x: Any) -> float | None:
    """``x`` as a finite float, else ``None``."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and std with ddof 0, as the paper's code."""
    m = sum(values) / len(values)
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def _mean(values: list[Any]) -> float | None:
    kept = [v for v in map(finite, values) if v is not None]
    return sum(kept) / len(kept) if kept else None


def metric_values(data: dict, metric: str) -> tuple[str | None, list[float]]:
    """The split used (test, else val) and the metric of every run that has it."""
    finals = [r.get("final") for r in data.get("runs", []) if isinstance(r, dict)]
    for split in ("test", "val"):
        blocks = [f.get(split) for f in finals if isinstance(f, dict)]
        values = [finite(b.get(metric)) for b in blocks if isinstance(b, dict)]
        if any(v is not None for v in values):
            return split, [v for v in values if v is not None]
    return None, []


def cell_result(cell: Cell, folder: Path, metric: str, runs: int,
                extra: Sequence[str] | None = ()) -> CellResult:
    """A cell's state, statistics of ``metric``, #Param and s/epoch, from the result the sweep
    takes in ``folder`` (results of another experiment are only listed, in ``stale``).
    ``extra``: the arguments the sweep passed after ``--`` (``None``: any result counts)."""
    if cell.not_implemented:
        return CellResult(cell, "not implemented")
    cmd = None if extra is None else sweep.build_command(cell, "table", "out", runs=runs,
                                                         extra=list(extra))
    found = sweep.cell_results(folder, cmd, cell, runs)
    problems = [f"{r.path}: {r.problem}" for r, _ in found.others if r.problem]
    stale = [f"{r.run_dir}: {why}" for r, why in found.others if not r.problem]
    if found.state in ("missing", "stale", "damaged"):
        state = "missing" if found.state == "damaged" else found.state
        return CellResult(cell, state, problems=problems, stale=stale)
    data = found.result.data
    runs_of = [r for r in data.get("runs", []) if isinstance(r, dict)]
    split, values = metric_values(data, metric)
    mean, std = mean_std(values) if values else (None, None)
    params = data.get("num_params")
    return CellResult(
        cell, "ok" if found.state == "complete" else found.state, len(runs_of), split, metric,
        mean, std, params if isinstance(params, int) else None,
        _mean([r.get("s_per_epoch") for r in runs_of]), _mean([r.get("epochs") for r in runs_of]),
        found.result.path, str(data["device"]) if data.get("device") else None, problems, stale)


def column_metric(col: dict, cell: Cell, sbm_metric: str = "acc") -> str:
    """The metric a column shows (SBM accuracy: ``sbm_metric``)."""
    metric = str(col.get("metric", "acc"))
    return sbm_metric if metric == "acc" and cell.dataset.startswith("SBM_") else metric


def table_results(table: Table, folder: str | os.PathLike, runs: int = EXPECTED_RUNS,
                  sbm_metric: str = "acc", extra: Sequence[str] | None = ()
                  ) -> dict[str, CellResult]:
    """Cell id -> :class:`CellResult` of every cell of ``table``, from the table's results
    ``folder`` (``<out_root>/<table>``; ``extra``: see :func:`cell_result`)."""
    cols = {str(c.get("name")): c for c in table.columns}
    return {cell.id: cell_result(cell, sweep.resolve(folder) / cell.id,
                                 column_metric(cols.get(cell.column, {}), cell, sbm_metric),
                                 runs, extra) for cell in table.cells}


def folder_option(option: str, given: str | None, default: str | None, what: str,
                  must_exist: bool = False) -> Path:
    """The folder an option names, relative to the user's folder (left out: ``default`` in the
    project); :class:`UsageError` when it is empty, a file, or (``must_exist``) missing."""
    if given is not None and not given.strip():  # resolved, it would be the current folder
        raise UsageError(f"{option}: must not be empty; give {what}")
    folder = sweep.resolve(given, default or "")
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{option} {given} is a file, not a folder; give {what}")
    if must_exist and not folder.is_dir():
        raise UsageError(f"{option} {given}: no such folder; give {what}")
    return folder


def load_tables(names: Sequence[str]) -> list[Table]:
    """The tables named, every name checked first (:class:`UsageError` naming the valid ones),
    so that a typo stops a command before anything is read or written."""
    if not names:
        raise UsageError(f"--tables names no table; valid: {', '.join(sweep.TABLES)}")
    known = sweep.TABLES + sweep.EXTRA_TABLES
    tables = []
    for name in dict.fromkeys(names):
        if name not in known and not name.endswith((".yaml", ".yml")):
            raise UsageError(f"--tables: unknown table {name!r}; valid: {', '.join(known)} (or a "
                             "table YAML file)")
        try:
            tables.append(sweep.load_table(name))
            published_sources(tables[-1])
        except sweep.SweepError as err:
            raise UsageError(f"--tables: {err}") from None
    return tables


# ------------------------------------------------------------------------------- the paper's
def load_published(path: str | os.PathLike = PUBLISHED, strict: bool = False) -> dict:
    """The published numbers. A missing or broken file: empty, with a warning, or (``strict``:
    ``--published`` given on the command line) :class:`UsageError`."""
    try:
        data = yaml.safe_load(sweep.resolve(path).read_text())
        if strict and not isinstance(data, dict):
            raise UsageError(f"--published {path}: expected a mapping table -> row -> column")
    except (OSError, yaml.YAMLError) as err:
        why = err.strerror if isinstance(err, OSError) else " ".join(str(err).split())
        if strict:
            raise UsageError(f"--published {path}: cannot read it ({why or err})") from None
        print(f"warning: published numbers unavailable ({err})", file=sys.stderr)
        return {}
    return data if isinstance(data, dict) else {}


def published_sources(table: Table) -> list[dict]:
    """A table file's ``published_from``: the other sections of the published numbers to look
    in, in order, after the table's own (format: ``docs/reproducing.md``, successors' section);
    :class:`~scripts.sweep.SweepError` for a malformed list."""
    sources = table.published_from or []
    if not isinstance(sources, list):
        raise sweep.SweepError(f"{table.path}: published_from must be a list of mappings")
    for i, src in enumerate(sources):
        if not isinstance(src, dict) or not isinstance(src.get("table"), str) \
                or set(src) - {"table", "scale", "mark", "note"} \
                or finite(src.get("scale", 1)) is None:
            raise sweep.SweepError(f"{table.path}: published_from[{i}]: expected {{table: NAME, "
                                   f"scale: NUMBER, mark: TEXT, note: TEXT}}, got {src!r}")
    return sources


def find_published(published: dict, table: Table, sources: list[dict], row: str,
                   column: str) -> tuple[Any, dict | None]:
    """The published entry for a cell, in this table's units, and the ``published_from`` item
    it came from (``None``: the table's own section)."""
    for src in [None, *sources]:
        entry = published.get(src["table"] if src else table.name)
        entry = entry.get(row) if isinstance(entry, dict) else None
        entry = entry.get(column) if isinstance(entry, dict) else None
        if entry is None:
            continue
        scale = float(src.get("scale", 1)) if src else 1.0
        if isinstance(entry, dict) and scale != 1:
            entry = {k: (v * scale if k in ("mean", "std", "ci95") and finite(v) is not None
                         else v) for k, v in entry.items()}
        return entry, src
    return None, None

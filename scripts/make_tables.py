"""The paper's tables from the sweep's results, beside the published numbers.

    python -m scripts.make_tables [--results out/reproduce] [--out tables/]
        [--tables node,heterophily,graph,ablation,depth] [--runs 5] [-- SWEEP EXTRA ARGS]

Reads ``<results>/<table>/<cell id>/*/results.json`` for the cells of ``scripts/tables/*.yaml``
and writes, per table, ``<out>/<table>.md`` and ``<out>/<table>.csv`` (plus ``<out>/tables.md``
with all of them); the markdown is printed too. Layout as in the paper: rows = models (or
ablation variants, or depths), columns = datasets. Each cell: mean ± std (ddof 0) of the final
test metric over the runs with #Param in parentheses, then the published figure
(``scripts/tables/published.yaml``) and the difference (ours − paper). SBM accuracies are the
balanced accuracy ``acc`` (``--sbm_metric acc_release`` for the release's definition), fractions
like the paper except in the ablation (%); ZINC is MAE. Where the data has no test split (e.g.
the offline ZINC copy) the validation figure is shown and marked †. A second table per table
gives s/epoch (mean over runs) beside the paper's (one Titan XP) and the AutoGCN/GCN ratio.

Cell marks: ``—`` no result, ``n/i`` not implemented, *running k/5*, *partial k/5* (complete
with fewer runs), *interrupted k/5*, *failed*, *stale* (only results of another experiment).
Only a cell's own results count: one that records another model, dataset or command line than
the sweep gives the cell (the sweep's own test, ``scripts.sweep.mismatch``; devices, paths and
the number of runs aside) is skipped with one stderr line per cell. Results of a sweep run with
extra arguments (``-- --epochs 2``) are recognised when the same arguments follow ``--`` here.
Several result folders for a cell: the newest complete one with all runs, else the newest
complete, else the newest of any status. Malformed or foreign JSON files are reported on stderr
and skipped. Bad input (a table name, ``--runs 0``, ``--out`` naming a file) exits 2 before
anything is written; a failed write (a full disk) exits 1 naming the folder, and leaves every
earlier table file whole.
"""

from __future__ import annotations

if not __package__:  # run as a file: python scripts/make_tables.py
    import _project_root  # noqa: F401

import csv
import errno
import io
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from train.interrupts import startup

with startup():
    from data.files import WriteError
    from scripts.cli import MAX_RUNS, ArgumentParser, check_output, int_in
    from scripts.sweep import (
        EXTRA_TABLES,
        TABLES,
        TABLES_DIR,
        Cell,
        SweepError,
        Table,
        build_command,
        check_extra,
        load_table,
        mismatch,
        newest_first,
        read_results,
        resolve,
    )
    from train.errors import UsageError, run_tool
    from train.results import write_atomic

EXPECTED_RUNS = 5
PUBLISHED = TABLES_DIR / "published.yaml"


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


# ------------------------------------------------------------------------------- reading
def _finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _mean_std(values: list[float]) -> tuple[float, float]:
    m = sum(values) / len(values)
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def metric_values(data: dict, metric: str) -> tuple[str | None, list[float]]:
    """The split used (test, else val) and the metric of every run that has it."""
    runs = [r for r in data.get("runs", []) if isinstance(r, dict)]
    for split in ("test", "val"):
        vals = []
        for r in runs:
            final = r.get("final")
            block = final.get(split) if isinstance(final, dict) else None
            v = _finite(block.get(metric)) if isinstance(block, dict) else None
            if v is not None:
                vals.append(v)
        if vals:
            return split, vals
    return None, []


def pick_result(results: list[tuple[Path, dict]], runs: int) -> tuple[Path, dict] | None:
    """Newest complete with all runs, else newest complete, else newest of any status."""
    if not results:
        return None
    ordered = newest_first(results)
    complete = [r for r in ordered if r[1].get("status") == "complete"]
    full = [r for r in complete if len(r[1].get("runs", [])) >= runs]
    return (full or complete or ordered)[0]


def expected_command(cell: Cell, runs: int, extra: Sequence[str]) -> list[str]:
    """The command line the sweep gives ``cell`` (``extra``: its arguments after ``--``); the
    folders and devices in it are not compared (:func:`scripts.sweep.signature`)."""
    return build_command(cell, "table", "out", runs=runs, extra=list(extra))


def cell_result(cell: Cell, folder: Path, metric: str, runs: int,
                extra: Sequence[str] | None = ()) -> CellResult:
    """Read a cell's folder: state, statistics of ``metric``, #Param, s/epoch.

    Only the cell's own results count: a result with another model, dataset or arguments
    (:func:`scripts.sweep.mismatch`, the sweep's test for ``stale``) is listed in ``stale``
    and never shown as the cell's. ``extra``: the arguments the sweep passed after ``--``
    (``None``: do not compare command lines)."""
    if cell.not_implemented:
        return CellResult(cell, "not implemented")
    results, problems = read_results(folder)
    cmd = None if extra is None else expected_command(cell, runs, extra)
    own, stale = [], []
    for path, data in newest_first(results):
        why = mismatch(data, cmd, cell)
        if why is None:
            own.append((path, data))
        else:
            stale.append(f"{path.parent}: {why}")
    chosen = pick_result(own, runs)
    if chosen is None:
        state = "stale" if stale else "missing"
        return CellResult(cell, state, problems=problems, stale=stale)
    path, data = chosen
    n = len([r for r in data.get("runs", []) if isinstance(r, dict)])
    status = str(data.get("status", "unknown"))
    if status == "complete":
        state = "ok" if n >= runs else "partial"
    elif status in ("running", "interrupted", "failed", "diverged", "killed"):
        state = status
    else:
        state = "unknown"
    res = CellResult(cell, state, runs=n, metric=metric, path=path, problems=problems,
                     stale=stale)
    res.device = str(data["device"]) if data.get("device") else None
    res.split, vals = metric_values(data, metric)
    if vals:
        res.mean, res.std = _mean_std(vals)
    params = data.get("num_params")
    res.params = params if isinstance(params, int) else None
    spe = [_finite(r.get("s_per_epoch")) for r in data.get("runs", []) if isinstance(r, dict)]
    spe = [v for v in spe if v is not None]
    res.s_per_epoch = sum(spe) / len(spe) if spe else None
    ep = [_finite(r.get("epochs")) for r in data.get("runs", []) if isinstance(r, dict)]
    ep = [v for v in ep if v is not None]
    res.epochs = sum(ep) / len(ep) if ep else None
    return res


def load_published(path: str | os.PathLike = PUBLISHED) -> dict:
    """The published numbers (empty, with a warning, when the file is missing or broken)."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        print(f"warning: published numbers unavailable ({err})", file=sys.stderr)
        return {}
    return data if isinstance(data, dict) else {}


def column_metric(col: dict, cell: Cell | None, sbm_metric: str) -> str:
    metric = str(col.get("metric", "acc"))
    dataset = cell.dataset if cell is not None else str(col.get("name", ""))
    if metric == "acc" and dataset.startswith("SBM_"):
        return sbm_metric
    return metric


def collect(table: Table, results_root: str | os.PathLike, runs: int = EXPECTED_RUNS,
            sbm_metric: str = "acc", extra: Sequence[str] | None = ()
            ) -> dict[tuple[str, str], CellResult]:
    """``(row, column) -> CellResult`` for every cell of ``table`` (``extra``: see
    :func:`cell_result`)."""
    cols = {str(c.get("name")): c for c in table.columns}
    out = {}
    for cell in table.cells:
        metric = column_metric(cols.get(cell.column, {}), cell, sbm_metric)
        folder = resolve(results_root) / table.name / cell.id
        out[(cell.row, cell.column)] = cell_result(cell, folder, metric, runs, extra)
    return out


def stale_line(table: str, res: CellResult) -> str:
    """One stderr line for a cell whose folder holds results of another experiment."""
    what = ("shown as stale" if res.state == "stale" else
            f"using {res.path.parent.name if res.path else 'another result'}")
    return (f"warning: {table}/{res.cell.id}: {len(res.stale)} result(s) of another experiment "
            f"not counted ({what}); newest: {res.stale[0]}")


# ------------------------------------------------------------------------------- formatting
def fmt_num(x: float, digits: int, leading_zero: bool, sign: bool = False) -> str:
    """``0.741`` -> ``.741`` (as the paper prints fractions) unless ``leading_zero``."""
    s = f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"
    if not leading_zero:
        s = s.replace("0.", ".", 1) if s.lstrip("+-").startswith("0.") else s
    return s


def fmt_value(res: CellResult, col: dict, expected_runs: int) -> str:
    scale, digits = float(col.get("scale", 1)), int(col.get("digits", 3))
    lead = bool(col.get("leading_zero", False))
    if res.state == "not implemented":
        return "n/i"
    if res.state == "missing":
        return "—"
    if res.state == "stale":
        return "*stale*"
    text = ""
    if res.mean is not None:
        text = (f"{fmt_num(res.mean * scale, digits, lead)}±"
                f"{fmt_num((res.std or 0.0) * scale, digits, lead)}")
        if res.split == "val":
            text += "†"
        if res.params is not None:
            text += f" ({res.params})"
    mark = {"partial": "partial", "running": "running", "interrupted": "interrupted",
            "failed": "failed", "diverged": "diverged", "killed": "killed",
            "unknown": "unknown status"}.get(res.state)
    if mark:
        count = f" {res.runs}/{expected_runs}" if res.state != "failed" or res.runs else ""
        text = f"{text} *{mark}{count}*".strip()
    return text or "—"


def published_entry(published: dict, table: str, row: str, column: str) -> Any:
    entry = published.get(table, {})
    entry = entry.get(row, {}) if isinstance(entry, dict) else {}
    return entry.get(column) if isinstance(entry, dict) else None


def published_sources(table: Table) -> list[dict]:
    """The ``published_from`` list of a table file: the other sections of the published numbers
    to look in, in order, after the table's own (e.g. the successors table shows the paper's
    node, heterophily and graph numbers of AutoGCN, ChebNet and GCN). Each item: ``table`` (a
    section), optional ``scale`` (its numbers times this are in this table's units), ``mark``
    and ``note``: a marked number is from another protocol, shown with the mark and the note
    but never compared (no Δ). :class:`SweepError` for a malformed list."""
    import yaml

    try:
        raw = yaml.safe_load(table.path.read_text())
    except (OSError, yaml.YAMLError):
        return []  # load_table read it a moment ago; nothing to add
    sources = raw.get("published_from") or [] if isinstance(raw, dict) else []
    if not isinstance(sources, list):
        raise SweepError(f"{table.path}: published_from must be a list of mappings")
    for i, src in enumerate(sources):
        if not isinstance(src, dict) or not isinstance(src.get("table"), str) \
                or set(src) - {"table", "scale", "mark", "note"} \
                or _finite(src.get("scale", 1)) is None:
            raise SweepError(f"{table.path}: published_from[{i}]: expected {{table: NAME, "
                             f"scale: NUMBER, mark: TEXT, note: TEXT}}, got {src!r}")
    return sources


def find_published(published: dict, table: Table, sources: list[dict], row: str,
                   column: str) -> tuple[Any, dict | None]:
    """The published entry for a cell, in this table's units, and the ``published_from`` item
    it came from (``None``: the table's own section)."""
    entry = published_entry(published, table.name, row, column)
    if entry is not None:
        return entry, None
    for src in sources:
        entry = published_entry(published, src["table"], row, column)
        if entry is None:
            continue
        scale = float(src.get("scale", 1))
        if isinstance(entry, dict) and scale != 1:
            entry = {k: (v * scale if k in ("mean", "std", "ci95") and _finite(v) is not None
                         else v) for k, v in entry.items()}
        return entry, src
    return None, None


def fmt_published(entry: Any, col: dict, mark: str = "") -> str:
    """``mean±std (#Param)``; ``ci95`` (a confidence half-width, as the successors' papers
    print) takes the place of a missing std, and the table's notes say which it is."""
    if entry is None:
        return "–"
    if not isinstance(entry, dict) or _finite(entry.get("mean")) is None:
        return str(entry)  # e.g. OOM
    digits, lead = int(col.get("digits", 3)), bool(col.get("leading_zero", False))
    mean = float(entry["mean"])
    spread = _finite(entry.get("std"))
    spread = _finite(entry.get("ci95")) if spread is None else spread
    text = f"{fmt_num(mean, digits, lead)}±{fmt_num(spread or 0.0, digits, lead)}{mark}"
    if entry.get("params") is not None:
        text += f" ({entry['params']})"
    return text


def difference(res: CellResult, entry: Any, col: dict) -> float | None:
    if res.mean is None or not isinstance(entry, dict) or _finite(entry.get("mean")) is None:
        return None
    return res.mean * float(col.get("scale", 1)) - float(entry["mean"])


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def render_table(table: Table, results: dict[tuple[str, str], CellResult], published: dict,
                 expected_runs: int = EXPECTED_RUNS) -> tuple[str, list[dict]]:
    """Markdown for one table and its CSV records."""
    sources = published_sources(table)
    has_paper = any(isinstance(published.get(name), dict)
                    for name in [table.name, *(src["table"] for src in sources)])
    has_ci = False
    marked: dict[str, str] = {}  # mark -> note, of the marked numbers shown
    rows = list(table.rows) or list(dict.fromkeys(c.row for c in table.cells))
    lines = [f"### {table.title}", ""]
    header = ["Model" if table.name not in ("ablation", "depth") else
              ("Variant" if table.name == "ablation" else "Depth")]
    for col in table.columns:
        header.append(str(col.get("label", col["name"])))
        if has_paper:
            header += ["paper", "Δ"]
    lines += [_md_row(header), _md_row(["---"] * len(header))]
    records, used_val = [], False
    for row in rows:
        cells = [row]
        for col in table.columns:
            name = str(col["name"])
            res = results.get((row, name))
            entry, src = find_published(published, table, sources, row, name)
            mark = str(src.get("mark", "")) if src else ""
            if mark and entry is not None:
                marked[mark] = str(src.get("note", ""))
            has_ci |= isinstance(entry, dict) and entry.get("std") is None \
                and entry.get("ci95") is not None
            if res is None:  # no cell for this row/column (e.g. DSGCN on SBM)
                cells += ["", *([fmt_published(entry, col, mark), ""] if has_paper else [])]
                continue
            used_val |= res.split == "val" and res.mean is not None
            cells.append(fmt_value(res, col, expected_runs))
            diff = None if mark else difference(res, entry, col)
            if has_paper:
                digits, lead = int(col.get("digits", 3)), bool(col.get("leading_zero", False))
                cells += [fmt_published(entry, col, mark),
                          "" if diff is None else fmt_num(diff, digits, lead, sign=True)]
            records.append(_record(table, res, col, entry, diff, expected_runs))
        lines.append(_md_row(cells))
    notes = []
    if used_val:
        notes.append("† validation split: the data used has no test split.")
    notes.append(f"mean ± std over the finished runs ({expected_runs} expected), (#Param); "
                 "— no result, n/i not implemented; *partial/running/interrupted k/"
                 f"{expected_runs}*: fewer runs than expected; *stale*: only results of "
                 "another model, dataset or arguments (not counted).")
    if has_paper:
        notes.append("paper: published figure; Δ = ours − paper (in the table's units).")
    if has_ci:
        notes.append("± of a published figure without a std: the half-width of its 95% "
                     "bootstrap confidence interval of the mean, as its paper prints it.")
    notes += [note for note in marked.values() if note]
    lines += ["", *notes, ""]
    lines += render_speed(table, results, published)
    return "\n".join(lines), records


def render_speed(table: Table, results: dict[tuple[str, str], CellResult],
                 published: dict) -> list[str]:
    """s/epoch per cell beside the paper's, and the AutoGCN/GCN ratio per column."""
    rows = list(table.rows) or list(dict.fromkeys(c.row for c in table.cells))
    pub = published.get("s_per_epoch", {}) if isinstance(published, dict) else {}
    lines = [f"s/epoch ({table.name}; paper: one Titan XP GPU)", ""]
    header = ["", *(str(c.get("label", c["name"])) for c in table.columns)]
    lines += [_md_row(header), _md_row(["---"] * len(header))]
    for row in rows:
        cells = [row]
        for col in table.columns:
            res = results.get((row, str(col["name"])))
            ours = "" if res is None or res.s_per_epoch is None else f"{res.s_per_epoch:.3g}"
            paper = pub.get(row, {}).get(str(col["name"])) if isinstance(pub.get(row), dict) \
                else None
            cells.append(ours + (f" (paper {paper})" if paper is not None else ""))
        lines.append(_md_row(cells))
    ratio = ["AutoGCN/GCN"]
    for col in table.columns:
        a, g = results.get(("AutoGCN", str(col["name"]))), results.get(("GCN", str(col["name"])))
        text = ""
        if a and g and a.s_per_epoch and g.s_per_epoch:
            text = f"{a.s_per_epoch / g.s_per_epoch:.2f}"
        pa = pub.get("AutoGCN", {}).get(str(col["name"])) if isinstance(pub.get("AutoGCN"),
                                                                        dict) else None
        pg = pub.get("GCN", {}).get(str(col["name"])) if isinstance(pub.get("GCN"), dict) else None
        if pa and pg:
            text += f" (paper {pa / pg:.2f})"
        ratio.append(text.strip())
    if "AutoGCN" in rows and "GCN" in rows:
        lines.append(_md_row(ratio))
    return lines + [""]


CSV_FIELDS = ["table", "row", "column", "cell_id", "status", "runs", "expected_runs", "split",
              "metric", "scale", "mean", "std", "num_params", "s_per_epoch", "epochs_mean",
              "paper_mean", "paper_std", "paper_params", "paper_note", "diff", "result_file",
              "device"]


def _record(table: Table, res: CellResult, col: dict, entry: Any, diff: float | None,
            expected_runs: int) -> dict:
    scale = float(col.get("scale", 1))
    paper = entry if isinstance(entry, dict) else {}
    return {
        "table": table.name, "row": res.cell.row, "column": res.cell.column,
        "cell_id": res.cell.id, "status": res.state, "runs": res.runs,
        "expected_runs": expected_runs, "split": res.split or "", "metric": res.metric or "",
        "scale": scale,
        "mean": "" if res.mean is None else res.mean * scale,
        "std": "" if res.std is None else res.std * scale,
        "num_params": res.params if res.params is not None else "",
        "s_per_epoch": "" if res.s_per_epoch is None else res.s_per_epoch,
        "epochs_mean": "" if res.epochs is None else res.epochs,
        "paper_mean": paper.get("mean", ""), "paper_std": paper.get("std", ""),
        "paper_params": paper.get("params", ""),
        "paper_note": entry if isinstance(entry, str) else (
            f"95% CI half-width {paper['ci95']}" if paper.get("ci95") is not None else ""),
        "diff": "" if diff is None else diff,
        "result_file": str(res.path) if res.path else "",
        "device": res.device or "",
    }


def to_csv(records: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


# ------------------------------------------------------------------------------- main
def load_tables(names: Sequence[str]) -> list[Table]:
    """The tables to make, every name checked first (:class:`UsageError` naming the valid
    ones), so that a typo stops the command before anything is read or written."""
    if not names:
        raise UsageError(f"--tables names no table; valid: {', '.join(TABLES)}")
    tables = []
    for name in dict.fromkeys(names):
        if name not in TABLES + EXTRA_TABLES and not name.endswith((".yaml", ".yml")):
            raise UsageError(f"--tables: unknown table {name!r}; valid: "
                             f"{', '.join(TABLES + EXTRA_TABLES)} (or a table YAML file)")
        try:
            tables.append(load_table(name))
            published_sources(tables[-1])
        except SweepError as err:
            raise UsageError(f"--tables: {err}") from None
    return tables


def write_tables(out: Path, files: dict[str, str]) -> None:
    """Write ``files`` (name -> text) into ``out``, each atomically: a failure (a full disk)
    leaves every earlier version whole and no temporary file behind; :class:`WriteError`
    names the folder."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError(f"cannot create {out}: {err.strerror or err}") from None
    for name, text in files.items():
        write_atomic(out / name, text)


def make_tables(results_root: str | os.PathLike, out_dir: str | os.PathLike | None,
                tables: Sequence[str | Table], runs: int = EXPECTED_RUNS,
                published_path: str | os.PathLike = PUBLISHED,
                sbm_metric: str = "acc", extra: Sequence[str] | None = ()) -> str:
    """Write ``<out_dir>/<table>.md|.csv`` and ``tables.md``; return the markdown.

    ``tables``: names (checked by :func:`load_tables`) or loaded tables. ``extra``: the
    arguments the sweep passed to every cell after ``--``; results run with other arguments
    are stale, shown as such and named on stderr, one line per cell. Nothing is written until
    every table is rendered."""
    loaded = [t if isinstance(t, Table) else load_tables([t])[0] for t in tables]
    published = load_published(published_path)
    root = resolve(results_root)
    if not root.is_dir():
        print(f"warning: no results under {root}; every cell is reported missing",
              file=sys.stderr)
    parts = [f"# AutoGCN reproduction: results from {root} "
             f"({time.strftime('%Y-%m-%d %H:%M')})", ""]
    files: dict[str, str] = {}
    for table in loaded:
        results = collect(table, root, runs, sbm_metric, extra)
        for res in results.values():
            for problem in res.problems:
                print(f"warning: skipped {problem}", file=sys.stderr)
            if res.stale:
                print(stale_line(table.name, res), file=sys.stderr)
        md, records = render_table(table, results, published, runs)
        parts.append(md)
        files[f"{table.name}.md"] = md + "\n"
        files[f"{table.name}.csv"] = to_csv(records)
    text = "\n".join(parts)
    files["tables.md"] = text + "\n"
    if out_dir is not None:
        write_tables(resolve(out_dir), files)
    return text


def check_published(path: str) -> None:
    """:class:`UsageError` unless ``--published`` is a YAML mapping (the default ships with the
    project; a missing or broken one given on the command line is a mistake)."""
    import yaml

    try:
        data = yaml.safe_load(resolve(path).read_text())
    except OSError as err:
        raise UsageError(f"--published {path}: cannot read it ({err.strerror or err})") from None
    except yaml.YAMLError as err:
        raise UsageError(f"--published {path}: invalid YAML ({' '.join(str(err).split())})"
                         ) from None
    if not isinstance(data, dict):
        raise UsageError(f"--published {path}: expected a mapping table -> row -> column")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line. Bad input raises :class:`UsageError` (or exits, from argparse) before
    anything is read or written: exit code 2 under :func:`train.errors.run_tool`, as when run as a
    script; a failed write (a full disk) returns 1 after one line naming the folder."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = ArgumentParser(description=__doc__.split("\n\n")[0],
                       epilog="Arguments after -- are those the sweep passed to every cell "
                              "(e.g. -- --epochs 2 for a smoke run's results); results run "
                              "with other arguments are shown as stale. Exit codes: 0 written, "
                              "1 a write failed, 2 bad input.")
    p.add_argument("--results", default=None,
                   help="the sweep's --out_root (default: out/reproduce in the project)")
    p.add_argument("--out", default=None,
                   help="folder for the .md and .csv files (default: tables in the project)")
    p.add_argument("--tables", default=",".join(TABLES),
                   help=f"comma-separated table names ({', '.join(TABLES)}; also "
                        f"{', '.join(EXTRA_TABLES)}) or table YAML files")
    p.add_argument("--runs", type=int_in(1, MAX_RUNS), default=EXPECTED_RUNS,
                   help="runs expected per cell (default 5)")
    p.add_argument("--published", default=str(PUBLISHED), help="published numbers (YAML)")
    p.add_argument("--sbm_metric", default="acc", choices=("acc", "acc_release"),
                   help="SBM accuracy: balanced (acc) or the release's definition")
    args = p.parse_args(argv)
    tables = load_tables([t.strip() for t in args.tables.split(",") if t.strip()])
    try:  # what the sweep refuses after -- (--runs...) would be ignored here: refused alike
        check_extra(extra, [c for t in tables for c in t.cells])
    except SweepError as err:
        raise UsageError(str(err)) from None
    # paths given are relative to the user's folder; left out, the project's own folders
    results = resolve(args.results, "out/reproduce")
    if args.results is not None and not args.results.strip():
        raise UsageError("--results: must not be empty; give the sweep's --out_root folder")
    if results.exists() and not results.is_dir():
        raise UsageError(f"--results {args.results} is a file; give the sweep's --out_root "
                         "folder")
    check_published(args.published)
    if args.out is not None and not args.out.strip():  # resolved, it would be the folder itself
        raise UsageError("--out: must not be empty; give a folder, e.g. --out tables")
    out = resolve(args.out, "tables")
    check_output(out, "folder", option="--out")
    try:
        text = make_tables(results, out, tables, args.runs, args.published,
                           args.sbm_metric, extra)
    except WriteError as err:  # a full disk, a quota: the earlier files are still whole
        full = err.errno in (errno.ENOSPC, errno.EDQUOT)
        why = os.strerror(err.errno).lower() if full else " ".join(str(err).split())
        print(f"error: cannot write the tables in {out}: {why}; "
              + ("free some space there or " if full else "") + "give another --out",
              file=sys.stderr)
        return 1
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(main))

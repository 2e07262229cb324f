"""The paper's tables from the sweep's results, beside the published numbers.

    python -m scripts.make_tables [--results out/reproduce] [--out tables/]
        [--tables node,heterophily,graph,ablation,depth] [--runs 5]

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
with fewer runs), *interrupted k/5*, *failed*. Several result folders for a cell: the newest
complete one with all runs, else the newest complete, else the newest of any status. Malformed
or foreign JSON files are reported on stderr and skipped; this script never stops on them.
"""

from __future__ import annotations

import csv
import io
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.sweep import (
    TABLES,
    TABLES_DIR,
    Cell,
    SweepError,
    Table,
    load_table,
    newest_first,
    read_results,
    resolve,
)
from train.cli import ArgumentParser

EXPECTED_RUNS = 5
PUBLISHED = TABLES_DIR / "published.yaml"


@dataclass
class CellResult:
    """What the results say about one cell."""

    cell: Cell
    state: str  # ok, partial, running, interrupted, failed, missing, not implemented
    runs: int = 0
    split: str | None = None  # "test", or "val" where the data has no test split
    metric: str | None = None
    mean: float | None = None
    std: float | None = None
    params: int | None = None
    s_per_epoch: float | None = None
    epochs: float | None = None
    path: Path | None = None
    problems: list[str] = field(default_factory=list)


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


def cell_result(cell: Cell, folder: Path, metric: str, runs: int) -> CellResult:
    """Read a cell's folder: state, statistics of ``metric``, #Param, s/epoch."""
    if cell.not_implemented:
        return CellResult(cell, "not implemented")
    results, problems = read_results(folder)
    chosen = pick_result(results, runs)
    if chosen is None:
        return CellResult(cell, "missing", problems=problems)
    path, data = chosen
    n = len([r for r in data.get("runs", []) if isinstance(r, dict)])
    status = str(data.get("status", "unknown"))
    if status == "complete":
        state = "ok" if n >= runs else "partial"
    elif status in ("running", "interrupted", "failed", "diverged", "killed"):
        state = status
    else:
        state = "unknown"
    res = CellResult(cell, state, runs=n, metric=metric, path=path, problems=problems)
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
            sbm_metric: str = "acc") -> dict[tuple[str, str], CellResult]:
    """``(row, column) -> CellResult`` for every cell of ``table``."""
    cols = {str(c.get("name")): c for c in table.columns}
    out = {}
    for cell in table.cells:
        metric = column_metric(cols.get(cell.column, {}), cell, sbm_metric)
        folder = resolve(results_root) / table.name / cell.id
        out[(cell.row, cell.column)] = cell_result(cell, folder, metric, runs)
    return out


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


def fmt_published(entry: Any, col: dict) -> str:
    if entry is None:
        return "–"
    if not isinstance(entry, dict) or _finite(entry.get("mean")) is None:
        return str(entry)  # e.g. OOM
    digits, lead = int(col.get("digits", 3)), bool(col.get("leading_zero", False))
    mean, std = float(entry["mean"]), _finite(entry.get("std")) or 0.0
    text = f"{fmt_num(mean, digits, lead)}±{fmt_num(std, digits, lead)}"
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
    has_paper = isinstance(published.get(table.name), dict)
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
            entry = published_entry(published, table.name, row, name)
            if res is None:  # no cell for this row/column (e.g. DSGCN on SBM)
                cells += ["", *([fmt_published(entry, col), ""] if has_paper else [])]
                continue
            used_val |= res.split == "val" and res.mean is not None
            cells.append(fmt_value(res, col, expected_runs))
            diff = difference(res, entry, col)
            if has_paper:
                digits, lead = int(col.get("digits", 3)), bool(col.get("leading_zero", False))
                cells += [fmt_published(entry, col),
                          "" if diff is None else fmt_num(diff, digits, lead, sign=True)]
            records.append(_record(table, res, col, entry, diff, expected_runs))
        lines.append(_md_row(cells))
    notes = []
    if used_val:
        notes.append("† validation split: the data used has no test split.")
    notes.append(f"mean ± std over the finished runs ({expected_runs} expected), (#Param); "
                 "— no result, n/i not implemented; *partial/running/interrupted k/"
                 f"{expected_runs}*: fewer runs than expected.")
    if has_paper:
        notes.append("paper: published figure; Δ = ours − paper (in the table's units).")
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
              "paper_mean", "paper_std", "paper_params", "paper_note", "diff", "result_file"]


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
        "paper_note": entry if isinstance(entry, str) else "",
        "diff": "" if diff is None else diff,
        "result_file": str(res.path) if res.path else "",
    }


def to_csv(records: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


# ------------------------------------------------------------------------------- main
def make_tables(results_root: str | os.PathLike, out_dir: str | os.PathLike | None,
                tables: list[str], runs: int = EXPECTED_RUNS,
                published_path: str | os.PathLike = PUBLISHED,
                sbm_metric: str = "acc") -> str:
    """Write ``<out_dir>/<table>.md|.csv`` and ``tables.md``; return the markdown."""
    published = load_published(published_path)
    root = resolve(results_root)
    if not root.is_dir():
        print(f"warning: no results under {root}; every cell is reported missing",
              file=sys.stderr)
    parts = [f"# AutoGCN reproduction: results from {root} "
             f"({time.strftime('%Y-%m-%d %H:%M')})", ""]
    out = resolve(out_dir) if out_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for name in tables:
        try:
            table = load_table(name)
        except SweepError as err:
            print(f"warning: skipping table {name}: {err}", file=sys.stderr)
            continue
        results = collect(table, root, runs, sbm_metric)
        for res in results.values():
            for problem in res.problems:
                print(f"warning: skipped {problem}", file=sys.stderr)
        md, records = render_table(table, results, published, runs)
        parts.append(md)
        if out is not None:
            (out / f"{table.name}.md").write_text(md + "\n")
            (out / f"{table.name}.csv").write_text(to_csv(records))
    text = "\n".join(parts)
    if out is not None:
        (out / "tables.md").write_text(text + "\n")
    return text


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", default="out/reproduce", help="the sweep's --out_root")
    p.add_argument("--out", default="tables", help="folder for the .md and .csv files")
    p.add_argument("--tables", default=",".join(TABLES), help="comma-separated table names")
    p.add_argument("--runs", type=int, default=EXPECTED_RUNS, help="runs expected per cell")
    p.add_argument("--published", default=str(PUBLISHED), help="published numbers (YAML)")
    p.add_argument("--sbm_metric", default="acc", choices=("acc", "acc_release"),
                   help="SBM accuracy: balanced (acc) or the release's definition")
    args = p.parse_args(argv)
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    print(make_tables(args.results, args.out, tables, args.runs, args.published,
                      args.sbm_metric))
    return 0


if __name__ == "__main__":
    sys.exit(main())

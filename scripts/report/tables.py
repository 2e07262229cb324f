"""The paper's tables from a sweep's results beside the published numbers, in markdown and CSV
(``python -m scripts.report tables``; what a cell shows: ``docs/reproducing.md``, "Tables")."""

from __future__ import annotations

import csv
import io
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from data.files import write_atomic
from scripts.report import cells
from scripts.report.cells import EXPECTED_RUNS, CellResult
from scripts.sweep import Table, resolve

#: States of a cell with fewer runs than expected, marked after its figure.
PENDING = ("partial", "running", "interrupted", "failed", "diverged", "killed", "unknown")
CSV_FIELDS = ["table", "row", "column", "cell_id", "status", "runs", "expected_runs", "split",
              "metric", "scale", "mean", "std", "num_params", "s_per_epoch", "epochs_mean",
              "paper_mean", "paper_std", "paper_params", "paper_note", "diff", "result_file",
              "device"]


def fmt_num(x: float, col: dict, sign: bool = False) -> str:
    """``x`` in a column's digits; ``0.741`` -> ``.741`` (as the paper prints fractions) unless
    the column says ``leading_zero``."""
    s = f"{x:{'+' if sign else ''}.{int(col.get('digits', 3))}f}"
    if not col.get("leading_zero", False) and s.lstrip("+-").startswith("0."):
        s = s.replace("0.", ".", 1)
    return s


def fmt_pm(mean: float, std: float, col: dict, sep: str = "±") -> str:
    """``mean±std`` in a column's digits."""
    return f"{fmt_num(mean, col)}{sep}{fmt_num(std, col)}"


def md_row(texts: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in texts) + " |"


def fmt_value(res: CellResult, col: dict, expected_runs: int) -> str:
    shown = {"not implemented": "n/i", "missing": "—", "stale": "*stale*"}
    if res.state in shown:
        return shown[res.state]
    text = ""
    if res.mean is not None:
        scale = float(col.get("scale", 1))
        text = fmt_pm(res.mean * scale, (res.std or 0.0) * scale, col) + (
            "†" if res.split == "val" else "") + (
            f" ({res.params})" if res.params is not None else "")
    if res.state in PENDING:
        count = f" {res.runs}/{expected_runs}" if res.state != "failed" or res.runs else ""
        mark = "unknown status" if res.state == "unknown" else res.state
        text = f"{text} *{mark}{count}*".strip()
    return text or "—"


def fmt_published(entry: Any, col: dict, mark: str = "") -> str:
    """``mean±std (#Param)``; ``ci95`` (a confidence half-width, as the successors' papers
    print) takes the place of a missing std, and the table's notes say which it is."""
    if entry is None:
        return "–"
    if not isinstance(entry, dict) or cells.finite(entry.get("mean")) is None:
        return str(entry)  # e.g. OOM
    spread = cells.finite(entry.get("std"))
    spread = cells.finite(entry.get("ci95")) if spread is None else spread
    text = fmt_pm(float(entry["mean"]), spread or 0.0, col) + mark
    return text + (f" ({entry['params']})" if entry.get("params") is not None else "")


def render_table(table: Table, results: dict[str, CellResult], published: dict,
                 expected_runs: int = EXPECTED_RUNS) -> tuple[str, list[dict]]:
    """Markdown for one table (``results``: cell id -> result) and its CSV records."""
    placed = {(r.cell.row, r.cell.column): r for r in results.values()}  # one cell per place
    sources = cells.published_sources(table)
    has_paper = any(isinstance(published.get(name), dict)
                    for name in [table.name, *(src["table"] for src in sources)])
    has_ci, used_val = False, False
    marked: dict[str, str] = {}  # mark -> note, of the marked numbers shown
    header = [{"ablation": "Variant", "depth": "Depth"}.get(table.name, "Model")]
    for col in table.columns:
        header += [str(col.get("label", col["name"]))] + (["paper", "Δ"] if has_paper else [])
    lines = [f"### {table.title}", "", md_row(header), md_row(["---"] * len(header))]
    records = []
    for row in _rows(table):
        shown = [row]
        for col in table.columns:
            res = placed.get((row, str(col["name"])))
            entry, src = cells.find_published(published, table, sources, row, str(col["name"]))
            mark = str(src.get("mark", "")) if src else ""
            if mark and entry is not None:
                marked[mark] = str(src.get("note", ""))
            has_ci |= isinstance(entry, dict) and entry.get("std") is None \
                and entry.get("ci95") is not None
            paper = [fmt_published(entry, col, mark), ""] if has_paper else []  # and Δ
            if res is None:  # no cell for this row/column (e.g. DSGCN on SBM)
                shown += ["", *paper]
                continue
            used_val |= res.split == "val" and res.mean is not None
            diff = None
            if res.mean is not None and not mark and isinstance(entry, dict) \
                    and cells.finite(entry.get("mean")) is not None:  # so has_paper
                diff = res.mean * float(col.get("scale", 1)) - float(entry["mean"])
                paper[1] = fmt_num(diff, col, sign=True)
            shown += [fmt_value(res, col, expected_runs), *paper]
            records.append(_csv_record(table, res, col, entry, diff, expected_runs))
        lines.append(md_row(shown))
    notes = ["† validation split: the data used has no test split."] if used_val else []
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
    lines += ["", *notes, "", *render_speed(table, placed, published)]
    return "\n".join(lines), records


def _rows(table: Table) -> list[str]:
    return list(table.rows) or list(dict.fromkeys(c.row for c in table.cells))


def render_speed(table: Table, placed: dict[tuple[str, str], CellResult],
                 published: dict) -> list[str]:
    """s/epoch per cell (``placed``: (row, column) -> result) beside the paper's, and the
    AutoGCN/GCN ratio per column."""
    pub = published.get("s_per_epoch", {}) if isinstance(published, dict) else {}

    def paper(row: str, col: str) -> Any:
        return pub[row].get(col) if isinstance(pub.get(row), dict) else None

    names = [str(c["name"]) for c in table.columns]
    header = ["", *(str(c.get("label", c["name"])) for c in table.columns)]
    lines = [f"s/epoch ({table.name}; paper: one Titan XP GPU)", "", md_row(header),
             md_row(["---"] * len(header))]
    for row in _rows(table):
        shown = [row]
        for col in names:
            res = placed.get((row, col))
            ours = "" if res is None or res.s_per_epoch is None else f"{res.s_per_epoch:.3g}"
            theirs = paper(row, col)
            shown.append(ours + (f" (paper {theirs})" if theirs is not None else ""))
        lines.append(md_row(shown))
    ratio = ["AutoGCN/GCN"]
    for col in names:
        a, g = placed.get(("AutoGCN", col)), placed.get(("GCN", col))
        text = f"{a.s_per_epoch / g.s_per_epoch:.2f}" if a and g and a.s_per_epoch \
            and g.s_per_epoch else ""
        pa, pg = paper("AutoGCN", col), paper("GCN", col)
        ratio.append((text + (f" (paper {pa / pg:.2f})" if pa and pg else "")).strip())
    if "AutoGCN" in _rows(table) and "GCN" in _rows(table):
        lines.append(md_row(ratio))
    return lines + [""]


def _csv_record(table: Table, res: CellResult, col: dict, entry: Any, diff: float | None,
                expected_runs: int) -> dict:
    """A cell's CSV row (``None`` is written as an empty field)."""
    scale = float(col.get("scale", 1))
    paper = entry if isinstance(entry, dict) else {}
    return {
        "table": table.name, "row": res.cell.row, "column": res.cell.column,
        "cell_id": res.cell.id, "status": res.state, "runs": res.runs,
        "expected_runs": expected_runs, "split": res.split, "metric": res.metric,
        "scale": scale, "mean": None if res.mean is None else res.mean * scale,
        "std": None if res.std is None else res.std * scale, "num_params": res.params,
        "s_per_epoch": res.s_per_epoch, "epochs_mean": res.epochs,
        "paper_mean": paper.get("mean"), "paper_std": paper.get("std"),
        "paper_params": paper.get("params"),
        "paper_note": entry if isinstance(entry, str) else (
            f"95% CI half-width {paper['ci95']}" if paper.get("ci95") is not None else ""),
        "diff": diff, "result_file": res.path, "device": res.device,
    }


def make_tables(results_root: str | os.PathLike, out_dir: str | os.PathLike | None,
                tables: Sequence[str | Table], runs: int = EXPECTED_RUNS,
                published_path: str | os.PathLike = cells.PUBLISHED,
                sbm_metric: str = "acc", extra: Sequence[str] | None = ()) -> str:
    """Write ``<out_dir>/<table>.md|.csv`` and ``tables.md`` (each whole or not at all, none
    before every table is rendered); return the markdown. ``tables``: names (checked by
    :func:`cells.load_tables`) or loaded tables; ``extra``: see :func:`cells.cell_result`.
    Stale, malformed and foreign results are named on stderr, one line per cell."""
    loaded = [t if isinstance(t, Table) else cells.load_tables([t])[0] for t in tables]
    published = cells.load_published(published_path)
    root = resolve(results_root)
    if not root.is_dir():
        print(f"warning: no results under {root}; every cell is reported missing",
              file=sys.stderr)
    parts = [f"# AutoGCN reproduction: results from {root} "
             f"({time.strftime('%Y-%m-%d %H:%M')})", ""]
    files: dict[str, str] = {}
    for table in loaded:
        results = cells.table_results(table, root / table.name, runs, sbm_metric, extra)
        for res in results.values():
            for problem in res.problems:
                print(f"warning: skipped {problem}", file=sys.stderr)
            if res.stale:
                what = ("shown as stale" if res.state == "stale" else
                        f"using {res.path.parent.name if res.path else 'another result'}")
                print(f"warning: {table.name}/{res.cell.id}: {len(res.stale)} result(s) of "
                      f"another experiment not counted ({what}); newest: {res.stale[0]}",
                      file=sys.stderr)
        md, records = render_table(table, results, published, runs)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(records)
        parts.append(md)
        files.update({f"{table.name}.md": md + "\n", f"{table.name}.csv": buf.getvalue()})
    text = "\n".join(parts)
    files["tables.md"] = text + "\n"
    if out_dir is not None:
        out = resolve(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            write_atomic(out / name, content, "free some space there or give another --out")
    return text

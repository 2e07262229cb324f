"""The paper's depth figure: AutoGCN and GCN against the number of layers L.

    python -m scripts.plot_depth [--results out/reproduce/depth] [--out depth.png]

Reads the cells of ``scripts/tables/depth.yaml`` (L = 2, 4, ..., 16 on SBM_CLUSTER and ZINC)
from the sweep's results — ``--results`` is the depth folder (``<out_root>/depth``) or the
sweep's ``--out_root`` — and draws one panel per dataset: test accuracy (SBM_CLUSTER) and test
MAE (ZINC; validation where the data has no test split) against L, mean ± std over the runs,
one line per model. Points from cells with fewer runs than expected are drawn hollow; missing
cells are left out. Headless (matplotlib's Agg backend). Options are checked before anything is
read or drawn (a ``--results`` folder that does not exist is an error, not an empty figure);
exit codes as every tool (``scripts/cli.py``): 2 for bad input, 1 for a failure, 130 on Ctrl-C.
"""

from __future__ import annotations

if not __package__:  # run as a file: python scripts/plot_depth.py
    import _project_root  # noqa: F401

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from train.interrupts import startup

with startup():
    from scripts.cli import (
        MAX_RUNS,
        PLOT_SUFFIXES,
        ArgumentParser,
        UsageError,
        check_output,
        int_in,
        require_in,
    )
    from scripts.make_tables import EXPECTED_RUNS, CellResult, cell_result, column_metric
    from scripts.plot_filters import pyplot
    from scripts.sweep import load_table, resolve
    from train.errors import run_tool

STYLE = {"AUTOGCN": ("AutoGCN", "tab:blue", "o"), "GCN": ("GCN", "tab:orange", "s")}
YLABEL = {"acc": "test accuracy", "acc_release": "test accuracy (release)", "mae": "test MAE"}


def depth_results(results: str | os.PathLike | None, runs: int = EXPECTED_RUNS,
                  sbm_metric: str = "acc") -> dict[str, dict[str, list[tuple[int, CellResult]]]]:
    """``dataset -> model -> [(L, result)]`` sorted by L, for the cells of the depth table
    (:class:`~train.errors.UsageError` when ``results`` is not a folder). ``results`` is relative
    to the current folder; ``None``: the sweep's default, in the project."""
    table = load_table("depth")
    if results is not None and not os.fspath(results).strip():  # it would be the folder itself
        raise UsageError("--results: must not be empty; give the depth results folder or the "
                         "sweep's --out_root")
    folder = resolve(results, "out/reproduce/depth")
    if not folder.is_dir():
        raise UsageError(f"--results {results}: " + (
            "is a file, not a folder" if folder.exists() else
            "no such folder (give the depth results folder or the sweep's --out_root; run "
            "python -m scripts.sweep depth first)"))
    if (folder / table.name).is_dir():  # given the sweep's out_root
        folder = folder / table.name
    cols = {str(c.get("name")): c for c in table.columns}
    out: dict[str, dict[str, list[tuple[int, CellResult]]]] = {}
    for cell in table.cells:
        metric = column_metric(cols.get(cell.column, {}), cell, sbm_metric)
        res = cell_result(cell, folder / cell.id, metric, runs)
        depth = int(cell.overrides.get("L", 0))
        out.setdefault(cell.dataset, {}).setdefault(cell.model, []).append((depth, res))
    for models in out.values():
        for points in models.values():
            points.sort(key=lambda p: p[0])
    return out


def plot_depth(results: str | os.PathLike | None = None,
               out: str | os.PathLike = "depth.png", runs: int = EXPECTED_RUNS) -> Path:
    """Draw the figure; returns the PNG's path (an empty panel says so when nothing ran)."""
    require_in("--runs", runs, 1, MAX_RUNS)
    path = check_output(out, "file", "--out", PLOT_SUFFIXES)
    data = depth_results(results, runs)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(data), figsize=(5.2 * len(data), 3.8), squeeze=False)
    for ax, (dataset, models) in zip(axes[0], data.items()):
        metric, split_val, drawn = None, False, 0
        for model, points in models.items():
            name, colour, marker = STYLE.get(model, (model, None, "^"))
            xs, ys, es, hollow = [], [], [], []
            for depth, res in points:
                if res.mean is None:
                    continue
                metric = metric or res.metric
                split_val |= res.split == "val"
                xs.append(depth)
                ys.append(res.mean)
                es.append(res.std or 0.0)
                hollow.append(res.state != "ok")
            if not xs:
                continue
            drawn += len(xs)
            ax.errorbar(xs, ys, yerr=es, color=colour, marker=marker, capsize=3, label=name,
                        markerfacecolor=colour)
            for x, y, h in zip(xs, ys, hollow):  # fewer runs than expected: hollow marker
                if h:
                    ax.plot([x], [y], marker=marker, color=colour, markerfacecolor="white")
        ylabel = YLABEL.get(metric or ("mae" if dataset == "ZINC" else "acc"), metric or "")
        if split_val:
            ylabel = ylabel.replace("test", "validation")
        ax.set_title(dataset)
        ax.set_xlabel("layers L")
        ax.set_ylabel(ylabel)
        ax.set_xticks(sorted({d for pts in models.values() for d, _ in pts}))
        if drawn:
            ax.legend()
        else:
            ax.text(0.5, 0.5, "no results yet", transform=ax.transAxes, ha="center",
                    color="grey")
        ax.grid(alpha=0.3)
    fig.suptitle("Depth study: AutoGCN vs GCN (hidden size fixed); hollow = fewer than "
                 f"{runs} runs", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _main(argv: Sequence[str] | None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", default=None,
                   help="the depth results folder (or the sweep's --out_root; default: "
                        "out/reproduce/depth in the project)")
    p.add_argument("--out", default="depth.png",
                   help="image to write, ending in " + ", ".join(PLOT_SUFFIXES) +
                        " (default depth.png)")
    p.add_argument("--runs", type=int_in(1, MAX_RUNS), default=EXPECTED_RUNS,
                   help=f"runs expected per cell, 1 to {MAX_RUNS} (default {EXPECTED_RUNS})")
    args = p.parse_args(argv)
    print(f"wrote {plot_depth(args.results, args.out, args.runs)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 2 bad input, 1 failure, 130/143)."""
    return run_tool(_main, argv, interrupted="nothing was written")


if __name__ == "__main__":
    sys.exit(main())

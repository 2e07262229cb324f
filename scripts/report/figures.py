"""The two figures: the depth study from a sweep's results, and ours against the paper's from
the records (``docs/figures/reproduction.png``). Headless (matplotlib's Agg backend)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from scripts.cli import PLOT_SUFFIXES, check_output
from scripts.report import cells
from scripts.report.cells import EXPECTED_RUNS, CellResult
from scripts.sweep import load_table
from train.errors import UsageError

STYLE = {"AUTOGCN": ("AutoGCN", "tab:blue", "o"), "GCN": ("GCN", "tab:orange", "s")}
YLABEL = {"acc": "test accuracy", "acc_release": "test accuracy (release)", "mae": "test MAE"}
#: PNG text key holding the plotted numbers (tests compare them, not the image's bytes).
FIGURE_KEY = "reproduction-data"
#: Marker of a point by its cell's setup (scripts/tables/*.yaml).
SETUP_MARKERS = {"published": "o", "paper_text": "^"}


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or a clear error when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("plotting needs matplotlib: pip install matplotlib") from None
    return plt


def save(fig: Any, path: Path, dpi: int, metadata: dict[str, str] | None = None) -> None:
    """Write the figure whole or not at all (an earlier one stays until the new one is done)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{path.suffix}")
    fig.savefig(tmp, dpi=dpi, **({"metadata": metadata} if metadata else {}))
    pyplot().close(fig)
    os.replace(tmp, path)


def subplot_grid(count: int, cols: int, width: float, height: float, extra: float = 0.0
                 ) -> tuple[Any, list[Any]]:
    """A figure of ``count`` panels of ``width`` x ``height`` inches, ``cols`` a row (the last
    row's spare cells blank, ``extra`` inches added to its height): the figure, the panels."""
    rows = math.ceil(count / cols)
    fig, axes = pyplot().subplots(rows, cols, figsize=(width * cols, height * rows + extra),
                                  squeeze=False)
    for ax in axes.flat[count:]:
        ax.axis("off")
    return fig, list(axes.flat[:count])


# ------------------------------------------------------------------------------- depth
def depth_results(results: str | os.PathLike | None, runs: int = EXPECTED_RUNS,
                  sbm_metric: str = "acc") -> dict[str, dict[str, list[tuple[int, CellResult]]]]:
    """``dataset -> model -> [(L, result)]`` sorted by L, for the cells of the depth table
    (:class:`UsageError` when ``results`` is not a folder). ``results``: the depth folder or
    the sweep's ``--out_root``, relative to the current folder; ``None``: the sweep's default,
    in the project."""
    table = load_table("depth")
    folder = cells.folder_option("--results", None if results is None else os.fspath(results),
                           "out/reproduce/depth", "the depth results folder or the sweep's "
                           "--out_root (python -m scripts.sweep depth writes them)", True)
    if (folder / table.name).is_dir():  # given the sweep's out_root
        folder = folder / table.name
    points = sorted(((int(res.cell.overrides.get("L", 0)), res) for res in
                     cells.table_results(table, folder, runs, sbm_metric).values()),
                    key=lambda p: p[0])
    out: dict[str, dict[str, list[tuple[int, CellResult]]]] = {}
    for depth, res in points:
        out.setdefault(res.cell.dataset, {}).setdefault(res.cell.model, []).append((depth, res))
    return out


def _depth_panel(ax: Any, dataset: str, models: dict[str, list[tuple[int, CellResult]]]
                 ) -> None:
    metric, split_val, drawn = None, False, 0
    for model, points in models.items():
        name, colour, marker = STYLE.get(model, (model, None, "^"))
        shown = [(d, r) for d, r in points if r.mean is not None]
        if not shown:
            continue
        metric = metric or shown[0][1].metric
        split_val |= any(r.split == "val" for _, r in shown)
        drawn += len(shown)
        ax.errorbar([d for d, _ in shown], [r.mean for _, r in shown],
                    yerr=[r.std or 0.0 for _, r in shown], color=colour, marker=marker,
                    capsize=3, label=name, markerfacecolor=colour)
        for d, r in shown:  # fewer runs than expected: hollow marker
            if r.state != "ok":
                ax.plot([d], [r.mean], marker=marker, color=colour, markerfacecolor="white")
    ylabel = YLABEL.get(metric or ("mae" if dataset == "ZINC" else "acc"), metric or "")
    ax.set(title=dataset, xlabel="layers L",
           ylabel=ylabel.replace("test", "validation") if split_val else ylabel,
           xticks=sorted({d for pts in models.values() for d, _ in pts}))
    if drawn:
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no results yet", transform=ax.transAxes, ha="center", color="grey")
    ax.grid(alpha=0.3)


def plot_depth(results: str | os.PathLike | None = None,
               out: str | os.PathLike = "depth.png", runs: int = EXPECTED_RUNS) -> Path:
    """Draw the depth figure: per dataset, the test metric (validation where the data has no
    test split) against L, mean ± std, one line per model, hollow where a cell has fewer runs
    than expected; returns the image's path (an empty panel says so when nothing ran)."""
    path = check_output(out, "file", "--out", PLOT_SUFFIXES)
    data = depth_results(results, runs)
    fig, axes = subplot_grid(len(data), len(data), 5.2, 3.8)
    for ax, (dataset, models) in zip(axes, data.items(), strict=True):
        _depth_panel(ax, dataset, models)
    fig.suptitle("Depth study: AutoGCN vs GCN (hidden size fixed); hollow = fewer than "
                 f"{runs} runs", fontsize=10)
    fig.tight_layout()
    save(fig, path, 120)
    return path


# ------------------------------------------------------------------------------- ours vs paper
def draw_figure(data: dict[str, list[dict]], path: Path) -> None:
    """One panel per dataset: our test figure (y) against the paper's (x), error bars for both,
    a marker per setup; the numbers go into the PNG's text under :data:`FIGURE_KEY`."""
    plt = pyplot()
    names = list(data) or ["(no records)"]
    models = list(dict.fromkeys(p["model"] for points in data.values() for p in points))
    colours = {m: plt.get_cmap("tab10")(i % 10) for i, m in enumerate(models)}
    fig, axes = subplot_grid(len(names), min(3, len(names)), 4.2, 4.0, 0.9)
    for ax, name in zip(axes, names, strict=True):
        points = data.get(name, [])
        for p in points:
            ax.errorbar(p["paper"], p["ours"], xerr=p["paper_std"], yerr=p["ours_std"],
                        fmt=SETUP_MARKERS.get(p.get("setup"), "o"), ms=4, capsize=2,
                        color=colours[p["model"]],
                        mfc="white" if p["n"] < EXPECTED_RUNS else colours[p["model"]])
        # the same range on both axes, so that the diagonal (ours = paper) is at 45 degrees
        lo = min(ax.get_xlim()[0], ax.get_ylim()[0])
        hi = max(ax.get_xlim()[1], ax.get_ylim()[1])
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--")
        ax.set(xlim=(lo, hi), ylim=(lo, hi), aspect="equal", xlabel="paper, test (mean ± std)",
               ylabel="ours, test (mean ± std)")
        ax.set_title(name, fontsize=10)
    handles = [plt.Line2D([], [], marker="o", ls="", color=colours[m], label=m) for m in models]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 5), fontsize=8,
                   frameon=False, title=f"circle: published setup, triangle: paper-text "
                                        f"setup; hollow: fewer than {EXPECTED_RUNS} seeds; "
                                        "dashed: ours = paper", title_fontsize=8)
    fig.tight_layout(rect=(0, 0.17 if handles else 0, 1, 1))
    save(fig, path, 110, {FIGURE_KEY: json.dumps(data, sort_keys=True)})


def figure_text(path: Path) -> dict | None:
    """The plotted numbers stored in a figure written by :func:`draw_figure`."""
    from PIL import Image

    try:
        with Image.open(path) as img:
            return json.loads(img.text.get(FIGURE_KEY, "null"))
    except (OSError, ValueError):
        return None

r"""The learned frequency responses of trained models, one panel per checkpoint over the label
energy (``python -m scripts.diagnose --checkpoint CKPT [CKPT ...]``), and one checkpoint's
responses for the dataset report. docs/layer.md says what is drawn for each model and why
GPR-GNN, whose operator has self-loops, gets its own λ axis ("The λ axis").
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from autogcn.graph import Graph
from scripts import diagnostics as dg
from scripts.cli import PLOT_SUFFIXES, UsageError, check_output
from scripts.report.figures import save, subplot_grid
from train.checkpoint import CheckpointError, load_checkpoint, model_from_checkpoint

COLOURS = {"low": "tab:blue", "mid": "tab:green", "high": "tab:red", "filter": "tab:purple",
           "gain": "tab:brown"}
NAMES = {"low": "low-pass", "mid": "middle (band-stop/-pass)", "high": "high-pass",
         "filter": "F(λ)", "gain": "RMS gain ‖M(λ)‖/√in"}
LAYER_STYLES = ("-", "--", ":", "-.")
# The two spectral axes (docs/layer.md, "The λ axis"): L without self-loops, and GPR-GNN's own.
LAPLACIAN, SELF_LOOPS = "laplacian", "self_loop_laplacian"
AXIS_LABELS = {LAPLACIAN: "λ: eigenvalue of L = I − D^-½ A D^-½",
               SELF_LOOPS: "λ̃: eigenvalue of I − D̃^-½ (A+I) D̃^-½ (GPR-GNN's own operator)"}
SPECTRAL_SEED = 4565  # which SBM training graphs the label energy is averaged over
FILTER_MODELS = "AutoGCN, ChebNet, GPRGNN, BERNNET, CHEBNETII or JACOBICONV"


@dataclass
class Response:
    """One learned filter of a net: ``curves`` ``(rows, points)`` over the grid of its axis."""

    layer: str  # module name in the net
    kind: str  # low / mid / high (AutoGCN), filter (polynomial filters), gain (ChebNet)
    curves: torch.Tensor
    axis: str  # LAPLACIAN or SELF_LOOPS


def learned_responses(net: torch.nn.Module, lam: torch.Tensor) -> list[Response]:
    """Every module of ``net`` with a ``frequency_response`` (AutoGCN, ChebNet and polynomial-
    filter layers, or a decoupled net's filter), outermost first: a filter inside a layer that
    reports it is not counted twice. The axis is :data:`SELF_LOOPS` for a polynomial filter on
    GPR-GNN's operator (``"gcn"``, :mod:`layers.poly_filter`), else :data:`LAPLACIAN`."""
    found: list[Response] = []
    taken: list[str] = []
    for name, module in net.named_modules():
        if not name or not callable(getattr(module, "frequency_response", None)):
            continue
        if any(name.startswith(prefix + ".") for prefix in taken):
            continue
        taken.append(name)
        with torch.no_grad():
            resp = module.frequency_response(lam)
        filt = getattr(module, "filter", module)  # a decoupled net's filter, or the layer's
        axis = SELF_LOOPS if getattr(filt, "operator", None) == "gcn" else LAPLACIAN
        found += [Response(name, kind, curves.detach().double().reshape(-1, lam.numel()), axis)
                  for kind, curves in resp.items()]
    return found


def _filters(path: str | os.PathLike, lam: torch.Tensor
             ) -> tuple[torch.nn.Module, dict, list[Response]]:
    """A checkpoint's net, the checkpoint and its responses; refused without any."""
    ckpt = load_checkpoint(path)
    net = model_from_checkpoint(ckpt)
    responses = learned_responses(net, lam)
    if not responses:
        raise CheckpointError(f"{path}: model {ckpt['config'].get('model')!r} has no learned "
                              f"spectral filter ({FILTER_MODELS})")
    return net, ckpt, responses


def band_means(curves: torch.Tensor, lam: torch.Tensor) -> dict[str, float]:
    """The mean response per band (low/mid/high of :data:`scripts.diagnostics.BANDS`)."""
    band = dg.band_of(lam.double().numpy())
    c = curves.double().numpy()
    return {name: float(c[:, band == i].mean()) if (band == i).any() else math.nan
            for i, (name, _, _) in enumerate(dg.BANDS)}


def checkpoint_filters(path: str, points: int = 201) -> dict[str, Any]:
    """Every learned filter's F(λ) on ``points`` values of λ in [0, 2] and its mean per band, for
    the dataset report; ``axis``: ``laplacian`` or, for GPR-GNN, ``self_loop_laplacian``."""
    lam = torch.linspace(0.0, 2.0, points, dtype=torch.float64)
    net, ckpt, responses = _filters(path, lam)
    modules = dict(net.named_modules())
    out_layers: dict[str, dict[str, Any]] = {}
    for r in responses:
        module = modules[r.layer]
        layer = out_layers.setdefault(r.layer, {
            "name": r.layer, "in_dim": getattr(module, "in_dim", None),
            "out_dim": getattr(module, "out_dim", None), "mode": getattr(module, "mode", None),
            "axis": r.axis, "response": {}, "band_mean_response": {}})
        layer["response"][r.kind] = r.curves.tolist()
        layer["band_mean_response"][r.kind] = band_means(r.curves, lam)
    cfg = ckpt["config"]
    return {"path": str(path), "model": cfg.get("model"), "dataset": cfg.get("dataset"),
            "epoch": ckpt.get("epoch"), "seed": ckpt.get("seed"), "lambda": lam.tolist(),
            "layers": list(out_layers.values())}


# ----------------------------------------------------------------------------- label energy
def label_energies(dataset: str, data_cfg: dict[str, Any], axes: set[str],
                   exact_max_nodes: int, cheb_order: int, spectral_graphs: int
                   ) -> tuple[dict[str, dict], str | None]:
    """The label energy of ``dataset`` on each axis in ``axes`` (``{axis: histogram dict}``,
    as :meth:`scripts.diagnostics.SpectralEnergy.as_dict` or
    :func:`scripts.diagnostics.mean_spectral_energy` give it), and a note when there is none.
    Reads the data only (nothing is generated or written)."""
    from data.loaders import load_graph_dataset, load_node_data
    from train.tasks import task_for_dataset

    def adjacency(g: Graph, axis: str) -> sp.csr_matrix:
        adj = dg.graph_adjacency(g)
        return adj + sp.identity(adj.shape[0], format="csr") if axis == SELF_LOOPS else adj

    level = task_for_dataset(dataset).level
    if level == "single_graph":
        ds = load_node_data(dataset, data_cfg)
        signal = dg.label_signal(ds.labels, ds.num_classes)
        return {axis: dg.spectral_energy(adjacency(ds.graph, axis), signal,
                                         exact_max_nodes=exact_max_nodes,
                                         order=cheb_order).as_dict()
                for axis in sorted(axes)}, None
    if level != "node":
        return {}, f"{dataset} has graph labels only: no node-label energy to draw"
    ds = load_graph_dataset(dataset, {**data_cfg, "progress": False}, write_data=False)
    sample = dg.sample_graphs(ds.train, spectral_graphs, SPECTRAL_SEED)
    return {axis: dg.mean_spectral_energy((adjacency(g, axis), dg.label_signal(y, ds.num_classes))
                                          for g, y in sample)
            for axis in sorted(axes)}, None


# ----------------------------------------------------------------------------- drawing
def band_edges(ax: Any) -> None:
    """The low/mid/high band edges, dotted."""
    for _, lo, _hi in dg.BANDS[1:]:
        ax.axvline(lo, color="grey", linestyle=":", linewidth=0.8)


def energy_bars(ax: Any, hist: dict[str, Any], **style: Any) -> np.ndarray:
    """A histogram's energy per unit λ as bars; returns the bin widths."""
    edges = np.asarray(hist["edges"])
    width = np.diff(edges)
    ax.bar(edges[:-1], np.asarray(hist["energy"]) / width, width=width, align="edge", **style)
    return width


def energy_background(ax: Any, energy: dict | None, what: str = "label") -> None:
    """The band edges and, when ``energy`` has a histogram, its density (grey, on its own
    y axis) behind a panel."""
    band_edges(ax)
    if not energy or "histogram" not in energy:
        return
    twin = ax.twinx()
    energy_bars(twin, energy["histogram"], color="lightgrey", alpha=0.8)
    b = energy.get("bands", {})
    twin.set_ylabel(f"{what} energy density" + (
        f"\n(low {b['low']:.2f} | mid {b['mid']:.2f} | high {b['high']:.2f})" if b else ""),
        fontsize=7)
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)


def draw_panel(ax: Any, title: str, responses: list[Response], lam: np.ndarray,
               energy: dict[str, dict], what: str = "label") -> None:
    """The responses of one net (line style: layer) over ``what`` energy on their axis."""
    axis = responses[0].axis
    energy_background(ax, energy.get(axis), what)
    layers = list(dict.fromkeys(r.layer for r in responses))
    for r in responses:
        style = LAYER_STYLES[layers.index(r.layer) % len(LAYER_STYLES)]
        rows = r.curves.shape[0]
        label = (NAMES.get(r.kind, r.kind) + (f", {r.layer}" if len(layers) > 1 else "")
                 + (f" ({rows} rows)" if rows > 1 else ""))
        for i, curve in enumerate(r.curves.numpy()):  # one legend entry per response
            ax.plot(lam, curve, color=COLOURS.get(r.kind, "black"), linestyle=style,
                    linewidth=1.4 if rows == 1 else 0.9, label=None if i else label)
    ax.axhline(0.0, color="grey", linewidth=0.6)
    ax.set(xlim=(0, 2), ylabel="F(λ)")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(AXIS_LABELS[axis], fontsize=7 if axis == SELF_LOOPS else 8)
    ax.legend(fontsize=6, loc="best")


def _caption(panels: list[tuple[dict, list[Response]]], energy: dict, note: str | None) -> str:
    caption = "Line style: layer. Dotted verticals: the low/mid/high band edges. "
    if energy:
        caption += "Grey: label energy per unit λ on the panel's own axis. "
    else:
        caption += (note or "No label energy (give --data_dir)") + ". "
    if any(r.axis == SELF_LOOPS for _, rs in panels for r in rs):
        caption += ("GPR-GNN is drawn on the spectrum of its own operator (with self-loops), "
                    "which does not map onto L's.")
    return caption


def draw_figure(panels: list[tuple[dict, list[Response]]], lam: np.ndarray, energy: dict,
                caption: str, path: Path) -> None:
    """One panel per checkpoint, up to three a row, and the caption; written to ``path``."""
    nrows = math.ceil(len(panels) / 3)
    fig, axes = subplot_grid(len(panels), min(3, len(panels)), 4.6, 3.4)
    for ax, (ckpt, responses) in zip(axes, panels, strict=True):
        cfg = ckpt["config"]
        title = (f"{cfg.get('model')} on {cfg.get('dataset')} (run {ckpt.get('run')}, seed "
                 f"{ckpt.get('seed')}, epoch {ckpt.get('epoch')})")
        draw_panel(ax, title, responses, lam, energy)
    datasets = sorted({str(c["config"].get("dataset")) for c, _ in panels})
    fig.suptitle(f"Learned frequency responses on {', '.join(datasets)}", fontsize=11)
    fig.text(0.5, 0.005, caption, ha="center", va="bottom", fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.06 / nrows, 1, 1 - 0.06 / nrows))
    save(fig, path, 120)


# ----------------------------------------------------------------------------- the figure
def plot_filters(checkpoints: str | os.PathLike | Sequence[str | os.PathLike],
                 out: str | os.PathLike | None = None, points: int = 201,
                 data_dir: str | os.PathLike | None = None, data_source: str | None = None,
                 exact_max_nodes: int = dg.EXACT_MAX_NODES, cheb_order: int = dg.CHEB_ORDER,
                 spectral_graphs: int = 50) -> Path:
    """Draw the learned responses of every checkpoint in one figure; returns the image's path
    (default, for one checkpoint: ``<checkpoint>_filters.png`` beside it). The output path is
    checked before any checkpoint is read, and every checkpoint before any data is.
    ``data_dir``: draw the label energy of the checkpoints' one dataset, read from there."""
    if isinstance(checkpoints, (str, os.PathLike)):
        checkpoints = [checkpoints]
    if out is None:
        if len(checkpoints) != 1:
            raise UsageError("--out: give the image to write for a figure of several checkpoints")
        out = Path(checkpoints[0]).with_name(Path(checkpoints[0]).stem + "_filters.png")
    path = check_output(out, "file", "--out", PLOT_SUFFIXES)
    lam = torch.linspace(0.0, 2.0, points, dtype=torch.float64)
    panels = [_filters(c, lam)[1:] for c in checkpoints]
    energy: dict[str, dict] = {}
    note = None
    if data_dir is not None:
        datasets = sorted({str(c["config"].get("dataset")) for c, _ in panels})
        if len(datasets) > 1:
            raise UsageError(f"--data_dir: the checkpoints are on {', '.join(datasets)}; the "
                             "label energy is one dataset's: draw one dataset per figure")
        data_cfg = {**(panels[0][0]["config"].get("data") or {}), "data_dir": str(data_dir)}
        if data_source is not None:
            data_cfg["data_source"] = data_source
        energy, note = label_energies(datasets[0], data_cfg,
                                      {r.axis for _, rs in panels for r in rs},
                                      exact_max_nodes, cheb_order, spectral_graphs)
    draw_figure(panels, lam.numpy(), energy, _caption(panels, energy, note), path)
    return path

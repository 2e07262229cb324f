r"""The learned frequency responses of trained models, drawn in one figure over the label energy.

    python -m scripts.diagnose --checkpoint CKPT [CKPT ...] [--out filters.png]
        [--points 201] [--data_dir DIR] [--data_source S] [--exact_max_nodes N]
        [--cheb_order N] [--spectral_graphs N]

Each CKPT is a ``checkpoints/run<i>_seed<s>_best.pt`` written by the main scripts (a dict
with ``state_dict``, ``config``, ``io``, ``seed``, ``run``, ``epoch``); its net is rebuilt from
its config. Every checkpoint gets one panel with every learned filter of its net
(:func:`learned_responses`), one curve per filter, layer (line style) and row:

* AutoGCN: each layer's low-, middle- and high-pass :math:`F(\lambda)` (one curve per bank);
* GPR-GNN, BernNet, ChebNetII, JacobiConv: the filter's :math:`F(\lambda)` (JacobiConv: one curve
  per channel, its per-channel weights);
* ChebNet: the RMS gain :math:`\|M(\lambda)\|_F/\sqrt{in}` of each layer, its filter being a
  matrix polynomial that no scalar describes completely (``layers/cheb_layer.py``).

Models without a spectral filter (GCN, MLP, ...) are refused. With ``--data_dir`` (the folder of
the checkpoints' dataset, which must then be the same for all) each panel is drawn over the
dataset's label energy per unit :math:`\lambda` (grey; :mod:`scripts.diagnostics`: the centred
one-hot labels' energy over the eigenvalues, exact up to ``--exact_max_nodes`` nodes, else the
Chebyshev estimate; SBM: the mean over ``--spectral_graphs`` training graphs; graph-level
datasets have no node labels and get none), with the low/middle/high band edges dotted.

The λ axis. Every response is a function of :math:`\lambda = 1 - \mu` for :math:`\mu` an
eigenvalue of the normalised adjacency the model propagates with. For AutoGCN, ChebNet,
BernNet, ChebNetII and JacobiConv that operator is :math:`D^{-1/2} A D^{-1/2}` without
self-loops, so :math:`\lambda` is an eigenvalue of :math:`L = I - D^{-1/2} A D^{-1/2}`, in
:math:`[0, 2]` on an undirected graph: one axis for all five. GPR-GNN propagates with
:math:`\tilde D^{-1/2}(A + I)\tilde D^{-1/2}`, so its :math:`\tilde\lambda` is an eigenvalue of
:math:`\tilde L = I - \tilde D^{-1/2}(A + I)\tilde D^{-1/2}`, in :math:`[0, 2)`. There is no
map from one axis to the other in general: the two matrices do not share eigenvectors (only on
a :math:`d`-regular graph, where :math:`\tilde L = \tfrac{d}{d+1} L`), so a signal at one
:math:`\lambda` of :math:`L` spreads over many :math:`\tilde\lambda`. GPR-GNN's panel is
therefore drawn on its own axis, labelled so, over the label energy measured on
:math:`\tilde L` (the same measure, on its operator), which is what its response acts on.

Headless (matplotlib's Agg backend). :mod:`scripts.diagnose` is the command line; its dataset
report also takes the responses of one checkpoint from here (:func:`checkpoint_filters`). Bad
input (a checkpoint that is not one, a model without filters, checkpoints of several datasets
with ``--data_dir``, missing data) is :class:`~train.errors.UsageError` or
:class:`~train.errors.CheckpointError`, found before anything is drawn.
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

from scripts.cli import MAX_PLOT_POINTS, PLOT_SUFFIXES, UsageError, check_output, require_in
from train.checkpoint import CheckpointError, load_checkpoint, model_from_checkpoint

COLOURS = {"low": "tab:blue", "mid": "tab:green", "high": "tab:red", "filter": "tab:purple",
           "gain": "tab:brown"}
NAMES = {"low": "low-pass", "mid": "middle (band-stop/-pass)", "high": "high-pass",
         "filter": "F(λ)", "gain": "RMS gain ‖M(λ)‖/√in"}
LAYER_STYLES = ("-", "--", ":", "-.")
# The two spectral axes (module docstring): the Laplacian without self-loops, and GPR-GNN's own.
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


def pyplot():
    """matplotlib.pyplot on the Agg backend, or ``None`` without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def load_net(path: str | os.PathLike) -> tuple[torch.nn.Module, dict]:
    """The net of a checkpoint, with its weights, and the checkpoint dict
    (:class:`~train.checkpoint.CheckpointError` if it is not a usable one)."""
    ckpt = load_checkpoint(path)
    return model_from_checkpoint(ckpt), ckpt


def response_axis(module: torch.nn.Module) -> str:
    """The axis of a module's response: :data:`SELF_LOOPS` for a polynomial filter on GPR-GNN's
    operator (``"gcn"``, :mod:`layers.poly_filter`), else :data:`LAPLACIAN`."""
    filt = getattr(module, "filter", module)
    return SELF_LOOPS if getattr(filt, "operator", None) == "gcn" else LAPLACIAN


def learned_responses(net: torch.nn.Module, lam: torch.Tensor) -> list[Response]:
    """Every module of ``net`` with a ``frequency_response`` (AutoGCN, ChebNet and polynomial-
    filter layers, or a decoupled net's filter), outermost first: a filter inside a layer that
    reports it is not counted twice."""
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
        axis = response_axis(module)
        found += [Response(name, kind, curves.detach().double().reshape(-1, lam.numel()), axis)
                  for kind, curves in resp.items()]
    return found


def band_means(curves: torch.Tensor, lam: torch.Tensor) -> dict[str, float]:
    """The mean response per band (low/mid/high of :data:`scripts.diagnostics.BANDS`)."""
    from scripts import diagnostics as dg

    band = dg.band_of(lam.double().numpy())
    c = curves.double().numpy()
    return {name: float(c[:, band == i].mean()) if (band == i).any() else math.nan
            for i, (name, _, _) in enumerate(dg.BANDS)}


def checkpoint_filters(path: str, points: int = 201) -> dict[str, Any]:
    """Every learned filter's F(λ) on ``points`` values of λ in [0, 2] (AutoGCN's low/mid/high
    per layer, ChebNet's RMS gain per layer, the successors' filter:
    :func:`learned_responses`), plus each one's mean response per band, for the dataset
    report. ``axis`` says which spectrum λ belongs to: ``laplacian`` (L without self-loops, as
    the label energy there) or, for GPR-GNN, ``self_loop_laplacian`` (its own operator, with
    self-loops; the module docstring says why the two cannot be mapped onto each other)."""
    net, ckpt = load_net(path)
    cfg = ckpt["config"]
    lam = torch.linspace(0.0, 2.0, points, dtype=torch.float64)
    responses = learned_responses(net, lam)
    if not responses:
        raise CheckpointError(f"{path}: model {cfg.get('model')!r} has no learned spectral "
                              f"filter ({FILTER_MODELS})")
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
    from scripts import diagnostics as dg
    from train.tasks import task_for_dataset

    def with_loops(adj: sp.spmatrix) -> sp.spmatrix:
        return adj + sp.identity(adj.shape[0], format="csr")

    level = task_for_dataset(dataset).level
    if level == "single_graph":
        ds = load_node_data(dataset, data_cfg)
        adj = dg.graph_adjacency(ds.graph)
        signal = dg.label_signal(ds.labels, ds.num_classes)
        return {axis: dg.spectral_energies(
            with_loops(adj) if axis == SELF_LOOPS else adj, {"label": signal},
            exact_max_nodes=exact_max_nodes, order=cheb_order)["label"].as_dict()
            for axis in sorted(axes)}, None
    if level != "node":
        return {}, f"{dataset} has graph labels only: no node-label energy to draw"
    ds = load_graph_dataset(dataset, {**data_cfg, "progress": False}, write_data=False)
    gen = np.random.default_rng(SPECTRAL_SEED)
    take = min(spectral_graphs, len(ds.train))
    sample = [ds.train[int(i)] for i in np.sort(gen.choice(len(ds.train), take, replace=False))]
    out = {}
    for axis in sorted(axes):
        items = []
        for g, y in sample:
            adj = dg.graph_adjacency(g)
            items.append((with_loops(adj) if axis == SELF_LOOPS else adj,
                          dg.label_signal(y, ds.num_classes)))
        out[axis] = dg.mean_spectral_energy(items)
    return out, None


# ----------------------------------------------------------------------------- drawing
def energy_background(ax, energy: dict | None, what: str = "label") -> None:
    """The low/mid/high band edges (dotted) and, when ``energy`` has a histogram, its density
    per unit λ (grey, on its own y axis) behind a panel."""
    from scripts import diagnostics as dg

    for _, lo, _hi in dg.BANDS[1:]:
        ax.axvline(lo, color="grey", linestyle=":", linewidth=0.8)
    if not energy or "histogram" not in energy:
        return
    h = energy["histogram"]
    edges = np.asarray(h["edges"])
    twin = ax.twinx()
    twin.bar(edges[:-1], np.asarray(h["energy"]) / np.diff(edges), width=np.diff(edges),
             align="edge", color="lightgrey", alpha=0.8)
    b = energy.get("bands", {})
    twin.set_ylabel(f"{what} energy density" + (
        f"\n(low {b['low']:.2f} | mid {b['mid']:.2f} | high {b['high']:.2f})" if b else ""),
        fontsize=7)
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)


def draw_panel(ax, title: str, responses: list[Response], lam: np.ndarray,
               energy: dict[str, dict], what: str = "label") -> None:
    """The responses of one net (line style: layer) over ``what`` energy on their axis."""
    axis = responses[0].axis
    energy_background(ax, energy.get(axis), what)
    layers = list(dict.fromkeys(r.layer for r in responses))
    for r in responses:
        style = LAYER_STYLES[layers.index(r.layer) % len(LAYER_STYLES)]
        rows = r.curves.shape[0]
        for i, curve in enumerate(r.curves.numpy()):
            label = None
            if i == 0:
                label = NAMES.get(r.kind, r.kind)
                if len(layers) > 1:
                    label += f", {r.layer}"
                if rows > 1:
                    label += f" ({rows} rows)"
            ax.plot(lam, curve, color=COLOURS.get(r.kind, "black"), linestyle=style,
                    linewidth=1.4 if rows == 1 else 0.9, label=label)
    ax.axhline(0.0, color="grey", linewidth=0.6)
    ax.set_xlim(0, 2)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(AXIS_LABELS[axis], fontsize=7 if axis == SELF_LOOPS else 8)
    ax.set_ylabel("F(λ)")
    ax.legend(fontsize=6, loc="best")


def _caption(panels: list[tuple[dict, list[Response]]], energy: dict, note: str | None) -> str:
    caption = "Line style: layer. Dotted verticals: the low/mid/high band edges. "
    if energy:
        caption += "Grey: label energy per unit λ on the panel's own axis. "
    elif note:
        caption += note + ". "
    else:
        caption += "No label energy (give --data_dir). "
    if any(r.axis == SELF_LOOPS for _, rs in panels for r in rs):
        caption += ("GPR-GNN is drawn on the spectrum of its own operator (with self-loops), "
                    "which does not map onto L's.")
    return caption


def draw_figure(panels: list[tuple[dict, list[Response]]], lam: np.ndarray, energy: dict,
                caption: str, path: Path) -> None:
    """One panel per checkpoint, up to three a row, and the caption; written to ``path``."""
    plt = pyplot()
    if plt is None:
        raise UsageError("plotting needs matplotlib: pip install matplotlib")
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.4 * nrows), squeeze=False)
    for k, (ckpt, responses) in enumerate(panels):
        cfg = ckpt["config"]
        title = (f"{cfg.get('model')} on {cfg.get('dataset')} (run {ckpt.get('run')}, seed "
                 f"{ckpt.get('seed')}, epoch {ckpt.get('epoch')})")
        draw_panel(axes[k // ncols][k % ncols], title, responses, lam, energy)
    for k in range(len(panels), nrows * ncols):
        axes[k // ncols][k % ncols].axis("off")
    datasets = sorted({str(c["config"].get("dataset")) for c, _ in panels})
    fig.suptitle(f"Learned frequency responses on {', '.join(datasets)}", fontsize=11)
    fig.text(0.5, 0.005, caption, ha="center", va="bottom", fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.06 / nrows, 1, 1 - 0.06 / nrows))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ----------------------------------------------------------------------------- the figure
def _default_out(checkpoints: Sequence[str | os.PathLike]) -> Path:
    if len(checkpoints) != 1:
        raise UsageError("--out: give the image to write for a figure of several checkpoints")
    first = Path(checkpoints[0])
    return first.with_name(first.stem + "_filters.png")


def load_panels(checkpoints: Sequence[str | os.PathLike], lam: torch.Tensor
                ) -> list[tuple[dict, list[Response]]]:
    """Each checkpoint with its learned responses; :class:`UsageError` for a model without."""
    panels = []
    for ckpt_path in checkpoints:
        net, ckpt = load_net(ckpt_path)
        responses = learned_responses(net, lam)
        if not responses:
            raise UsageError(f"{ckpt_path}: model {ckpt['config'].get('model')} has no learned "
                             f"spectral filter to draw ({FILTER_MODELS})")
        panels.append((ckpt, responses))
    return panels


def panel_energies(panels: list[tuple[dict, list[Response]]], data_dir: str | os.PathLike,
                   data_source: str | None, exact_max_nodes: int | None,
                   cheb_order: int | None, spectral_graphs: int
                   ) -> tuple[dict[str, dict], str | None]:
    """:func:`label_energies` of the checkpoints' one dataset, read from ``data_dir``, on the
    axes their responses need."""
    from scripts import diagnostics as dg

    datasets = sorted({str(c["config"].get("dataset")) for c, _ in panels})
    if len(datasets) > 1:
        raise UsageError(f"--data_dir: the checkpoints are on {', '.join(datasets)}; the "
                         "label energy is one dataset's: draw one dataset per figure")
    data_cfg = {**(panels[0][0]["config"].get("data") or {}), "data_dir": str(data_dir)}
    if data_source is not None:
        data_cfg["data_source"] = data_source
    return label_energies(
        datasets[0], data_cfg, {r.axis for _, rs in panels for r in rs},
        dg.EXACT_MAX_NODES if exact_max_nodes is None else exact_max_nodes,
        dg.CHEB_ORDER if cheb_order is None else cheb_order, spectral_graphs)


def plot_filters(checkpoints: str | os.PathLike | Sequence[str | os.PathLike],
                 out: str | os.PathLike | None = None, points: int = 201,
                 data_dir: str | os.PathLike | None = None, data_source: str | None = None,
                 exact_max_nodes: int | None = None, cheb_order: int | None = None,
                 spectral_graphs: int = 50) -> Path:
    """Draw the learned responses of every checkpoint in one figure; returns the PNG's path
    (default, for one checkpoint: ``<checkpoint>_filters.png`` beside it). ``points`` (2 to
    :data:`MAX_PLOT_POINTS`) and the output path are checked before any checkpoint is read,
    and every checkpoint before any data is. ``data_dir``: draw the label energy (module
    docstring)."""
    if isinstance(checkpoints, (str, os.PathLike)):
        checkpoints = [checkpoints]
    checkpoints = list(checkpoints)
    require_in("--points", points, 2, MAX_PLOT_POINTS)
    path = check_output(out if out is not None else _default_out(checkpoints), "file", "--out",
                        PLOT_SUFFIXES)
    lam = torch.linspace(0.0, 2.0, points, dtype=torch.float64)
    panels = load_panels(checkpoints, lam)
    energy: dict[str, dict] = {}
    note = None
    if data_dir is not None:
        energy, note = panel_energies(panels, data_dir, data_source, exact_max_nodes,
                                      cheb_order, spectral_graphs)
    draw_figure(panels, lam.numpy(), energy, _caption(panels, energy, note), path)
    return path

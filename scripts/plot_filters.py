"""Plot the learned low/middle/high-pass frequency responses of a trained AutoGCN.

    python -m scripts.plot_filters CHECKPOINT [--out filters.png] [--points 201]

CHECKPOINT is a ``checkpoints/run<i>_seed<s>_best.pt`` written by the main scripts (a dict with
``state_dict``, ``config``, ``io``, ``seed``, ``run``, ``epoch``). The net is rebuilt from its
config and every :class:`~layers.autogcn_layer.AutoGCNLayer` contributes one subplot with its
filters' :math:`F(\\lambda)` on :math:`\\lambda \\in [0, 2]` (the eigenvalues of the normalised
Laplacian), from ``layer.frequency_response`` — one curve per filter (and bank). Headless
(matplotlib's Agg backend).
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import torch

from layers.autogcn_layer import AutoGCNLayer
from train.checkpoint import (
    CheckpointError,
    load_checkpoint,
    model_from_checkpoint,
)
from train.cli import ArgumentParser

COLOURS = {"low": "tab:blue", "mid": "tab:green", "high": "tab:red"}
NAMES = {"low": "low-pass", "mid": "middle (band-stop/-pass)", "high": "high-pass"}


def pyplot():
    """matplotlib.pyplot on the Agg backend, or a clear error when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("plotting needs matplotlib: pip install matplotlib") from None
    return plt


def load_net(path: str | os.PathLike) -> tuple[torch.nn.Module, dict]:
    """The net of a checkpoint, with its weights, and the checkpoint dict."""
    try:
        ckpt = load_checkpoint(path)
        return model_from_checkpoint(ckpt), ckpt
    except CheckpointError as err:
        raise SystemExit(f"error: {err}") from None


def autogcn_layers(net: torch.nn.Module) -> list[tuple[str, AutoGCNLayer]]:
    return [(name, m) for name, m in net.named_modules() if isinstance(m, AutoGCNLayer)]


def plot_filters(checkpoint: str | os.PathLike, out: str | os.PathLike | None = None,
                 points: int = 201) -> Path:
    """Draw every AutoGCN layer's learned responses; returns the PNG's path."""
    net, ckpt = load_net(checkpoint)
    layers = autogcn_layers(net)
    if not layers:
        raise SystemExit(f"{checkpoint}: model {ckpt['config'].get('model')} has no AutoGCN "
                         "layers")
    plt = pyplot()
    lam = torch.linspace(0.0, 2.0, points)
    ncols = min(4, len(layers))
    nrows = math.ceil(len(layers) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 2.9 * nrows), squeeze=False,
                             sharex=True)
    for k, (_name, layer) in enumerate(layers):
        ax = axes[k // ncols][k % ncols]
        with torch.no_grad():
            resp = layer.frequency_response(lam)
        for f, curves in resp.items():
            for b, curve in enumerate(curves):
                label = NAMES[f] + (f" (bank {b + 1})" if len(curves) > 1 else "")
                ax.plot(lam.numpy(), curve.numpy(), color=COLOURS[f],
                        linestyle="-" if b == 0 else "--", label=label)
        ax.axhline(0.0, color="grey", linewidth=0.6)
        ax.set_title(f"layer {k + 1} ({layer.in_dim}→{layer.out_dim}, {layer.mode})",
                     fontsize=9)
        ax.set_xlim(0, 2)
        if k % ncols == 0:
            ax.set_ylabel("F(λ)")
        if k // ncols == nrows - 1:
            ax.set_xlabel("λ (normalised Laplacian)")
    for k in range(len(layers), nrows * ncols):
        axes[k // ncols][k % ncols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(1, len(labels)), fontsize=8)
    cfg = ckpt["config"]
    fig.suptitle(f"{cfg.get('model')} on {cfg.get('dataset')}: learned filters "
                 f"(run {ckpt.get('run')}, seed {ckpt.get('seed')}, epoch {ckpt.get('epoch')})",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.1 / nrows, 1, 1 - 0.08 / nrows))
    path = Path(out) if out else Path(checkpoint).with_name(Path(checkpoint).stem + "_filters.png")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint", help="a .pt checkpoint written by a main script")
    p.add_argument("--out", default=None,
                   help="PNG to write (default: <checkpoint>_filters.png next to it)")
    p.add_argument("--points", type=int, default=201, help="λ samples on [0, 2]")
    args = p.parse_args(argv)
    print(f"wrote {plot_filters(args.checkpoint, args.out, args.points)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every model's training epoch relative to GCN's, eager and compiled, on reduced SBM_CLUSTER
and ZINC data; models run one after the other, not interleaved with GCN (docs/performance.md)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from functools import partial

import torch

from data.common import GraphDataset
from nets.gnn_net import NetIO
from scripts import cli
from scripts.bench import timing
from scripts.bench.autogcn import load_split
from train.loop import GraphBatches
from train.tasks import Task

MODELS = ["GCN", "MLP", "GraphSage", "GAT", "MoNet", "GIN", "ChebNet", "SGC", "APGCN", "AUTOGCN",
          "GPRGNN", "BERNNET", "CHEBNETII", "JACOBICONV", "OPTBASIS"]
DATASETS = ("SBM_CLUSTER", "ZINC")
SPLITS = {"SBM_CLUSTER": "train", "ZINC": "val"}  # the graphs timed
WIDTH = 10  # characters per column of the table
MAX_GRAPHS = 10_000  # SBM-CLUSTER's training set; ZINC's val split has 1,000
MAX_EPOCHS = 1_000


def epoch_seconds(model: str, dataset: str, ds: GraphDataset, io: NetIO, task: Task,
                  epochs: int, device: torch.device, modes: tuple[bool, ...]) -> timing.Timings:
    """``epochs`` training epochs with the project's loop per mode (False eager, True compiled),
    after one untimed first epoch each; the modes alternate, each with its own net, optimiser
    and batch order."""
    cfg = timing.published(dataset, model)
    if task.adds_self_loops(model, cfg["net_params"]):
        ds = ds.with_self_loops()
    steps = {}
    for compiled, net in timing.twins(model, cfg, io, device, modes).items():
        opt = torch.optim.Adam(net.parameters(), lr=cfg["params"]["init_lr"])
        loop = GraphBatches(ds, task, 128, device, generator=torch.Generator().manual_seed(0))
        steps[compiled] = partial(loop.train_epoch, net, opt)
    return timing.interleave(steps, epochs, device)


def _cell(value: float | None, digits: int) -> str:
    return f"{'-':>{WIDTH}}" if value is None else f"{value:{WIDTH}.{digits}f}"


def build_parser() -> argparse.ArgumentParser:
    parser = timing.new_parser("models", __doc__, "compile", "clock", "zinc_dir", "device")
    parser.add_argument("--epochs", type=cli.int_in(1, MAX_EPOCHS), default=3,
                        help=f"timed epochs per model (1 to {MAX_EPOCHS}; default 3)")
    parser.add_argument("--graphs", type=cli.int_in(1, MAX_GRAPHS), default=256,
                        help=f"graphs per dataset (1 to {MAX_GRAPHS}; default 256)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    return parser


def print_header(dataset: str, ds: GraphDataset, epochs: int, device: torch.device) -> None:
    stats = ds.train.stats()
    print(f"# {dataset}: {stats['graphs']} graphs, {stats['mean_nodes']:.1f} nodes, "
          f"{stats['mean_edges']:.0f} edges per graph; device {device}, "
          f"{torch.get_num_threads()} thread(s); median of {epochs} epochs", flush=True)
    print(" " * 11 + "".join(f"{w:>{WIDTH}}" for w in (
        "eager", "compiled", "compiled/", "compile", "eager/", "compiled/")), flush=True)
    print(f"{'model':<11}" + "".join(f"{w:>{WIDTH}}" for w in (
        "s/epoch", "s/epoch", "eager", "warm-up s", "GCN", "GCN"))
        + "   default mode of a full training run", flush=True)


def run_dataset(dataset: str, models: list[str], args: argparse.Namespace,
                device: torch.device, modes: tuple[bool, ...]) -> None:
    """One row per model (GCN first), then the AutoGCN ratio lines."""
    split, io, task = load_split(dataset, args.graphs, args, SPLITS[dataset])
    ds = GraphDataset(dataset, split, None, None, in_dim=io.in_dim, num_classes=io.num_classes)
    print_header(dataset, ds, args.epochs, device)
    seconds: dict[tuple[str, bool], float] = {}
    defaults: dict[str, bool | None] = {}
    for model in models:
        t = epoch_seconds(model, dataset, ds, io, task, args.epochs, device, modes)
        seconds.update({(model, m): t.median(m) for m in modes})
        defaults[model], why = timing.default_mode(dataset, model, device, args.compile)
        eager, comp = (seconds.get((model, m)) for m in (False, True))
        over = [seconds[model, m] / seconds["GCN", m] if m in modes else None
                for m in (False, True)]
        print(f"{model:<11}{_cell(eager, 3)}{_cell(comp, 3)}"
              f"{_cell(comp / eager if eager and comp else None, 2)}"
              f"{_cell(t.warm_up(True) if comp else None, 1)}{_cell(over[0], 2)}"
              f"{_cell(over[1], 2)}   {why}", flush=True)
    if "AUTOGCN" in models:
        print(timing.gcn_ratio_line(dataset, seconds, defaults)[1], flush=True)
        if len(modes) == 2:
            print(timing.compiled_over_eager_line("AutoGCN", dataset, seconds["AUTOGCN", False],
                                           seconds["AUTOGCN", True])[1], flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    device, modes = timing.start(args)
    models = ["GCN"] + [m for m in args.models if m != "GCN"]
    for dataset in args.datasets:
        run_dataset(dataset, models, args, device, modes)
    return 0

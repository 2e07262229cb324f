"""Training time per epoch of every model relative to GCN, eager and compiled, on reduced
SBM-CLUSTER and ZINC data.

    OMP_NUM_THREADS=1 python -m scripts.bench models [--epochs 3] [--graphs 256]
        [--compile both|on|off] [--models GCN AUTOGCN ...]

For each dataset every model is built from its published config (``configs/``) and measured
eager and compiled (``train/compilation.py``; the compiled net is a deep copy of the eager one,
so both start from the same weights): one untimed first epoch each, then ``--epochs`` timed
epochs with the project's training loop (batch 128, the task's loss, Adam), the two modes
alternating. Printed per model: eager and compiled median s/epoch, compiled/eager (below 1:
compiled is faster), the compile warm-up (first epoch less the median) and each mode's ratio to
GCN's, measured in the same process on the same data; then, as ``bench autogcn`` does,
``AutoGCN/GCN epoch time ratio on <DATASET>: R`` with both models in the mode a full training
run would choose on this device, and ``compiled/eager AutoGCN epoch time on <DATASET>: R``.
``--compile`` and ``--clock`` as every benchmark (:mod:`scripts.bench.timing`). The compiler's
in-memory caches are cleared before each model, so each compiles as in a run of its own (its
on-disk cache stays: a repeated run warms up faster). Models are measured one after the other,
not interleaved with GCN: on a busy machine their ratios to GCN carry its load changes.

Data: the first ``--graphs`` SBM-CLUSTER training graphs, generated in memory, and the first
``--graphs`` molecules of ZINC's ``val.pickle`` (``--zinc_dir``). The paper's ratios (Titan XP,
full data): AutoGCN/GCN 1.38 on SBM-CLUSTER, 1.48 on ZINC. Timings on a shared machine are
indicative only. Options are checked before anything is loaded (``scripts/cli.py``); bad input
exits 2 with one line, a failure 1, Ctrl-C 130.
"""

from __future__ import annotations

import argparse
import copy
import statistics
from collections.abc import Sequence
from functools import partial

import torch

from data.common import DataError, GraphDataset
from nets.gnn_net import NetIO
from nets.registry import build_net, uses_self_loops
from scripts import cli
from scripts.bench.timing import (
    CONFIGS,
    ROOT,
    add_clock,
    add_compile,
    add_device,
    add_zinc_dir,
    compiled_over_eager_line,
    default_mode,
    gcn_ratio_line,
    modes_to_measure,
    set_clock,
    timed,
)
from train import compilation
from train.config import load_config
from train.errors import run_tool
from train.loop import GraphBatches
from train.tasks import SBM, ZINC, Task

PROG = "python -m scripts.bench models"
MODELS = ["GCN", "MLP", "GraphSage", "GAT", "MoNet", "GIN", "ChebNet", "SGC", "APGCN", "AUTOGCN",
          "GPRGNN", "BERNNET", "CHEBNETII", "JACOBICONV"]
DATASETS = ("SBM_CLUSTER", "ZINC")


def sbm_cluster(n: int) -> tuple[GraphDataset, NetIO, Task]:
    from data.sbm import generate_sbm_split

    split = generate_sbm_split("SBM_CLUSTER", "train", n=n)
    ds = GraphDataset("SBM_CLUSTER", split, None, None, in_dim=7, num_classes=6)
    return ds, NetIO("node", "embedding", 7, 6), SBM


def zinc(n: int, data_dir: str) -> tuple[GraphDataset, NetIO, Task]:
    from data.molecules import load_zinc

    full = load_zinc(data_dir, max_graphs=n)
    if full.val is None:
        raise DataError(f"no val.pickle under {data_dir} (--zinc_dir): the benchmark times "
                        "ZINC's validation molecules")
    ds = GraphDataset("ZINC", full.val, None, None, in_dim=full.in_dim, num_classes=1,
                      num_edge_types=full.num_edge_types)
    return ds, NetIO("graph", "embedding", full.in_dim, 1), ZINC


def epoch_seconds(model: str, dataset: str, ds: GraphDataset, io: NetIO, task: Task,
                  epochs: int, device: torch.device, modes: tuple[bool, ...]
                  ) -> dict[bool, tuple[float, float]]:
    """Per mode (False eager, True compiled): the median wall time of ``epochs`` training epochs
    after one untimed first epoch, and the warm-up (the first epoch less that median). The
    modes alternate, each with its own copy of the net, optimiser and batch order."""
    cfg = load_config(ROOT / CONFIGS[dataset].format(model))
    if uses_self_loops(model, cfg["net_params"]):
        ds = ds.with_self_loops()
    torch.manual_seed(0)
    net = build_net(model, io, cfg["net_params"]).to(device)
    if True in modes:
        # Each model compiles as in a run of its own: nothing reused from the models before
        # it (a fair warm-up), and their variants of the shared regions (widths, flags) do
        # not pile up to the compiler's recompile limit, past which a region runs eagerly.
        torch._dynamo.reset()
    runs = {}
    for compiled in modes:
        twin = copy.deepcopy(net)
        if compiled:
            compilation.compile_regions(twin)
        opt = torch.optim.Adam(twin.parameters(), lr=cfg["params"]["init_lr"])
        loop = GraphBatches(ds, task, 128, device, generator=torch.Generator().manual_seed(0))
        runs[compiled] = (twin, opt, loop)
    first: dict[bool, float] = {}
    times: dict[bool, list[float]] = {m: [] for m in modes}
    for i in range(epochs + 1):
        for m in (modes if i % 2 else modes[::-1]):
            twin, opt, loop = runs[m]
            sec = timed(partial(loop.train_epoch, twin, opt), device)
            if i:
                times[m].append(sec)
            else:
                first[m] = sec
    return {m: (statistics.median(times[m]), max(first[m] - statistics.median(times[m]), 0.0))
            for m in modes}


WIDTH = 10  # characters per column of the table


def _cell(value: float | None, digits: int) -> str:
    return f"{'-':>{WIDTH}}" if value is None else f"{value:{WIDTH}.{digits}f}"


MAX_GRAPHS = 10_000  # SBM-CLUSTER's training set; ZINC's val split has 1,000
MAX_EPOCHS = 1_000


def build_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=cli.int_in(1, MAX_EPOCHS), default=3,
                        help=f"timed epochs per model (1 to {MAX_EPOCHS}; default 3)")
    parser.add_argument("--graphs", type=cli.int_in(1, MAX_GRAPHS), default=256,
                        help=f"graphs per dataset (1 to {MAX_GRAPHS}; default 256)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    add_compile(parser)
    add_clock(parser)
    add_zinc_dir(parser)
    add_device(parser)
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
    ds, io, task = sbm_cluster(args.graphs) if dataset == "SBM_CLUSTER" else \
        zinc(args.graphs, args.zinc_dir)
    print_header(dataset, ds, args.epochs, device)
    seconds: dict[tuple[str, bool], float] = {}
    defaults: dict[str, bool | None] = {}
    for model in models:
        timing = epoch_seconds(model, dataset, ds, io, task, args.epochs, device, modes)
        seconds.update({(model, m): t[0] for m, t in timing.items()})
        defaults[model], why = default_mode(dataset, model, device, args.compile)
        eager, comp = timing.get(False), timing.get(True)
        over = [seconds[model, m] / seconds["GCN", m] if m in timing else None
                for m in (False, True)]
        print(f"{model:<11}{_cell(eager and eager[0], 3)}{_cell(comp and comp[0], 3)}"
              f"{_cell(comp[0] / eager[0] if eager and comp else None, 2)}"
              f"{_cell(comp and comp[1], 1)}{_cell(over[0], 2)}{_cell(over[1], 2)}   {why}",
              flush=True)
    if "AUTOGCN" in models:
        print(gcn_ratio_line(dataset, seconds, defaults)[1], flush=True)
        if len(modes) == 2:
            print(compiled_over_eager_line("AutoGCN", dataset, seconds["AUTOGCN", False],
                                           seconds["AUTOGCN", True])[1], flush=True)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    device = torch.device(args.device)
    set_clock(args.clock, device)
    models = ["GCN"] + [m for m in args.models if m != "GCN"]
    modes, why_not = modes_to_measure(args.compile, device)
    if why_not:
        print(why_not, flush=True)
    for dataset in args.datasets:
        run_dataset(dataset, models, args, device, modes)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 2 bad input, 1 failure, 130/143)."""
    return run_tool(_main, argv)

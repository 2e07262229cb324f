"""One AutoGCN layer and one GCN layer against their floors, eager and compiled.

    OMP_NUM_THREADS=1 python -m scripts.bench layers [--graphs 128] [--repeats 15]
        [--device cpu|cuda[:i]] [--clock wall|cpu]

On one batch of the first ``--graphs`` SBM_CLUSTER training graphs (generated in memory), it
times forward + backward of a hidden layer at the published widths (AutoGCN 90 → 90, GCN
150 → 150; residual, graph norm, batch norm, ReLU, as in ``configs/``), eager and compiled
(``train/compilation.py``, the regions a training run on this device compiles), beside the
layer's floor: the products it cannot avoid, forward and backward, with nothing elementwise
around them — for AutoGCN the two sparse products (``Ãx``, ``Ã²x``) and the three 90 × 90 filter
projections, for GCN one sparse product and one 150 × 150 projection. All six alternate within
every repeat (order rotated); the median is printed, in ms and relative to the eager GCN layer.
Options are checked before anything is loaded; bad input exits 2 with one line.
"""

from __future__ import annotations

import argparse
import copy
import statistics
from collections.abc import Callable, Sequence

import torch

from autogcn.propagation import normalized_adjacency
from data.common import collate_graphs
from layers.autogcn_layer import AutoGCNLayer
from layers.gcn_layer import GCNLayer
from scripts import cli
from scripts.bench.timing import add_clock, add_device, described, rotated_rounds, set_clock, timed
from train import compilation
from train.errors import run_tool

PROG = "python -m scripts.bench layers"
WIDTHS = {"AutoGCN": 90, "GCN": 150}  # the published hidden widths on SBM_CLUSTER and ZINC


def candidates(graphs: int, device: torch.device) -> dict[str, Callable[[], None]]:
    """Forward + backward of each measured thing, by name."""
    from data.sbm import generate_sbm_split

    split = generate_sbm_split("SBM_CLUSTER", "train", n=graphs)
    g, _, snorm_n = collate_graphs([split[i] for i in range(len(split))])
    g, snorm_n = g.to(device), snorm_n.to(device)
    op = normalized_adjacency(g)
    n = g.num_nodes()

    def features(width: int) -> torch.Tensor:
        return torch.randn(n, width, device=device, requires_grad=True)

    def layer_step(layer: torch.nn.Module, x: torch.Tensor) -> Callable[[], None]:
        return lambda: layer(g, x, snorm_n).sum().backward()

    torch.manual_seed(0)
    x_auto, x_gcn = features(WIDTHS["AutoGCN"]), features(WIDTHS["GCN"])
    auto = AutoGCNLayer(WIDTHS["AutoGCN"], WIDTHS["AutoGCN"], residual=True).to(device)
    gcn = GCNLayer(WIDTHS["GCN"], WIDTHS["GCN"], residual=True).to(device)
    auto_c, gcn_c = copy.deepcopy(auto), copy.deepcopy(gcn)
    compilation.compile_regions(auto_c)
    compilation.compile_regions(gcn_c)
    inputs = torch.randn(3, n, WIDTHS["AutoGCN"], device=device, requires_grad=True)

    def auto_floor() -> None:
        h1 = op(x_auto)
        hops = h1.sum() + op(h1).sum()
        (hops + torch.bmm(inputs, auto.weight.reshape(3, *auto.weight.shape[-2:])).sum()
         ).backward()

    def gcn_floor() -> None:
        (op(x_gcn) @ gcn.conv.weight).sum().backward()

    return {"AutoGCN eager": layer_step(auto, x_auto),
            "AutoGCN compiled": layer_step(auto_c, x_auto),
            "AutoGCN floor": auto_floor,
            "GCN eager": layer_step(gcn, x_gcn),
            "GCN compiled": layer_step(gcn_c, x_gcn),
            "GCN floor": gcn_floor}


def measure(cands: dict[str, Callable[[], None]], repeats: int,
            device: torch.device) -> dict[str, float]:
    """Median seconds of each, after two untimed calls (the compiled ones compile there)."""
    for fn in cands.values():
        fn()
        fn()
    times: dict[str, list[float]] = {name: [] for name in cands}
    for name in rotated_rounds(list(cands), repeats):
        times[name].append(timed(cands[name], device))
    return {name: statistics.median(t) for name, t in times.items()}


def build_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=cli.int_in(1, 10_000), default=128,
                        help="SBM_CLUSTER graphs in the batch (1 to 10000; default 128)")
    parser.add_argument("--repeats", type=cli.int_in(1, 1000), default=15,
                        help="timed rounds (1 to 1000; default 15)")
    add_device(parser)
    add_clock(parser)
    return parser


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    device = torch.device(args.device)
    set_clock(args.clock, device)
    why_not = compilation.unavailable(device)
    if why_not is not None:
        print(f"compiling is not possible here ({why_not}); the compiled rows run eagerly")
    cands = candidates(args.graphs, device)
    print(f"# one hidden layer, forward + backward, {args.graphs} SBM_CLUSTER graphs in one "
          f"batch; {device} ({described(device)}), torch {torch.__version__}; median of "
          f"{args.repeats} interleaved repeats, {args.clock} clock")
    seconds = measure(cands, args.repeats, device)
    base = seconds["GCN eager"]
    print(f"{'':18} {'ms':>8} {'x GCN eager':>12}")
    for name, s in seconds.items():
        print(f"{name:18} {s * 1e3:8.1f} {s / base:12.2f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 2 bad input, 1 failure, 130/143)."""
    return run_tool(_main, argv)

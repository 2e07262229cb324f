"""One AutoGCN and one GCN hidden layer, eager and compiled, against their floors: the products
they cannot avoid (docs/performance.md: what it measures, and the figures it gave)."""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable, Sequence

import torch

from autogcn.propagation import normalized_adjacency
from data.common import collate_graphs
from layers.autogcn_layer import AutoGCNLayer
from layers.gcn_layer import GCNLayer
from scripts import cli
from scripts.bench.timing import described, interleave, new_parser, start
from train import compilation

WIDTHS = {"AutoGCN": 90, "GCN": 150}  # the published hidden widths on SBM_CLUSTER and ZINC


def candidates(graphs: int, device: torch.device, compiled: bool
               ) -> dict[str, Callable[[], None]]:
    """Forward + backward of each measured thing, by name."""
    from data.sbm import generate_sbm_split

    split = generate_sbm_split("SBM_CLUSTER", "train", n=graphs)
    g, _, snorm_n = collate_graphs([split[i] for i in range(len(split))])
    g, snorm_n = g.to(device), snorm_n.to(device)
    op = normalized_adjacency(g)
    n = g.num_nodes()
    torch.manual_seed(0)
    x = {name: torch.randn(n, w, device=device, requires_grad=True)
         for name, w in WIDTHS.items()}
    layers = {name: kind(WIDTHS[name], WIDTHS[name], residual=True).to(device)
              for name, kind in (("AutoGCN", AutoGCNLayer), ("GCN", GCNLayer))}
    inputs = torch.randn(3, n, WIDTHS["AutoGCN"], device=device, requires_grad=True)
    auto = layers["AutoGCN"]

    def auto_floor() -> None:  # the two sparse products and the three filter projections
        h1 = op(x["AutoGCN"])
        hops = h1.sum() + op(h1).sum()
        (hops + torch.bmm(inputs, auto.weight.reshape(3, *auto.weight.shape[-2:])).sum()
         ).backward()

    def gcn_floor() -> None:  # one sparse product and one projection
        (op(x["GCN"]) @ layers["GCN"].conv.weight).sum().backward()

    def step(layer: torch.nn.Module, name: str) -> Callable[[], None]:
        return lambda: layer(g, x[name], snorm_n).sum().backward()

    out = {}
    for name, layer in layers.items():
        out[f"{name} eager"] = step(layer, name)
        if compiled:
            twin = copy.deepcopy(layer)
            compilation.compile_regions(twin)
            out[f"{name} compiled"] = step(twin, name)
        out[f"{name} floor"] = auto_floor if name == "AutoGCN" else gcn_floor
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = new_parser("layers", __doc__, "device", "clock")
    parser.add_argument("--graphs", type=cli.int_in(1, 10_000), default=128,
                        help="SBM_CLUSTER graphs in the batch (1 to 10000; default 128)")
    parser.add_argument("--repeats", type=cli.int_in(1, 1000), default=15,
                        help="timed rounds (1 to 1000; default 15)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    device, modes = start(args)
    cands = candidates(args.graphs, device, True in modes)
    print(f"# one hidden layer, forward + backward, {args.graphs} SBM_CLUSTER graphs in one "
          f"batch; {device} ({described(device)}), torch {torch.__version__}; median of "
          f"{args.repeats} interleaved repeats, {args.clock} clock")
    # two untimed calls each: the compiled ones compile there
    seconds = interleave(cands, args.repeats, device, untimed=2).medians()
    base = seconds["GCN eager"]
    print(f"{'':18} {'ms':>8} {'x GCN eager':>12}")
    for name, s in seconds.items():
        print(f"{name:18} {s * 1e3:8.1f} {s / base:12.2f}")
    return 0

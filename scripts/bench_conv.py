"""Forward+backward time of one AutoGCNConv beside PyG's GCNConv on PubMed, in one process.

    python -m scripts.bench_conv --root DIR [--repeats 20] [--hidden 16]

``DIR`` is the PyG root of ``examples/pyg_autogcn.py`` (``DIR/PubMed/raw/ind.pubmed.*``). Both
convs map PubMed's 500 row-normalised features to ``--hidden`` columns on the same graph, with
``cached=True`` (the operator built once, as in transductive training) and without (rebuilt per
call); the calls alternate between the models so that a load change on the machine hits both.
Prints the median and the fastest of ``--repeats`` timed calls per model and setting.
"""

from __future__ import annotations

if not __package__:  # run as a file: python scripts/bench_conv.py
    import _project_root  # noqa: F401

import argparse
import statistics
import sys
import time
from pathlib import Path

from train.interrupts import startup

with startup():
    import torch

    from autogcn import AutoGCNConv


def step(conv: torch.nn.Module, x: torch.Tensor, edge_index: torch.Tensor) -> float:
    """Seconds for one forward and backward pass."""
    start = time.perf_counter()
    conv(x, edge_index).square().mean().backward()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, type=Path, metavar="DIR")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=16)
    args = parser.parse_args(argv)
    from torch_geometric.datasets import Planetoid
    from torch_geometric.nn import GCNConv
    from torch_geometric.transforms import NormalizeFeatures

    data = Planetoid(str(args.root), name="PubMed", transform=NormalizeFeatures())[0]
    x = data.x.requires_grad_(False)
    print(f"PubMed: {data.num_nodes} nodes, {data.num_edges} edges, {data.num_features} -> "
          f"{args.hidden} columns; torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    for cached in (True, False):
        torch.manual_seed(0)
        convs = {"AutoGCNConv": AutoGCNConv(data.num_features, args.hidden, cached=cached),
                 "GCNConv": GCNConv(data.num_features, args.hidden, cached=cached)}
        times: dict[str, list[float]] = {name: [] for name in convs}
        for _ in range(2):  # warm-up (and, cached, the one operator build)
            for conv in convs.values():
                step(conv, x, data.edge_index)
        for _ in range(args.repeats):
            for name, conv in convs.items():
                times[name].append(step(conv, x, data.edge_index))
        for name, t in times.items():
            print(f"{name:<12} cached={str(cached):<5}  median {1e3 * statistics.median(t):7.2f} "
                  f"ms  fastest {1e3 * min(t):7.2f} ms  ({args.repeats} forward+backward)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Training time per epoch of every model relative to GCN, on reduced SBM-CLUSTER and ZINC data.

    OMP_NUM_THREADS=1 python -m scripts.benchmark_baselines [--epochs 3] [--graphs 256]

For each dataset the models are built from their published configs (``configs/``), trained for
one untimed warm-up epoch and ``--epochs`` timed epochs with the project's training loop
(batch 128, the task's loss, Adam), and the median epoch time is divided by GCN's, measured in
the same process on the same data. Data: the first ``--graphs`` SBM-CLUSTER training graphs,
generated in memory, and the first ``--graphs`` molecules of ZINC's ``val.pickle``
(``--zinc_dir``). The paper's ratios (Titan XP, full data): AutoGCN/GCN 1.38 on SBM-CLUSTER,
1.48 on ZINC. Timings on a shared machine are indicative only. Options are checked before
anything is loaded (``train/cli.py``); bad input exits 2 with one line, a failure 1, Ctrl-C 130.
"""

from __future__ import annotations

if not __package__:  # run as a file: python scripts/benchmark_baselines.py
    import _project_root  # noqa: F401

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence

from train.interrupts import startup

with startup("nothing was written"):  # Ctrl-C or SIGTERM while torch loads: one line
    import torch

    from data.common import DataError, GraphDataset
    from nets.gnn_net import NetIO
    from nets.registry import build_net, uses_self_loops
    from train import cli
    from train.config import load_config
    from train.loop import GraphBatches
    from train.tasks import SBM, ZINC, Task

MODELS = ["GCN", "MLP", "GraphSage", "GAT", "MoNet", "GIN", "ChebNet", "SGC", "APGCN", "AUTOGCN",
          "GPRGNN", "BERNNET", "CHEBNETII", "JACOBICONV"]
CONFIG = {
    "SBM_CLUSTER": "configs/SBMs_node_clustering_{}_CLUSTER.json",
    "ZINC": "configs/molecules_graph_regression_{}_ZINC.json",
}


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
                  epochs: int, device: torch.device, root: str) -> float:
    """Median wall time of ``epochs`` training epochs after one warm-up epoch."""
    cfg = load_config(os.path.join(root, CONFIG[dataset].format(model)))
    if uses_self_loops(model, cfg["net_params"]):
        ds = ds.with_self_loops()
    torch.manual_seed(0)
    net = build_net(model, io, cfg["net_params"]).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=cfg["params"]["init_lr"])
    loop = GraphBatches(ds, task, 128, device, generator=torch.Generator().manual_seed(0))
    times = []
    for i in range(epochs + 1):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        loop.train_epoch(net, opt)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if i > 0:  # the first epoch warms up allocators and caches
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


MAX_GRAPHS = 10_000  # SBM-CLUSTER's training set; ZINC's val split has 1,000
MAX_EPOCHS = 1_000


def build_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=cli.int_in(1, MAX_EPOCHS), default=3,
                        help=f"timed epochs per model (1 to {MAX_EPOCHS}; default 3)")
    parser.add_argument("--graphs", type=cli.int_in(1, MAX_GRAPHS), default=256,
                        help=f"graphs per dataset (1 to {MAX_GRAPHS}; default 256)")
    parser.add_argument("--datasets", nargs="+", default=list(CONFIG), choices=list(CONFIG))
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS)
    parser.add_argument("--zinc_dir", type=cli.data_folder, default="datasets/ZINC",
                        metavar="DIR",
                        help="folder of the ZINC raw pickles")
    parser.add_argument("--device", type=cli.device_name, default="cpu",
                        help="cpu, cuda or cuda:N (default cpu)")
    return parser


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    device = torch.device(args.device)
    models = ["GCN"] + [m for m in args.models if m != "GCN"]
    for dataset in args.datasets:
        if dataset == "SBM_CLUSTER":
            ds, io, task = sbm_cluster(args.graphs)
        else:
            ds, io, task = zinc(args.graphs, args.zinc_dir)
        stats = ds.train.stats()
        print(f"# {dataset}: {stats['graphs']} graphs, {stats['mean_nodes']:.1f} nodes, "
              f"{stats['mean_edges']:.0f} edges per graph; device {device}, "
              f"{torch.get_num_threads()} thread(s)", flush=True)
        base = None
        for model in models:
            sec = epoch_seconds(model, dataset, ds, io, task, args.epochs, device, root)
            base = sec if model == "GCN" else base
            print(f"{model}/GCN epoch time ratio on {dataset}: {sec / base:.2f}"
                  f"   ({sec:.3f} s/epoch)", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 2 bad input, 1 failure, 130/143)."""
    return cli.run_tool(_main, argv)


if __name__ == "__main__":
    sys.exit(main())

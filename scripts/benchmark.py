"""AutoGCN's training cost against GCN's, measured side by side.

    OMP_NUM_THREADS=1 python -m scripts.benchmark [--datasets SBM_CLUSTER,ZINC,MNIST]
        [--graphs 256] [--epochs 5] [--device cpu|cuda[:i]] [--profile]

For every dataset, in one process and on the same mini-batches (the first ``--graphs`` training
graphs, batches of 128 collated once and kept on the device), it measures the training epoch
(forward + loss + backward + Adam step over all batches) of AutoGCN and GCN, both built from
their published configs (``configs/``), and the peak memory of an epoch above the level before
it (on CUDA ``torch.cuda.max_memory_allocated``; on the CPU the peak of live tensor memory that
the CPU allocator reports to ``torch.profiler`` — tensors only, since ``ru_maxrss`` cannot be
reset between models in one process).

The candidates alternate within every repeat (order rotated each time) and the median over
``--epochs`` repeats is reported after one untimed warm-up epoch each, so background load hits
them alike. Printed: ``AutoGCN/GCN epoch time ratio on <DATASET>``, absolute s/epoch and
memory. ``--profile`` also prints torch.profiler's top operators per model, sorted by time on
the chosen device.

Data: SBM_CLUSTER generated in memory (nothing written), ZINC from ``--zinc_dir`` (raw
pickles), MNIST from the superpixel cache in ``--cache_dir`` (built from the raw images in
``--mnist_dir`` when absent). Options are checked before anything is loaded (``train/cli.py``);
bad input exits 2 with one line, a failure 1, Ctrl-C 130.
"""

from __future__ import annotations

if not __package__:  # run as a file: python scripts/benchmark.py
    import _project_root  # noqa: F401

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from train.interrupts import startup

with startup("nothing was written"):  # Ctrl-C or SIGTERM while torch loads: one line
    import torch
    from torch import nn

    from data.common import GraphSplit, collate_graphs
    from nets.gnn_net import NetIO
    from nets.registry import build_net, count_parameters, uses_self_loops
    from train import cli
    from train.config import load_config
    from train.tasks import SBM, SUPERPIXELS, ZINC, Task

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {
    "SBM_CLUSTER": "configs/SBMs_node_clustering_{}_CLUSTER.json",
    "ZINC": "configs/molecules_graph_regression_{}_ZINC.json",
    "MNIST": "configs/superpixels_graph_classification_{}_MNIST.json",
}
# Published s/epoch (one Titan XP GPU, full training sets): AutoGCN, GCN
PUBLISHED_S_PER_EPOCH = {"SBM_CLUSTER": (20.40, 14.76), "ZINC": (4.88, 3.29),
                         "MNIST": (59.39, 47.93)}
FULL_TRAIN_GRAPHS = {"SBM_CLUSTER": 10000, "ZINC": 10000, "MNIST": 55000}


@dataclass
class Candidate:
    """One measured model with its optimiser, batches and timings."""

    name: str
    net: nn.Module
    batches: list[tuple]
    optimizer: torch.optim.Optimizer
    epoch_s: list[float] = field(default_factory=list)
    memory_mb: float | None = None


# ------------------------------------------------------------------------------------- data
def load_train_split(dataset: str, n: int, args: argparse.Namespace
                     ) -> tuple[GraphSplit, NetIO, Task]:
    """The first ``n`` training graphs of ``dataset`` and what the nets need to know."""
    if dataset == "SBM_CLUSTER":
        from data.sbm import generate_sbm_split, sbm_config

        cfg = sbm_config(dataset)
        split = generate_sbm_split(dataset, "train", n=n)
        return split, NetIO("node", "embedding", cfg.vocab_size, cfg.num_classes), SBM
    if dataset == "ZINC":
        from data.molecules import load_zinc

        ds = load_zinc(args.zinc_dir, max_graphs=n)
        return ds.train, NetIO("graph", "embedding", ds.in_dim, ds.num_classes), ZINC
    from data.superpixels import load_superpixels

    ds = load_superpixels("MNIST", args.mnist_dir, cache_dir=args.cache_dir, max_graphs=n,
                          progress=False)
    return ds.train, NetIO("graph", "linear", ds.in_dim, ds.num_classes), SUPERPIXELS


def make_batches(split: GraphSplit, batch_size: int, device: torch.device) -> list[tuple]:
    """Fixed batches ``(graph, node features, labels, snorm_n)`` on ``device``."""
    batches = []
    for start in range(0, len(split), batch_size):
        samples = [split[i] for i in range(start, min(start + batch_size, len(split)))]
        g, labels, snorm_n = collate_graphs(samples)
        g = g.to(device)
        batches.append((g, g.ndata["feat"], labels.to(device), snorm_n.to(device)))
    return batches


# ------------------------------------------------------------------------------------- timing
def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_epoch(c: Candidate, task: Task) -> None:
    """One training epoch over the fixed batches: forward, loss, backward, optimiser step."""
    c.net.train()
    for g, h, labels, snorm_n in c.batches:
        c.optimizer.zero_grad()
        loss = task.loss(c.net(g, h, snorm_n), labels)
        aux = getattr(c.net, "auxiliary_loss", None)
        if callable(aux):
            loss = loss + aux()
        loss.backward()
        c.optimizer.step()


def timed(fn: Callable[[], None], device: torch.device) -> float:
    _sync(device)
    t0 = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - t0


def interleaved(cands: list[Candidate], run: Callable[[Candidate], None], repeats: int,
                device: torch.device) -> None:
    """Warm up each candidate once, then time ``repeats`` rounds, rotating the order."""
    for c in cands:
        run(c)
    for r in range(repeats):
        k = r % len(cands)
        for c in cands[k:] + cands[:k]:
            c.epoch_s.append(timed(lambda c=c: run(c), device))


def peak_memory_mb(fn: Callable[[], None], device: torch.device) -> float:
    """Peak tensor memory of ``fn()`` above the level before it, in MiB (see module doc)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return (torch.cuda.max_memory_allocated(device) - base) / 2**20
    from torch._C._profiler import _EventType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    # Every allocation event carries the allocator's running total of live bytes since the
    # profiler started; its maximum is the peak above the starting level.
    peak = 0
    stack = list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        ev = stack.pop()
        stack.extend(ev.children)
        if ev.tag == _EventType.Allocation and ev.extra_fields.device.type == "cpu":
            peak = max(peak, ev.extra_fields.total_allocated)
    return peak / 2**20


def profile_table(fn: Callable[[], None], device: torch.device, rows: int = 15) -> str:
    """torch.profiler's top operators, sorted by self time on ``device``."""
    from torch.profiler import ProfilerActivity, profile

    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        fn()
        _sync(device)
    averages = prof.key_averages()
    sort = "self_cpu_time_total"
    if cuda:  # torch >= 2.4 names it by device, older releases by CUDA
        sort = ("self_device_time_total" if hasattr(averages[0], "self_device_time_total")
                else "self_cuda_time_total")
    return averages.table(sort_by=sort, row_limit=rows)


# ------------------------------------------------------------------------------------- main
def build_candidates(dataset: str, split: GraphSplit, io: NetIO, args: argparse.Namespace,
                     device: torch.device) -> list[Candidate]:
    cands = []
    batches: dict[bool, list[tuple]] = {}
    for model in ("AUTOGCN", "GCN"):
        cfg = load_config(ROOT / CONFIGS[dataset].format(model))
        loops = uses_self_loops(model, cfg["net_params"])
        if loops not in batches:
            data = split.with_self_loops() if loops else split
            batches[loops] = make_batches(data, args.batch_size, device)
        torch.manual_seed(args.seed)
        net = build_net(model, io, cfg["net_params"]).to(device)
        opt = torch.optim.Adam(net.parameters(), lr=cfg["params"]["init_lr"])
        cands.append(Candidate(model, net, batches[loops], opt))
    return cands


def run_dataset(dataset: str, args: argparse.Namespace, device: torch.device) -> dict:
    t0 = time.perf_counter()
    split, io, task = load_train_split(dataset, args.graphs, args)
    cands = build_candidates(dataset, split, io, args, device)
    stats = split.stats()
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else \
        f"CPU, {torch.get_num_threads()} thread(s)"
    print(f"# {dataset}: {stats['graphs']} training graphs in {len(cands[0].batches)} batches "
          f"of <= {args.batch_size}, {stats['mean_nodes']:.1f} nodes and "
          f"{stats['mean_edges']:.0f} directed edges per graph (loaded in "
          f"{time.perf_counter() - t0:.1f} s); {device} ({where}), torch {torch.__version__}; "
          f"median of {args.epochs} interleaved repeats", flush=True)
    auto, gcn = cands
    interleaved(cands, lambda c: train_epoch(c, task), args.epochs, device)
    for c in cands:
        c.memory_mb = peak_memory_mb(lambda c=c: train_epoch(c, task), device)
    full = FULL_TRAIN_GRAPHS[dataset] / max(stats["graphs"], 1)
    for c in cands:
        med = statistics.median(c.epoch_s)
        print(f"{c.name:<8} {med:8.3f} s/epoch (min {min(c.epoch_s):.3f}; ~{med * full:.0f} s "
              f"per full training epoch)  peak memory {c.memory_mb:8.1f} MiB  "
              f"{count_parameters(c.net)} params", flush=True)
    ratio = statistics.median(auto.epoch_s) / statistics.median(gcn.epoch_s)
    pub = PUBLISHED_S_PER_EPOCH[dataset]
    print(f"AutoGCN/GCN epoch time ratio on {dataset}: {ratio:.2f}   "
          f"(paper, Titan XP: {pub[0] / pub[1]:.2f})", flush=True)
    if args.profile:
        for c in cands:
            print(f"\n## torch.profiler, one training epoch of {c.name} on {dataset}")
            print(profile_table(lambda c=c: train_epoch(c, task), device, args.profile_rows),
                  flush=True)
    return {"dataset": dataset, "ratio_gcn": ratio,
            "s_per_epoch": {c.name: statistics.median(c.epoch_s) for c in cands},
            "memory_mb": {c.name: c.memory_mb for c in cands}}


MAX_GRAPHS = max(FULL_TRAIN_GRAPHS.values())  # the largest training set
MAX_REPEATS = 1_000


def build_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="SBM_CLUSTER,ZINC,MNIST",
                        help="comma-separated: SBM_CLUSTER, ZINC, MNIST")
    parser.add_argument("--graphs", type=cli.int_in(1, MAX_GRAPHS), default=256,
                        help=f"training graphs per dataset (1 to {MAX_GRAPHS}; default 256)")
    parser.add_argument("--epochs", type=cli.int_in(1, MAX_REPEATS), default=5,
                        help=f"timed repeats per candidate (1 to {MAX_REPEATS}; default 5)")
    parser.add_argument("--batch_size", type=cli.int_in(1, cli.MAX_BATCH_SIZE), default=128,
                        help=f"graphs per batch (1 to {cli.MAX_BATCH_SIZE}; default 128)")
    parser.add_argument("--seed", type=cli.seed_int, default=0)
    parser.add_argument("--zinc_dir", type=cli.data_folder, default="datasets/ZINC", metavar="DIR",
                        help="folder of the ZINC raw pickles")
    parser.add_argument("--mnist_dir", type=cli.data_folder, default="datasets/MNIST",
                        metavar="DIR",
                        help="MNIST raw idx files")
    parser.add_argument("--cache_dir", type=cli.data_folder, default="datasets/cache",
                        metavar="DIR",
                        help="superpixel graph cache")
    parser.add_argument("--device", type=cli.device_name, default="cpu",
                        help="cpu, cuda or cuda:N (default cpu)")
    parser.add_argument("--threads", type=cli.int_in(1, cli.MAX_WORKERS), default=None,
                        help="torch threads (default: torch's; set OMP_NUM_THREADS=1 to time)")
    parser.add_argument("--profile", action="store_true",
                        help="also print torch.profiler's top operators per model")
    parser.add_argument("--profile_rows", type=cli.int_in(1, 1000), default=15,
                        help="operators shown by --profile (1 to 1000; default 15)")
    return parser


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = [d for d in datasets if d not in CONFIGS]
    if unknown or not datasets:
        parser.error(f"--datasets: unknown dataset(s) {', '.join(unknown) or 'none given'}; "
                     f"choose from {', '.join(CONFIGS)}")
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    for dataset in datasets:
        run_dataset(dataset, args, device)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 2 bad input, 1 failure, 130/143)."""
    return cli.run_tool(_main, argv)


if __name__ == "__main__":
    sys.exit(main())

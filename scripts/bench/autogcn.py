"""AutoGCN's training epoch against GCN's, eager and compiled, side by side on the same
mini-batches, with their first epochs and peak memory (docs/performance.md: what it measures,
and the figures it gave)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import torch
from torch import nn

from data.common import DataError, GraphDataset, GraphSplit, collate_graphs
from nets.gnn_net import NetIO
from nets.registry import count_parameters
from scripts import cli
from scripts.bench import timing
from train.loop import GraphBatches
from train.tasks import SBM, SUPERPIXELS, ZINC, Task, task_for_dataset

MODELS = {"AUTOGCN": "AutoGCN", "GCN": "GCN"}  # registry name -> printed name


@dataclass
class Candidate:
    """One measured model in one mode, with its optimiser and batches."""

    model: str  # registry name
    compiled: bool
    net: nn.Module
    batches: list[tuple]
    optimizer: torch.optim.Optimizer
    memory_mb: float = 0.0

    @property
    def name(self) -> str:
        return f"{MODELS[self.model]}-{timing.mode(self.compiled)}"


# ------------------------------------------------------------------------------------- data
def load_split(dataset: str, n: int, args: argparse.Namespace, split: str = "train"
               ) -> tuple[GraphSplit, NetIO, Task]:
    """The first ``n`` graphs of ``dataset``'s ``split`` (SBM_CLUSTER's training graphs,
    generated) and what the nets need to know."""
    if dataset == "SBM_CLUSTER":
        from data.sbm import generate_sbm_split, sbm_config

        cfg = sbm_config(dataset)
        graphs = generate_sbm_split(dataset, "train", n=n)
        return graphs, NetIO("node", "embedding", cfg.vocab_size, cfg.num_classes), SBM
    if dataset == "ZINC":
        from data.molecules import load_zinc

        ds, io, task = load_zinc(args.zinc_dir, max_graphs=n), "embedding", ZINC
    else:
        from data.superpixels import load_superpixels

        ds = load_superpixels("MNIST", args.mnist_dir, cache_dir=args.cache_dir, max_graphs=n,
                              progress=False)
        io, task = "linear", SUPERPIXELS
    if ds.splits()[split] is None:
        raise DataError(f"no {split}.pickle under {args.zinc_dir} (--zinc_dir): the benchmark "
                        f"times {dataset}'s {split} graphs")
    return ds.splits()[split], NetIO("graph", io, ds.in_dim, ds.num_classes), task


def make_batches(split: GraphSplit, batch_size: int, device: torch.device) -> list[tuple]:
    """Fixed batches ``(graph, labels, snorm_n)``, collated as the training loop does, on
    ``device``."""
    batches = []
    for start_at in range(0, len(split), batch_size):
        samples = [split[i] for i in range(start_at, min(start_at + batch_size, len(split)))]
        batches.append(tuple(part.to(device) for part in collate_graphs(samples)))
    return batches


# ------------------------------------------------------------------------------------- timing
def train_epoch(c: Candidate, loop: GraphBatches) -> None:
    """One training epoch over the fixed batches, each the training loop's step (forward, loss,
    backward, optimiser step)."""
    c.net.train()
    for batch in c.batches:
        loop.train_step(c.net, c.optimizer, batch)


def peak_memory_mb(fn: Callable[[], None], device: torch.device) -> float:
    """Peak tensor memory of ``fn()`` above the level before it, in MiB: on CUDA the allocator's
    peak, on the CPU the peak of live tensor memory that the CPU allocator reports to
    ``torch.profiler`` (``ru_maxrss`` cannot be reset between models in one process)."""
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
        timing.sync(device)
    sort = "self_device_time_total" if cuda else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=sort, row_limit=rows)


# ------------------------------------------------------------------------------------- main
def build_candidates(dataset: str, split: GraphSplit, io: NetIO, args: argparse.Namespace,
                     device: torch.device, modes: tuple[bool, ...]) -> list[Candidate]:
    """Per model and mode, a net from its published config and ``--seed``
    (:func:`~scripts.bench.timing.twins`), its Adam and the batches it takes."""
    cands = []
    batches: dict[bool, list[tuple]] = {}
    for model in MODELS:
        cfg = timing.published(dataset, model)
        loops = task_for_dataset(dataset).adds_self_loops(model, cfg["net_params"])
        if loops not in batches:
            data = split.with_self_loops() if loops else split
            batches[loops] = make_batches(data, args.batch_size, device)
        for compiled, net in timing.twins(model, cfg, io, device, modes, args.seed).items():
            opt = torch.optim.Adam(net.parameters(), lr=cfg["params"]["init_lr"])
            cands.append(Candidate(model, compiled, net, batches[loops], opt))
    return cands


def report(dataset: str, cands: list[Candidate], t: timing.Timings,
           defaults: dict[str, bool | None], full: float) -> dict:
    """Print the per-candidate lines and the ratios; return them."""
    for c in cands:
        s = t.median(c.name)
        warm = f"first epoch {t.first[c.name]:.3f} s, warm-up {t.warm_up(c.name):.2f} s"
        if c.compiled:
            warm += f" (compiler cache {t.cache[c.name][0]} hits, {t.cache[c.name][1]} misses)"
        print(f"{c.name:<17} {s:8.3f} s/epoch (min {min(t.times[c.name]):.3f}; "
              f"~{s * full:.0f} s per full training epoch)  {warm}  peak memory "
              f"{c.memory_mb:8.1f} MiB  {count_parameters(c.net)} params", flush=True)
        if t.recompiled[c.name]:
            print(f"warning: {c.name} compiled {t.recompiled[c.name]} graph(s) during the timed "
                  "epochs (a recompilation per batch shape)", flush=True)
    by = {(c.model, c.compiled): t.median(c.name) for c in cands}
    ratio, line = timing.gcn_ratio_line(dataset, by, defaults)
    print(line, flush=True)
    out = {"ratio_gcn": ratio, "default": defaults}
    measured = sorted({c.compiled for c in cands})
    for m in measured:
        out[f"ratio_gcn_{timing.mode(m)}"] = by["AUTOGCN", m] / by["GCN", m]
        print(f"AutoGCN/GCN epoch time ratio, both {timing.mode(m)}, on {dataset}: "
              f"{out[f'ratio_gcn_{timing.mode(m)}']:.2f}", flush=True)
    memory = {c.name: c.memory_mb for c in cands}
    if len(measured) == 2:
        for model, label in MODELS.items():
            eager, comp = f"{label}-eager", f"{label}-compiled"
            detail = (f"; peak memory compiled/eager {memory[comp] / max(memory[eager], 1e-9):.2f}"
                      f"; warm-up {t.warm_up(comp):.1f} s")
            out[f"compiled_over_eager_{model}"], line = timing.compiled_over_eager_line(
                label, dataset, t.median(eager), t.median(comp), detail)
            print(line, flush=True)
    out.update(s_per_epoch=t.medians(), memory_mb=memory)
    return out


def run_dataset(dataset: str, args: argparse.Namespace, device: torch.device,
                modes: tuple[bool, ...]) -> dict:
    t0 = time.perf_counter()
    split, io, task = load_split(dataset, args.graphs, args)
    defaults, words = {}, []
    for model, label in MODELS.items():
        defaults[model], why = timing.default_mode(dataset, model, device, args.compile)
        words.append(f"{label} {why}")
    cands = build_candidates(dataset, split, io, args, device, modes)
    stats = split.stats()
    print(f"# {dataset}: {stats['graphs']} training graphs in {len(cands[0].batches)} batches "
          f"of <= {args.batch_size}, {stats['mean_nodes']:.1f} nodes and "
          f"{stats['mean_edges']:.0f} directed edges per graph (loaded in "
          f"{time.perf_counter() - t0:.1f} s); {device} ({timing.described(device)}), torch "
          f"{torch.__version__}; median of {args.epochs} interleaved repeats, {args.clock} "
          "clock", flush=True)
    print("default mode of a full training run here: " + "; ".join(words), flush=True)
    loop = GraphBatches(GraphDataset(dataset, split, None, None, io.in_dim, io.num_classes),
                        task, args.batch_size, device)
    epochs = {c.name: partial(train_epoch, c, loop) for c in cands}
    timings = timing.interleave(epochs, args.epochs, device)
    for c in cands:
        # No gradients left from the last epoch: the profiler would see them freed without
        # having seen them allocated (a warning on stderr, and a running total that never
        # drops by their size).
        c.optimizer.zero_grad(set_to_none=True)
        c.memory_mb = peak_memory_mb(epochs[c.name], device)
    out = report(dataset, cands, timings, defaults,
                 timing.FULL_TRAIN_GRAPHS[dataset] / max(stats["graphs"], 1))
    if args.profile:
        for c in cands:
            print(f"\n## torch.profiler, one training epoch of {c.name} on {dataset}")
            print(profile_table(epochs[c.name], device, args.profile_rows), flush=True)
    return out


MAX_GRAPHS = max(timing.FULL_TRAIN_GRAPHS.values())  # the largest training set
MAX_REPEATS = 1_000


def build_parser() -> argparse.ArgumentParser:
    out = timing.new_parser("autogcn", __doc__, "compile", "zinc_dir", "device", "clock",
                             "threads")
    out.add_argument("--datasets", default="SBM_CLUSTER,ZINC,MNIST",
                     help="comma-separated: SBM_CLUSTER, ZINC, MNIST")
    out.add_argument("--graphs", type=cli.int_in(1, MAX_GRAPHS), default=256,
                     help=f"training graphs per dataset (1 to {MAX_GRAPHS}; default 256)")
    out.add_argument("--epochs", type=cli.int_in(1, MAX_REPEATS), default=5,
                     help=f"timed repeats per candidate (1 to {MAX_REPEATS}; default 5)")
    out.add_argument("--batch_size", type=cli.int_in(1, cli.MAX_BATCH_SIZE), default=128,
                     help=f"graphs per batch (1 to {cli.MAX_BATCH_SIZE}; default 128)")
    out.add_argument("--seed", type=cli.seed_int, default=0)
    out.add_argument("--mnist_dir", type=cli.data_folder, default="datasets/MNIST",
                     metavar="DIR", help="MNIST raw idx files")
    out.add_argument("--cache_dir", type=cli.data_folder, default="datasets/cache",
                     metavar="DIR", help="superpixel graph cache")
    out.add_argument("--profile", action="store_true",
                     help="also print torch.profiler's top operators per candidate")
    out.add_argument("--profile_rows", type=cli.int_in(1, 1000), default=15,
                     help="operators shown by --profile (1 to 1000; default 15)")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = [d for d in datasets if d not in timing.FULL_TRAIN_GRAPHS]
    if unknown or not datasets:
        parser.error(f"--datasets: unknown dataset(s) {', '.join(unknown) or 'none given'}; "
                     f"choose from {', '.join(timing.FULL_TRAIN_GRAPHS)}")
    if args.threads:
        torch.set_num_threads(args.threads)
    device, modes = timing.start(args)
    for dataset in datasets:
        run_dataset(dataset, args, device, modes)
    return 0

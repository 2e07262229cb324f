"""AutoGCN's training cost against GCN's, eager and compiled, measured side by side.

    OMP_NUM_THREADS=1 python -m scripts.bench autogcn [--datasets SBM_CLUSTER,ZINC,MNIST]
        [--graphs 256] [--epochs 5] [--compile both|on|off] [--device cpu|cuda[:i]] [--profile]

For every dataset, in one process and on the same mini-batches (the first ``--graphs`` training
graphs, batches of 128 collated once and kept on the device), it measures the training epoch
(forward + loss + backward + Adam step over all batches) of AutoGCN and GCN, both built from
their published configs (``configs/``), each eager and compiled (``train/compilation.py``: the
compiled net is a deep copy of the eager one, so both start from the same weights), and the peak
memory of an epoch above the level before it (on CUDA ``torch.cuda.max_memory_allocated``; on
the CPU the peak of live tensor memory that the CPU allocator reports to ``torch.profiler`` —
tensors only, since ``ru_maxrss`` cannot be reset between models in one process).

The candidates alternate (:mod:`scripts.bench.timing`); the median over ``--epochs`` repeats is
reported after one untimed first epoch each. A candidate's warm-up is its first epoch less its
median epoch: for a compiled one, mostly the compiler. The compiler's in-memory caches are
cleared before each dataset; regions shared by both models (post-processing, readout) are
compiled by whichever compiled candidate runs first, and the compiler's on-disk cache makes a
repeated run's warm-up shorter (its hits and misses are printed). Printed per dataset:

* ``AutoGCN/GCN epoch time ratio on <DATASET>: R`` with both models in the mode a full training
  run would choose on this device (``params.compile = "auto"`` for the published epochs over the
  full training set), and the same ratio with both eager and with both compiled;
* ``compiled/eager <MODEL> epoch time on <DATASET>: R`` (below 1: compiled is faster) with the
  speed-up eager/compiled, and compiled/eager peak memory;
* s/epoch, first epoch, warm-up and peak memory of each candidate.

``--clock`` and ``--compile`` as every benchmark (:mod:`scripts.bench.timing`). ``--profile``
also prints torch.profiler's top operators per candidate, sorted by time on the chosen device.

Data: SBM_CLUSTER generated in memory (nothing written), ZINC from ``--zinc_dir`` (raw
pickles), MNIST from the superpixel cache in ``--cache_dir`` (built from the raw images in
``--mnist_dir`` when absent). Options are checked before anything is loaded (``scripts/cli.py``);
bad input exits 2 with one line, a failure 1, Ctrl-C 130.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from data.common import GraphSplit, collate_graphs
from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters, uses_self_loops
from scripts import cli
from scripts.bench.timing import (
    CONFIGS,
    FULL_TRAIN_GRAPHS,
    ROOT,
    add_clock,
    add_compile,
    add_device,
    add_zinc_dir,
    compile_counters,
    compiled_over_eager_line,
    default_mode,
    described,
    gcn_ratio_line,
    mode,
    modes_to_measure,
    rotated_rounds,
    set_clock,
    sync,
    timed,
)
from train import compilation
from train.config import load_config
from train.errors import run_tool
from train.tasks import SBM, SUPERPIXELS, ZINC, Task

PROG = "python -m scripts.bench autogcn"
MODELS = {"AUTOGCN": "AutoGCN", "GCN": "GCN"}  # registry name -> printed name


@dataclass
class Candidate:
    """One measured model in one mode, with its optimiser, batches and timings."""

    model: str  # registry name
    compiled: bool
    net: nn.Module
    batches: list[tuple]
    optimizer: torch.optim.Optimizer
    first_s: float | None = None  # the untimed first epoch
    epoch_s: list[float] = field(default_factory=list)
    memory_mb: float | None = None
    cache: tuple[int, int] | None = None  # compiler cache hits, misses in the first epoch
    recompiled: int = 0  # graphs compiled during the timed epochs (should be 0)

    @property
    def name(self) -> str:
        return f"{MODELS[self.model]}-{mode(self.compiled)}"

    @property
    def median_s(self) -> float:
        return statistics.median(self.epoch_s)

    @property
    def warm_up_s(self) -> float:
        """The first epoch's excess over a timed one (see the module doc)."""
        return max(self.first_s - self.median_s, 0.0)


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


def default_modes(dataset: str, device: torch.device, setting: str
                  ) -> tuple[dict[str, bool | None], str]:
    """:func:`default_mode` of AutoGCN and GCN, and one line saying it."""
    defaults: dict[str, bool | None] = {}
    words = []
    for model, label in MODELS.items():
        defaults[model], why = default_mode(dataset, model, device, setting)
        words.append(f"{label} {why}")
    return defaults, "default mode of a full training run here: " + "; ".join(words)


# ------------------------------------------------------------------------------------- timing
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


def interleaved(cands: list[Candidate], run: Callable[[Candidate], None], repeats: int,
                device: torch.device) -> None:
    """Time each candidate's first epoch (the compile warm-up for a compiled one), then
    ``repeats`` rounds, rotating the order; count graphs compiled during the rounds."""
    for c in cands:
        before = compile_counters()
        c.first_s = timed(lambda c=c: run(c), device)
        after = compile_counters()
        if c.compiled:
            c.cache = (after[1] - before[1], after[2] - before[2])
    for c in rotated_rounds(cands, repeats):
        before = compile_counters()[0]
        c.epoch_s.append(timed(lambda c=c: run(c), device))
        c.recompiled += compile_counters()[0] - before


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
        sync(device)
    averages = prof.key_averages()
    sort = "self_cpu_time_total"
    if cuda:  # torch >= 2.4 names it by device, older releases by CUDA
        sort = ("self_device_time_total" if hasattr(averages[0], "self_device_time_total")
                else "self_cuda_time_total")
    return averages.table(sort_by=sort, row_limit=rows)


# ------------------------------------------------------------------------------------- main
def build_candidates(dataset: str, split: GraphSplit, io: NetIO, args: argparse.Namespace,
                     device: torch.device, modes: tuple[bool, ...]) -> list[Candidate]:
    """Per model, the net built once from its config and seed; the compiled candidate is a
    deep copy of it compiled, so both modes start from the same weights."""
    if True in modes:
        # Each dataset compiles afresh, as a run of its own would: a fair warm-up, and the
        # regions' variants of earlier datasets do not pile up to the compiler's recompile
        # limit, past which a region runs eagerly.
        torch._dynamo.reset()
    cands = []
    batches: dict[bool, list[tuple]] = {}
    for model in MODELS:
        cfg = load_config(ROOT / CONFIGS[dataset].format(model))
        loops = uses_self_loops(model, cfg["net_params"])
        if loops not in batches:
            data = split.with_self_loops() if loops else split
            batches[loops] = make_batches(data, args.batch_size, device)
        torch.manual_seed(args.seed)
        net = build_net(model, io, cfg["net_params"]).to(device)
        for compiled in modes:
            twin = copy.deepcopy(net)
            if compiled:
                compilation.compile_regions(twin)
            opt = torch.optim.Adam(twin.parameters(), lr=cfg["params"]["init_lr"])
            cands.append(Candidate(model, compiled, twin, batches[loops], opt))
    return cands


def report(dataset: str, cands: list[Candidate], defaults: dict[str, bool | None],
           full: float) -> dict:
    """Print the per-candidate lines and the ratios; return them."""
    for c in cands:
        warm = f"first epoch {c.first_s:.3f} s, warm-up {c.warm_up_s:.2f} s"
        if c.cache is not None:
            warm += f" (compiler cache {c.cache[0]} hits, {c.cache[1]} misses)"
        print(f"{c.name:<17} {c.median_s:8.3f} s/epoch (min {min(c.epoch_s):.3f}; "
              f"~{c.median_s * full:.0f} s per full training epoch)  {warm}  peak memory "
              f"{c.memory_mb:8.1f} MiB  {count_parameters(c.net)} params", flush=True)
        if c.recompiled:
            print(f"warning: {c.name} compiled {c.recompiled} graph(s) during the timed epochs "
                  "(a recompilation per batch shape)", flush=True)
    by = {(c.model, c.compiled): c for c in cands}
    ratio, line = gcn_ratio_line(dataset, {k: c.median_s for k, c in by.items()}, defaults)
    print(line, flush=True)
    out = {"dataset": dataset, "ratio_gcn": ratio, "default": defaults}
    measured = sorted({c.compiled for c in cands})
    for m in measured:
        out[f"ratio_gcn_{mode(m)}"] = by["AUTOGCN", m].median_s / by["GCN", m].median_s
        print(f"AutoGCN/GCN epoch time ratio, both {mode(m)}, on {dataset}: "
              f"{out[f'ratio_gcn_{mode(m)}']:.2f}", flush=True)
    if len(measured) == 2:
        for model, label in MODELS.items():
            eager, comp = by[model, False], by[model, True]
            memory = comp.memory_mb / max(eager.memory_mb, 1e-9)
            out[f"compiled_over_eager_{model}"], line = compiled_over_eager_line(
                label, dataset, eager.median_s, comp.median_s,
                f"; peak memory compiled/eager {memory:.2f}; warm-up {comp.warm_up_s:.1f} s")
            print(line, flush=True)
    out.update(s_per_epoch={c.name: c.median_s for c in cands},
               memory_mb={c.name: c.memory_mb for c in cands},
               warm_up_s={c.name: c.warm_up_s for c in cands})
    return out


def run_dataset(dataset: str, args: argparse.Namespace, device: torch.device,
                modes: tuple[bool, ...]) -> dict:
    t0 = time.perf_counter()
    split, io, task = load_train_split(dataset, args.graphs, args)
    defaults, why = default_modes(dataset, device, args.compile)
    cands = build_candidates(dataset, split, io, args, device, modes)
    stats = split.stats()
    print(f"# {dataset}: {stats['graphs']} training graphs in {len(cands[0].batches)} batches "
          f"of <= {args.batch_size}, {stats['mean_nodes']:.1f} nodes and "
          f"{stats['mean_edges']:.0f} directed edges per graph (loaded in "
          f"{time.perf_counter() - t0:.1f} s); {device} ({described(device)}), torch "
          f"{torch.__version__}; median of {args.epochs} interleaved repeats, {args.clock} "
          "clock", flush=True)
    print(why, flush=True)
    interleaved(cands, lambda c: train_epoch(c, task), args.epochs, device)
    for c in cands:
        # No gradients left from the last epoch: the profiler would see them freed without
        # having seen them allocated (a warning on stderr, and a running total that never
        # drops by their size).
        c.optimizer.zero_grad(set_to_none=True)
        c.memory_mb = peak_memory_mb(lambda c=c: train_epoch(c, task), device)
    out = report(dataset, cands, defaults, FULL_TRAIN_GRAPHS[dataset] / max(stats["graphs"], 1))
    if args.profile:
        for c in cands:
            print(f"\n## torch.profiler, one training epoch of {c.name} on {dataset}")
            print(profile_table(lambda c=c: train_epoch(c, task), device, args.profile_rows),
                  flush=True)
    return out


MAX_GRAPHS = max(FULL_TRAIN_GRAPHS.values())  # the largest training set
MAX_REPEATS = 1_000


def build_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="SBM_CLUSTER,ZINC,MNIST",
                        help="comma-separated: SBM_CLUSTER, ZINC, MNIST")
    parser.add_argument("--graphs", type=cli.int_in(1, MAX_GRAPHS), default=256,
                        help=f"training graphs per dataset (1 to {MAX_GRAPHS}; default 256)")
    parser.add_argument("--epochs", type=cli.int_in(1, MAX_REPEATS), default=5,
                        help=f"timed repeats per candidate (1 to {MAX_REPEATS}; default 5)")
    parser.add_argument("--batch_size", type=cli.int_in(1, cli.MAX_BATCH_SIZE), default=128,
                        help=f"graphs per batch (1 to {cli.MAX_BATCH_SIZE}; default 128)")
    add_compile(parser)
    parser.add_argument("--seed", type=cli.seed_int, default=0)
    add_zinc_dir(parser)
    parser.add_argument("--mnist_dir", type=cli.data_folder, default="datasets/MNIST",
                        metavar="DIR",
                        help="MNIST raw idx files")
    parser.add_argument("--cache_dir", type=cli.data_folder, default="datasets/cache",
                        metavar="DIR",
                        help="superpixel graph cache")
    add_device(parser)
    parser.add_argument("--threads", type=cli.int_in(1, cli.MAX_WORKERS), default=None,
                        help="torch threads (default: torch's; set OMP_NUM_THREADS=1 to time)")
    add_clock(parser)
    parser.add_argument("--profile", action="store_true",
                        help="also print torch.profiler's top operators per candidate")
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
    set_clock(args.clock, device)
    modes, why_not = modes_to_measure(args.compile, device)
    if why_not:
        print(why_not, flush=True)
    for dataset in datasets:
        run_dataset(dataset, args, device, modes)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 2 bad input, 1 failure, 130/143)."""
    return run_tool(_main, argv)

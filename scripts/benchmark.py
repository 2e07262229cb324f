"""AutoGCN's training cost against GCN's, eager and compiled, measured side by side.

    OMP_NUM_THREADS=1 python -m scripts.benchmark [--datasets SBM_CLUSTER,ZINC,MNIST]
        [--graphs 256] [--epochs 5] [--compile both|on|off] [--device cpu|cuda[:i]] [--profile]

For every dataset, in one process and on the same mini-batches (the first ``--graphs`` training
graphs, batches of 128 collated once and kept on the device), it measures the training epoch
(forward + loss + backward + Adam step over all batches) of AutoGCN and GCN, both built from
their published configs (``configs/``), each eager and compiled (``train/compilation.py``: the
compiled net is a deep copy of the eager one, so both start from the same weights), and the peak
memory of an epoch above the level before it (on CUDA ``torch.cuda.max_memory_allocated``; on
the CPU the peak of live tensor memory that the CPU allocator reports to ``torch.profiler`` —
tensors only, since ``ru_maxrss`` cannot be reset between models in one process).

The candidates alternate within every repeat (order rotated each time) and the median over
``--epochs`` repeats is reported after one untimed first epoch each, so background load hits
them alike. A candidate's warm-up is its first epoch less its median epoch: for a compiled one,
mostly the compiler. The compiler's in-memory caches are cleared before each dataset; regions
shared by both models (post-processing, readout) are compiled by whichever compiled candidate
runs first, and the compiler's on-disk cache makes a repeated run's warm-up shorter (its hits
and misses are printed). Printed per dataset:

* ``AutoGCN/GCN epoch time ratio on <DATASET>: R`` with both models in the mode a full training
  run would choose on this device (``params.compile = "auto"`` for the published epochs over the
  full training set), and the same ratio with both eager and with both compiled;
* ``compiled/eager <MODEL> epoch time on <DATASET>: R`` (below 1: compiled is faster) with the
  speed-up eager/compiled, and compiled/eager peak memory;
* s/epoch, first epoch, warm-up and peak memory of each candidate.

``--clock cpu`` times the process's CPU time instead of wall time: on a machine shared with
other jobs it is the steadier measure (with more than one thread it sums them).
``--compile off`` measures eager only, ``on`` compiled only, ``both`` (default) both; where
compiling cannot work here (old torch, no C++ compiler, no Triton) one line says why and only
eager is measured. ``--profile`` also prints torch.profiler's top operators per candidate,
sorted by time on the chosen device.

Data: SBM_CLUSTER generated in memory (nothing written), ZINC from ``--zinc_dir`` (raw
pickles), MNIST from the superpixel cache in ``--cache_dir`` (built from the raw images in
``--mnist_dir`` when absent). Options are checked before anything is loaded (``scripts/cli.py``);
bad input exits 2 with one line, a failure 1, Ctrl-C 130.
"""

from __future__ import annotations

if not __package__:  # run as a file: python scripts/benchmark.py
    import _project_root  # noqa: F401

import os

# The profiler behind the CPU peak memory logs through kineto's own logger, which writes its
# start/stop markers and a failed GPU count to stderr whatever Python's settings: raise its
# threshold above every severity before its first use (a user's own setting wins).
os.environ.setdefault("KINETO_LOG_LEVEL", "99")

import argparse
import copy
import logging
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from train.interrupts import startup

with startup():
    import torch
    from torch import nn

    from data.common import GraphSplit, collate_graphs
    from nets.gnn_net import NetIO
    from nets.registry import build_net, count_parameters, uses_self_loops
    from scripts import cli
    from train import compilation
    from train.config import load_config
    from train.errors import run_tool
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
# The compiler loads torch's C++-extension helper, which warns on a machine without CUDA that
# it found no CUDA runtime: irrelevant to a CPU benchmark, and a GPU machine never sees it.
logging.getLogger("torch.utils.cpp_extension").addFilter(
    lambda record: not record.getMessage().startswith("No CUDA runtime is found"))
MODELS = {"AUTOGCN": "AutoGCN", "GCN": "GCN"}  # registry name -> printed name
COMPILE_CHOICES = {"both": (False, True), "on": (True,), "off": (False,)}


def mode(compiled: bool) -> str:
    return "compiled" if compiled else "eager"


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


# ------------------------------------------------------------------------------- compilation
def modes_to_measure(setting: str, device: torch.device) -> tuple[tuple[bool, ...], str | None]:
    """The modes ``--compile`` asks for that can run here (False eager, True compiled), and a
    line saying why compiled is left out where it cannot run."""
    wanted = COMPILE_CHOICES[setting]
    if True not in wanted:
        return wanted, None
    why_not = compilation.unavailable(device)
    if why_not is None:
        return wanted, None
    return (False,), f"compile: unavailable on {device} ({why_not}); measuring eager only"


def full_run_steps(dataset: str, model: str) -> tuple[int, int, int]:
    """Epochs, batches per epoch and optimiser steps of a full training run at the published
    config (every training graph, the config's batch size)."""
    params = load_config(ROOT / CONFIGS[dataset].format(model))["params"]
    batches = math.ceil(FULL_TRAIN_GRAPHS[dataset] / params["batch_size"])
    return params["epochs"], batches, params["epochs"] * batches


def default_mode(dataset: str, model: str, device: torch.device, setting: str
                 ) -> tuple[bool | None, str]:
    """Whether a full training run of ``model`` compiles here (``params.compile = "auto"``), and
    why, in words. ``--compile off`` does not probe the compiler: where the run is long enough
    for ``auto`` to compile, the default is then left unknown (``None``)."""
    epochs, batches, steps = full_run_steps(dataset, model)
    if setting == "off" and steps >= compilation.MIN_STEPS:
        compiled, why = None, "not probed (--compile off)"
    else:
        compiled, why = compilation.decide("auto", device, steps)
    word = "unknown" if compiled is None else mode(compiled)
    return compiled, f"{word} ({epochs} epochs x {batches} batches = {steps} steps: {why})"


def default_modes(dataset: str, device: torch.device, setting: str
                  ) -> tuple[dict[str, bool | None], str]:
    """:func:`default_mode` of AutoGCN and GCN, and one line saying it."""
    defaults: dict[str, bool | None] = {}
    words = []
    for model, label in MODELS.items():
        defaults[model], why = default_mode(dataset, model, device, setting)
        words.append(f"{label} {why}")
    return defaults, "default mode of a full training run here: " + "; ".join(words)


def gcn_ratio_line(dataset: str, seconds: dict[tuple[str, bool], float],
                   defaults: dict[str, bool | None]) -> tuple[float, str]:
    """``AutoGCN/GCN epoch time ratio on <DATASET>: R`` with both models in their default mode
    (``seconds[model, compiled]``: median s/epoch); where a default was not measured, both in
    the measured mode (compiled if it was), which the line says."""
    auto, gcn = "AUTOGCN", "GCN"
    want = (defaults[auto], defaults[gcn])
    if None not in want and (auto, want[0]) in seconds and (gcn, want[1]) in seconds:
        ratio = seconds[auto, want[0]] / seconds[gcn, want[1]]
        note = (f"both {mode(want[0])}, the default here" if want[0] == want[1] else
                f"the defaults here: AutoGCN {mode(want[0])}, GCN {mode(want[1])}")
    else:
        m = max(c for model, c in seconds if model == auto)
        ratio = seconds[auto, m] / seconds[gcn, m]
        note = f"both {mode(m)}; " + ("the default mode was not probed (--compile off)"
                                      if None in want else "the default mode was not measured")
    pub = PUBLISHED_S_PER_EPOCH[dataset]
    note += f"; paper, Titan XP: {pub[0] / pub[1]:.2f}"
    return ratio, f"AutoGCN/GCN epoch time ratio on {dataset}: {ratio:.2f}   ({note})"


def compiled_over_eager_line(label: str, dataset: str, eager_s: float, compiled_s: float,
                             detail: str = "") -> tuple[float, str]:
    """``compiled/eager <MODEL> epoch time on <DATASET>: R`` (below 1: compiled is faster)
    with the speed-up eager/compiled."""
    r = compiled_s / eager_s
    return r, (f"compiled/eager {label} epoch time on {dataset}: {r:.2f}   (speed-up "
               f"eager/compiled {1 / r:.2f}x{detail})")


def compile_counters() -> tuple[int, int, int]:
    """Graphs compiled so far, and the compiler's on-disk cache hits and misses."""
    from torch._dynamo.utils import counters

    return (counters["stats"]["unique_graphs"], counters["inductor"]["fxgraph_cache_hit"],
            counters["inductor"]["fxgraph_cache_miss"])


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


#: What :func:`timed` reads (``--clock``): wall time, or the process's CPU time, which a
#: shared machine's other jobs do not inflate (they take turns on the cores, and a waiting
#: process uses no CPU time); CPU time sums the process's threads.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCKS["wall"]


def set_clock(name: str, device: torch.device) -> None:
    """Select :data:`CLOCKS` ``name``; CPU time says nothing of GPU work, so ``cpu`` is refused
    on CUDA."""
    global _clock
    if name == "cpu" and device.type == "cuda":
        raise cli.UsageError("--clock cpu measures the CPU's work only: use --clock wall with "
                             "--device cuda")
    _clock = CLOCKS[name]


def timed(fn: Callable[[], None], device: torch.device) -> float:
    _sync(device)
    t0 = _clock()
    fn()
    _sync(device)
    return _clock() - t0


def rotated_rounds(items: list, repeats: int) -> Iterator:
    """``repeats`` rounds over ``items``, each round starting one further along, so that no
    item always runs first (after a warm-up of its own) or always follows the same one."""
    for r in range(repeats):
        k = r % len(items)
        yield from items[k:] + items[:k]


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
        _sync(device)
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
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else \
        f"CPU, {torch.get_num_threads()} thread(s)"
    print(f"# {dataset}: {stats['graphs']} training graphs in {len(cands[0].batches)} batches "
          f"of <= {args.batch_size}, {stats['mean_nodes']:.1f} nodes and "
          f"{stats['mean_edges']:.0f} directed edges per graph (loaded in "
          f"{time.perf_counter() - t0:.1f} s); {device} ({where}), torch {torch.__version__}; "
          f"median of {args.epochs} interleaved repeats, {args.clock} clock", flush=True)
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
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="SBM_CLUSTER,ZINC,MNIST",
                        help="comma-separated: SBM_CLUSTER, ZINC, MNIST")
    parser.add_argument("--graphs", type=cli.int_in(1, MAX_GRAPHS), default=256,
                        help=f"training graphs per dataset (1 to {MAX_GRAPHS}; default 256)")
    parser.add_argument("--epochs", type=cli.int_in(1, MAX_REPEATS), default=5,
                        help=f"timed repeats per candidate (1 to {MAX_REPEATS}; default 5)")
    parser.add_argument("--batch_size", type=cli.int_in(1, cli.MAX_BATCH_SIZE), default=128,
                        help=f"graphs per batch (1 to {cli.MAX_BATCH_SIZE}; default 128)")
    parser.add_argument("--compile", choices=list(COMPILE_CHOICES), default="both",
                        help="measure each model eager and compiled (both, the default), "
                             "compiled only (on) or eager only (off)")
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
    parser.add_argument("--clock", choices=list(CLOCKS), default="wall",
                        help="wall time (default) or the process's CPU time, steadier on a "
                             "machine shared with other jobs (CPU only)")
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


if __name__ == "__main__":
    sys.exit(main())

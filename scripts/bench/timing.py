"""What the benchmarks share: the clock, the interleaved timing loop, the published configs and
the nets built from them, the ratio lines they print and their common options (the method:
docs/performance.md, "How the benchmarks measure")."""

from __future__ import annotations

import argparse
import copy
import logging
import math
import statistics
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from nets.gnn_net import NetIO
from nets.registry import build_net
from scripts import cli
from scripts.sweep import cell_defaults
from train import compilation
from train.config import load_config

ROOT = Path(__file__).resolve().parents[2]
# Published s/epoch (one Titan XP GPU, full training sets): AutoGCN, GCN
PUBLISHED_S_PER_EPOCH = {"SBM_CLUSTER": (20.40, 14.76), "ZINC": (4.88, 3.29),
                         "MNIST": (59.39, 47.93)}
FULL_TRAIN_GRAPHS = {"SBM_CLUSTER": 10000, "ZINC": 10000, "MNIST": 55000}
COMPILE_CHOICES = {"both": (False, True), "on": (True,), "off": (False,)}
#: What :func:`timed` reads (``--clock``): wall time, or the process's CPU time, which a
#: shared machine's other jobs do not inflate (they take turns on the cores, and a waiting
#: process uses no CPU time); CPU time sums the process's threads.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCKS["wall"]
#: The options several benchmarks take, spelt once (:func:`new_parser`).
OPTIONS = {
    "compile": dict(choices=list(COMPILE_CHOICES), default="both",
                    help="both (default): each model eager and compiled; on or off: one mode"),
    "clock": dict(choices=list(CLOCKS), default="wall",
                  help="wall (default) or the process's CPU time, steadier on a shared CPU"),
    "device": dict(type=cli.device_name, default="cpu", help="cpu, cuda or cuda:N (default cpu)"),
    "zinc_dir": dict(type=cli.data_folder, default="datasets/ZINC", metavar="DIR",
                     help="folder of the ZINC raw pickles"),
    "threads": dict(type=cli.int_in(1, cli.MAX_WORKERS),
                    help="torch threads (default: torch's; set OMP_NUM_THREADS=1 to time)"),
}
# The compiler loads torch's C++-extension helper, which warns on a machine without CUDA that
# it found no CUDA runtime: irrelevant to a CPU benchmark, and a GPU machine never sees it.
logging.getLogger("torch.utils.cpp_extension").addFilter(
    lambda record: not record.getMessage().startswith("No CUDA runtime is found"))


def mode(compiled: bool) -> str:
    return "compiled" if compiled else "eager"


def described(device: torch.device) -> str:
    """The device in words: the GPU's name, or the CPU and its threads."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else \
        f"CPU, {torch.get_num_threads()} thread(s)"


def new_parser(name: str, doc: str, *common: str) -> argparse.ArgumentParser:
    """The parser of ``python -m scripts.bench NAME``, with the :data:`OPTIONS` named."""
    out = cli.ArgumentParser(prog=f"python -m scripts.bench {name}",
                             description=doc.split("\n\n")[0])
    for option in common:
        out.add_argument(f"--{option}", **OPTIONS[option])
    return out


def start(args: argparse.Namespace) -> tuple[torch.device, tuple[bool, ...]]:
    """The device, the clock selected, and the modes ``--compile`` asks for that can run here
    (False eager, True compiled; without ``--compile``, both); one line says why compiled is
    left out where it cannot run."""
    device = torch.device(args.device)
    set_clock(args.clock, device)
    wanted = COMPILE_CHOICES[getattr(args, "compile", "both")]
    why_not = compilation.unavailable(device) if True in wanted else None
    if why_not is None:
        return device, wanted
    print(f"compile: unavailable on {device} ({why_not}); measuring eager only", flush=True)
    return device, (False,)


# ----------------------------------------------------------------------------- the nets
def published(dataset: str, model: str) -> dict:
    """``model``'s published config for ``dataset`` (the release's file, as a sweep cell's)."""
    return load_config(ROOT / cell_defaults(model, dataset)["config"])


def twins(model: str, cfg: dict, io: NetIO, device: torch.device, modes: tuple[bool, ...],
          seed: int = 0) -> dict[bool, nn.Module]:
    """Per mode, ``model`` built once from ``cfg`` and ``seed`` and copied, the compiled copy
    with its regions compiled (``train/compilation.py``): both start from the same weights."""
    if True in modes:
        # Each model compiles as in a run of its own: a fair warm-up, and the variants of the
        # shared regions (widths, flags) built for earlier models do not pile up to the
        # compiler's recompile limit, past which a region runs eagerly.
        torch._dynamo.reset()
    torch.manual_seed(seed)
    net = build_net(model, io, cfg["net_params"]).to(device)
    nets = {compiled: copy.deepcopy(net) for compiled in modes}
    if True in nets:
        compilation.compile_regions(nets[True])
    return nets


def default_mode(dataset: str, model: str, device: torch.device, setting: str
                 ) -> tuple[bool | None, str]:
    """Whether a full training run of ``model`` at its published config (every training graph,
    the config's batch size) compiles here (``params.compile = "auto"``), and why, in words.
    ``--compile off`` does not probe the compiler: where the run is long enough for ``auto`` to
    compile, the default is then left unknown (``None``)."""
    params = published(dataset, model)["params"]
    epochs, batches = params["epochs"], math.ceil(FULL_TRAIN_GRAPHS[dataset] / params["batch_size"])
    steps = epochs * batches
    if setting == "off" and steps >= compilation.MIN_STEPS:
        compiled, why = None, "not probed (--compile off)"
    else:
        compiled, why = compilation.decide("auto", device, steps)
    word = "unknown" if compiled is None else mode(compiled)
    return compiled, f"{word} ({epochs} epochs x {batches} batches = {steps} steps: {why})"


def compile_counters() -> tuple[int, int, int]:
    """Graphs compiled so far, and the compiler's on-disk cache hits and misses."""
    from torch._dynamo.utils import counters

    return (counters["stats"]["unique_graphs"], counters["inductor"]["fxgraph_cache_hit"],
            counters["inductor"]["fxgraph_cache_miss"])


# ----------------------------------------------------------------------------- ratio lines
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


# ----------------------------------------------------------------------------- timing
def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def set_clock(name: str, device: torch.device) -> None:
    """Select :data:`CLOCKS` ``name``; CPU time says nothing of GPU work, so ``cpu`` is refused
    on CUDA."""
    global _clock
    if name == "cpu" and device.type == "cuda":
        raise cli.UsageError("--clock cpu measures the CPU's work only: use --clock wall with "
                             "--device cuda")
    _clock = CLOCKS[name]


def timed(fn: Callable[[], object], device: torch.device) -> float:
    sync(device)
    t0 = _clock()
    fn()
    sync(device)
    return _clock() - t0


def rotated_rounds(items: list, repeats: int) -> Iterator:
    """``repeats`` rounds over ``items``, each round starting one further along, so that no
    item always runs first (after a warm-up of its own) or always follows the same one."""
    for r in range(repeats):
        k = r % len(items)
        yield from items[k:] + items[:k]


@dataclass
class Timings:
    """What :func:`interleave` measured, by candidate."""

    first: dict = field(default_factory=dict)  # seconds of the first, untimed call
    times: dict = field(default_factory=dict)  # seconds of every timed call
    cache: dict = field(default_factory=dict)  # compiler cache hits, misses in the first call
    recompiled: dict = field(default_factory=dict)  # graphs compiled during the timed calls

    def median(self, key: Hashable) -> float:
        return statistics.median(self.times[key])

    def warm_up(self, key: Hashable) -> float:
        """The first call's excess over a timed one: for a compiled candidate, the compiler."""
        return max(self.first[key] - self.median(key), 0.0)

    def medians(self) -> dict:
        return {key: self.median(key) for key in self.times}


def interleave(steps: dict[Hashable, Callable[[], object]], repeats: int, device: torch.device,
               untimed: int = 1) -> Timings:
    """Call each step ``untimed`` times (the first timed apart: its compile warm-up), then time
    ``repeats`` :func:`rotated_rounds` of them, counting the graphs compiled meanwhile."""
    out = Timings(times={key: [] for key in steps}, recompiled=dict.fromkeys(steps, 0))
    for key, fn in steps.items():
        before = compile_counters()
        out.first[key] = timed(fn, device)
        after = compile_counters()
        out.cache[key] = (after[1] - before[1], after[2] - before[2])
        for _ in range(untimed - 1):
            fn()
    for key in rotated_rounds(list(steps), repeats):
        before = compile_counters()[0]
        out.times[key].append(timed(steps[key], device))
        out.recompiled[key] += compile_counters()[0] - before
    return out

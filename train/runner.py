"""The experiment driver behind every ``main_*.py`` script.

Reads the config and command-line overrides, loads the data, and trains ``runs`` seeds with the
release's protocol: Adam + ReduceLROnPlateau on the validation loss, stopping at ``min_lr``,
``max_time`` hours or ``epochs``; the best-validation weights are kept and evaluated at the end.
Bad input is reported in one line (exit code 2) before anything is written. A run that
diverges (a non-finite loss) stops with status ``diverged`` (exit code 1); Ctrl-C and SIGTERM (a
Slurm time limit) record the finished runs and status ``interrupted`` (exit codes 130 / 143).
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import logging
import math
import os
import platform
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from data.common import DataError
from nets.gnn_net import NetIO
from nets.registry import MODELS, build_net, count_parameters, uses_self_loops
from train.checkpoint import save_checkpoint
from train.cli import ArgumentParser
from train.config import (
    ConfigError,
    apply_overrides,
    load_config,
    option_help,
    override_keys,
    validate,
)
from train.device import DeviceError, check_device, select_device
from train.loop import FullGraph, GraphBatches
from train.results import (
    ExperimentRecord,
    OutputError,
    check_out_dir,
    make_run_dir,
    write_atomic,
)
from train.tasks import Task

log = logging.getLogger("autogcn")


class TrainingError(RuntimeError):
    """Training cannot go on; the message says why and what to change."""


class Diverged(TrainingError):
    """A loss became NaN or infinite."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a Slurm time limit): handled like Ctrl-C."""

RELEASE_SEED_GENERATOR = 121  # the release draws run seeds from np.random.seed(121)


def release_seeds(runs: int) -> list[int]:
    """The release's run seeds: 4565, 7432, 9823, 2113, 5812 for five runs."""
    rng = np.random.RandomState(RELEASE_SEED_GENERATOR)
    return [int(s) for s in rng.randint(10000, size=runs)]


def set_seed(seed: int) -> None:
    import random

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


# ----------------------------------------------------------------------------- command line
def build_parser(task: Task, description: str) -> argparse.ArgumentParser:
    """``--config`` plus one ``--key VALUE`` per config key, its help from the config schema."""
    parser = ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Booleans take True/False. Every option overrides the config file's value.")
    parser.add_argument("--config", help="JSON config in the authors' schema")
    parser.add_argument("--dataset", help=f"one of {', '.join(task.datasets)}")
    for key in override_keys():
        if key != "dataset":
            parser.add_argument(f"--{key}", dest=f"override_{key}", metavar="VALUE",
                                help=option_help(key))
    return parser


def resolve_config(task: Task, args: argparse.Namespace) -> tuple[dict[str, Any], set[str]]:
    """Config file (or defaults) + command-line overrides, validated; and the keys the command
    line set."""
    if args.config:
        cfg = load_config(args.config)
    else:
        cfg = validate({"model": "AUTOGCN", "dataset": task.datasets[0],
                        "out_dir": task.default_out_dir}, origin="defaults")
    overrides = {k[len("override_"):]: v for k, v in vars(args).items()
                 if k.startswith("override_") and v is not None}
    if args.dataset:
        overrides["dataset"] = args.dataset
    cfg = apply_overrides(cfg, overrides)
    if cfg["dataset"] not in task.datasets:
        raise ConfigError(f"unknown dataset {cfg['dataset']!r} for this script; "
                          f"expected one of {', '.join(task.datasets)}")
    if cfg["model"] not in MODELS:
        raise ConfigError(f"unknown model {cfg['model']!r}; known: {', '.join(sorted(MODELS))}")
    return cfg, set(overrides)


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def main(task: Task, argv: Sequence[str] | None = None, description: str = "") -> int:
    """Entry point of a main script; returns the process exit code."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    args = build_parser(task, description).parse_args(argv)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        cfg, cli_keys = resolve_config(task, args)
        return run_experiment(task, cfg, list(sys.argv if argv is None else argv), cli_keys)
    except (ConfigError, DataError, DeviceError, OutputError, TrainingError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1 if isinstance(err, Diverged) else 2
    except KeyboardInterrupt as err:
        what = "terminated" if isinstance(err, Terminated) else "interrupted"
        print(f"{what}: results of finished runs are kept in the run folder", file=sys.stderr)
        return 143 if isinstance(err, Terminated) else 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# ----------------------------------------------------------------------------- experiment
def load_data(task: Task, cfg: dict[str, Any], write_data: bool = True):
    """The dataset, the net's input/output sizes, and a per-run factory of epoch loops.

    ``write_data=False`` (checkpoint evaluation): nothing is generated into a data folder."""
    data_cfg = cfg["data"]
    if task.level == "single_graph":
        from data.loaders import load_node_data
        from data.node_datasets import get_split, with_edge_direction

        ds = with_edge_direction(load_node_data(cfg["dataset"], data_cfg),
                                 data_cfg["edge_direction"])
        io = NetIO(task.level, task.input_kind, ds.features.shape[1], ds.num_classes)
        graph = ds.graph
        if uses_self_loops(cfg["model"], cfg["net_params"]):
            graph = graph.add_self_loops()

        def make_loop(run: int, seed: int, device: torch.device) -> FullGraph:
            train, val, test = get_split(ds, run, seed, mode=data_cfg["split"],
                                         ratios=data_cfg["split_ratio"])
            return FullGraph(graph, ds.features, ds.labels,
                             {"train": train, "val": val, "test": test}, task, device)

        return ds.info, io, make_loop

    from data.loaders import load_graph_dataset

    ds = load_graph_dataset(cfg["dataset"], data_cfg, write_data)
    if uses_self_loops(cfg["model"], cfg["net_params"]):
        ds = ds.with_self_loops()
    io = NetIO(task.level, task.input_kind, ds.in_dim, ds.num_classes)
    info = {name: split.stats() for name, split in ds.splits().items() if split is not None}

    def make_loop(run: int, seed: int, device: torch.device) -> GraphBatches:
        gen = torch.Generator().manual_seed(seed)
        workers = data_cfg["loader_workers"]
        if workers is None:  # on a GPU, collate in workers; on the CPU they would compete
            workers = min(4, max((os.cpu_count() or 1) // 2, 1)) if device.type == "cuda" else 0
        return GraphBatches(ds, task, cfg["params"]["batch_size"], device, generator=gen,
                            workers=workers)

    return info, io, make_loop


def run_experiment(task: Task, cfg: dict[str, Any], command: list[str],
                   cli_keys: set[str] | frozenset[str] = frozenset()) -> int:
    """Train every seed of ``cfg``; ``cli_keys``: the config keys set on the command line."""
    device = select_device(cfg["gpu"]["use"], cfg["gpu"]["id"],
                           from_command_line="gpu_id" in cli_keys)
    summary_writer_class()  # a missing package stops the run before anything is written
    check_out_dir(cfg["out_dir"])
    data_info, io, make_loop = load_data(task, cfg)  # before CUDA starts: loaders may fork
    check_device(device)
    try:
        num_params = count_parameters(build_net(cfg["model"], io, cfg["net_params"]))
    except ValueError as err:  # e.g. an option the model does not support
        raise ConfigError(str(err)) from None
    params = cfg["params"]
    if "seed" in cli_keys:
        seeds = [params["seed"] + i for i in range(params["runs"])]
    else:
        seeds = release_seeds(params["runs"])
        log.info("seeds: the release's %s (params.seed = %d applies only when --seed is given)",
                 seeds, params["seed"])

    run_dir = make_run_dir(cfg["out_dir"], cfg["model"], cfg["dataset"])
    file_log = logging.FileHandler(run_dir / "train.log")
    file_log.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(file_log)
    write_atomic(run_dir / "config.json", json.dumps(cfg, indent=2))
    log.info("%s on %s: %d parameters, device %s, seeds %s -> %s", cfg["model"], cfg["dataset"],
             num_params, device, seeds, run_dir)
    record = ExperimentRecord(run_dir, {
        "model": cfg["model"], "dataset": cfg["dataset"], "task": task.name,
        "num_params": num_params, "seeds": seeds, "primary_metric": task.primary,
        "higher_is_better": task.higher_is_better, "device": str(device),
        "versions": _versions(), "command": command, "data": data_info,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"), "config": cfg,
    })
    try:
        for i, seed in enumerate(seeds):
            record.add_run(train_run(task, cfg, io, make_loop(i, seed, device), seed, i,
                                     device, run_dir, heartbeat=record.heartbeat))
    except BaseException as err:
        if isinstance(err, KeyboardInterrupt):
            status = "interrupted"
        else:
            status = "diverged" if isinstance(err, Diverged) else "failed"
        record.finish(status, error=str(err) if isinstance(err, TrainingError) else repr(err))
        raise
    finally:
        log.removeHandler(file_log)
        file_log.close()
    record.finish("complete")
    _log_summary(record.data, run_dir)
    return 0


def train_run(task: Task, cfg: dict[str, Any], io: NetIO, loop, seed: int, index: int,
              device: torch.device, run_dir: Path,
              heartbeat: Callable[[], None] | None = None) -> dict[str, Any]:
    """Train one seed; returns its record (final metrics with the best-validation weights).

    ``heartbeat`` is called after every epoch (the results file records that the run is alive).
    """
    params = cfg["params"]
    set_seed(seed)
    model = build_net(cfg["model"], io, cfg["net_params"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=params["init_lr"],
                                 weight_decay=params["weight_decay"])
    schedule = params["scheduler"] or ("none" if task.level == "single_graph" else "plateau")
    scheduler = None
    if schedule == "plateau":
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="min", factor=params["lr_reduce_factor"],
            patience=params["lr_schedule_patience"])
    writer = summary_writer_class()(str(run_dir / "logs" / f"run{index}_seed{seed}"))
    ckpt_path = run_dir / "checkpoints" / f"run{index}_seed{seed}_best.pt"
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    best_value, best_epoch, best_state = None, -1, None
    epoch_times: list[float] = []
    stop_reason = "epochs"
    start = time.perf_counter()
    bar = tqdm(range(params["epochs"]), desc=f"run {index} seed {seed}", disable=None,
               dynamic_ncols=True)
    for epoch in bar:
        t0 = time.perf_counter()
        train_loss, train_metrics = _train_epoch(loop, model, optimizer)
        evaluated = loop.evaluate_splits(model, ["val", "test"])
        val, test = evaluated["val"], evaluated["test"]
        epoch_times.append(time.perf_counter() - t0)
        for split, loss in (("training", train_loss), ("validation", val and val[0])):
            if loss is not None and not math.isfinite(loss):
                bar.close()
                writer.close()
                raise Diverged(f"run {index} (seed {seed}) diverged: the {split} loss became "
                               f"{loss} at epoch {epoch}; try a lower --init_lr (the best "
                               f"checkpoint so far is kept: {ckpt_path})")
        lr = optimizer.param_groups[0]["lr"]
        if scheduler is not None:
            scheduler.step(val[0] if val else train_loss)

        writer.add_scalar("learning_rate", lr, epoch)
        for split, result in (("train", (train_loss, train_metrics)), ("val", val),
                              ("test", test)):
            if result is not None:
                writer.add_scalar(f"{split}/_loss", result[0], epoch)
                for name, value in result[1].items():
                    writer.add_scalar(f"{split}/_{name}", value, epoch)
        if val is None or task.is_better(val[1][task.primary], best_value):
            best_value = val[1][task.primary] if val else None
            best_epoch, best_state = epoch, copy.deepcopy(model.state_dict())
            save_checkpoint(ckpt_path, model, cfg, io, seed, index, epoch)
        desc = {"loss": f"{train_loss:.4f}", "lr": f"{lr:.1e}"}
        if val:
            desc[f"val_{task.primary}"] = f"{val[1][task.primary]:.4f}"
        bar.set_postfix(desc)
        if epoch % params["print_epoch_interval"] == 0:
            _log_epoch(epoch, (train_loss, train_metrics), val, test, lr, epoch_times[-1])
        if optimizer.param_groups[0]["lr"] < params["min_lr"]:
            stop_reason = "min_lr"
            break
        if time.perf_counter() - start > params["max_time"] * 3600:
            stop_reason = "max_time"
            break
        if heartbeat is not None:
            heartbeat()
    bar.close()
    writer.close()

    model.load_state_dict(best_state)
    final = {split: result[1] if result else None
             for split, result in loop.evaluate_splits(model, ["train", "val", "test"]).items()}
    run = {
        "seed": seed, "epochs": len(epoch_times), "best_epoch": best_epoch,
        "stop_reason": stop_reason, "s_per_epoch": float(np.mean(epoch_times)),
        "total_time_s": time.perf_counter() - start, "final": final,
        "peak_memory_mb": _peak_memory_mb(device), "checkpoint": str(ckpt_path.name),
    }
    log.info("run %d seed %d done: %s", index, seed, json.dumps(final))
    return run


def _train_epoch(loop, model: torch.nn.Module, optimizer: torch.optim.Optimizer):
    """One training epoch; a batch BatchNorm cannot normalise becomes a one-line error."""
    try:
        return loop.train_epoch(model, optimizer)
    except ValueError as err:
        if "Expected more than 1 value per channel" not in str(err):
            raise
        raise TrainingError("a training batch has a single node, which BatchNorm cannot "
                            "normalise in training mode: use a larger --batch_size or "
                            "--batch_norm False") from None


@functools.lru_cache(maxsize=1)
def summary_writer_class() -> type:
    """tensorboardX's writer (the requirement), else torch's own where only the ``tensorboard``
    package is installed (common on GPU machines); both write the same event files."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            raise ConfigError("tensorboard logging needs tensorboardX (pip install tensorboardX; "
                              "requirements.txt has it) or tensorboard") from None
    return SummaryWriter


def _log_epoch(epoch: int, train, val, test, lr: float, seconds: float) -> None:
    parts = [f"epoch {epoch:4d}"]
    for split, result in (("train", train), ("val", val), ("test", test)):
        if result is not None:
            parts.append(f"{split} loss {result[0]:.4f} " +
                         " ".join(f"{k} {v:.4f}" for k, v in result[1].items()))
    parts += [f"lr {lr:.2e}", f"{seconds:.1f}s"]
    log.info(" | ".join(parts))


def _peak_memory_mb(device: torch.device) -> dict[str, float]:
    peak = {"process_max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if device.type == "cuda":
        peak["cuda_max_allocated_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
    return peak


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "torch": torch.__version__,
                "numpy": np.__version__}
    if torch.cuda.is_available():
        versions["cuda"] = str(torch.version.cuda)
    return versions


def _log_summary(data: dict[str, Any], run_dir: Path) -> None:
    for split in ("train", "val", "test"):
        for name, stat in data["summary"].get(split, {}).items():
            log.info("final %s %s: %.4f ± %.4f over %d run(s)", split, name, stat["mean"],
                     stat["std"], stat["n"])
    log.info("results written to %s", run_dir)

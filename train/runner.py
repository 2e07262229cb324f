"""The experiment driver behind every ``main_*.py`` script: config and overrides, the data,
then ``runs`` seeds with the release's protocol (Adam + ReduceLROnPlateau on the validation
loss, the best-validation weights kept; other rules: :mod:`train.stopping`). Statuses, exit
codes, interrupts and ``--resume``: docs/reproducing.md. Whichever way a run ends, its writer,
progress bar, loader workers and log file are closed.
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
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from data.files import WriteError
from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters, optimizer_groups, uses_self_loops
from train import compilation, interrupts
from train.checkpoint import STATE_FILE, save_checkpoint, save_state
from train.config import (
    apply_overrides,
    load_config,
    option_help,
    override_keys,
    validate,
)
from train.device import check_device, select_device
from train.errors import ArgumentParser, ConfigError, Diverged, TrainingError, first_line, run_tool
from train.interrupts import Interrupted, as_interrupted, check, deferred
from train.loop import FullGraph, GraphBatches
from train.results import (
    ExperimentRecord,
    check_out_dir,
    make_run_dir,
    write_atomic,
)
from train.resume import (
    Progress,
    ResumePoint,
    graph_data_fingerprint,
    node_data_fingerprint,
    open_run,
    restore_run,
    run_config,
    run_state,
)
from train.stopping import EarlyStopping
from train.tasks import Task

log = logging.getLogger("autogcn")


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


# cuBLAS is only deterministic with a fixed workspace per stream; torch refuses cuBLAS calls
# under deterministic algorithms unless this variable is ":4096:8" or ":16:8".
CUBLAS_WORKSPACE_CONFIG = ":4096:8"


@contextmanager
def deterministic_mode(enabled: bool) -> Iterator[None]:
    """``--deterministic``: torch's deterministic algorithms, cuDNN without autotuning and
    ``CUBLAS_WORKSPACE_CONFIG`` inside the block; every setting is put back on the way out (an
    in-process caller, a test, is left as it was)."""
    if not enabled:
        yield
        return
    cudnn = torch.backends.cudnn
    saved = (torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled(), cudnn.benchmark,
             cudnn.deterministic)
    env_before = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    if env_before is None:  # read when CUDA first runs cuBLAS: after this (check_device)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = CUBLAS_WORKSPACE_CONFIG
    torch.use_deterministic_algorithms(True)
    cudnn.benchmark, cudnn.deterministic = False, True
    log.info("deterministic algorithms on (slower; see docs/reproducing.md)")
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
        cudnn.benchmark, cudnn.deterministic = saved[2], saved[3]
        if env_before is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)


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
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue this run folder after its last finished epoch (its own "
                             "config unless --config or options are given, which must match)")
    parser.add_argument("--restart", action="store_true",
                        help="with --resume: start the experiment anew in a new run folder")
    return parser


def resolve_config(task: Task, args: argparse.Namespace) -> tuple[dict[str, Any], set[str]]:
    """Config file (or defaults) + command-line overrides, validated; and the keys the command
    line set."""
    if args.config is not None:  # an empty --config is an error, not the defaults
        cfg = load_config(args.config)
    elif args.resume and not args.restart:  # the run's own
        cfg = load_config(run_config(args.resume))
    else:
        cfg = validate({"model": "AUTOGCN", "dataset": task.datasets[0],
                        "out_dir": task.default_out_dir}, origin="defaults")
    overrides = {k[len("override_"):]: v for k, v in vars(args).items()
                 if k.startswith("override_") and v is not None}
    if args.dataset is not None:  # an empty --dataset is an error, not the config's dataset
        overrides["dataset"] = args.dataset
    cfg = apply_overrides(cfg, overrides)
    if cfg["dataset"] not in task.datasets:
        raise ConfigError(f"unknown dataset {cfg['dataset']!r} for this script; "
                          f"expected one of {', '.join(task.datasets)}")
    return cfg, set(overrides)


def main(task: Task, argv: Sequence[str] | None = None, description: str = "") -> int:
    """Entry point of a main script; returns the process exit code."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    args = build_parser(task, description).parse_args(argv)

    def experiment(_: object) -> int:
        cfg, cli_keys = resolve_config(task, args)
        return run_experiment(task, cfg, list(sys.argv if argv is None else argv), cli_keys,
                              resume=None if args.restart else args.resume)

    return run_tool(experiment, argv, interrupted=_kept)


def _kept(stop: Interrupted) -> str:
    """What an interrupted experiment leaves."""
    return (f"results of finished runs are kept in {stop.run_dir}" if stop.run_dir
            else "stopped before training started")


# ----------------------------------------------------------------------------- experiment
def load_data(task: Task, cfg: dict[str, Any], write_data: bool = True):
    """The dataset, the net's input/output sizes, and a per-run factory of epoch loops.

    ``write_data=False`` (checkpoint evaluation): nothing is generated into a data folder."""
    data_cfg = cfg["data"]
    if task.level == "single_graph":
        from data.loaders import load_node_data
        from data.node_datasets import (
            get_split,
            with_edge_direction,
            with_row_normalised_features,
        )

        ds = with_edge_direction(load_node_data(cfg["dataset"], data_cfg),
                                 data_cfg["edge_direction"])
        if data_cfg["normalize_features"]:
            ds = with_row_normalised_features(ds)
        io = NetIO(task.level, task.input_kind, ds.features.shape[1], ds.num_classes)
        graph = ds.graph
        if uses_self_loops(cfg["model"], cfg["net_params"]):
            graph = graph.add_self_loops()

        def make_loop(run: int, seed: int, device: torch.device) -> FullGraph:
            train, val, test = get_split(ds, run, seed, mode=data_cfg["split"],
                                         ratios=data_cfg["split_ratio"])
            return FullGraph(graph, ds.features, ds.labels,
                             {"train": train, "val": val, "test": test}, task, device)

        info = {**ds.info, "fingerprint": node_data_fingerprint(graph, ds.features, ds.labels)}
        return info, io, make_loop

    from data.loaders import load_graph_dataset

    ds = load_graph_dataset(cfg["dataset"], data_cfg, write_data)
    if uses_self_loops(cfg["model"], cfg["net_params"]):
        ds = ds.with_self_loops()
    io = NetIO(task.level, task.input_kind, ds.in_dim, ds.num_classes)
    info = {name: split.stats() for name, split in ds.splits().items() if split is not None}
    info["fingerprint"] = graph_data_fingerprint(ds.splits())

    def make_loop(run: int, seed: int, device: torch.device) -> GraphBatches:
        gen = torch.Generator().manual_seed(seed)
        workers = data_cfg["loader_workers"]
        if workers is None:  # on a GPU, collate in workers; on the CPU they would compete
            workers = min(4, max((os.cpu_count() or 1) // 2, 1)) if device.type == "cuda" else 0
        return GraphBatches(ds, task, cfg["params"]["batch_size"], device, generator=gen,
                            workers=workers)

    return info, io, make_loop


def run_experiment(task: Task, cfg: dict[str, Any], command: list[str],
                   cli_keys: set[str] | frozenset[str] = frozenset(),
                   resume: str | os.PathLike | None = None) -> int:
    """Train every seed of ``cfg``; ``cli_keys``: the config keys set on the command line;
    ``resume``: a run folder to continue (:mod:`train.resume`)."""
    device = select_device(cfg["gpu"]["use"], cfg["gpu"]["id"],
                           from_command_line="gpu_id" in cli_keys)
    summary_writer_class()  # a missing package stops the run before anything is written
    check_out_dir(cfg["out_dir"])
    data_info, io, make_loop = load_data(task, cfg)  # before CUDA starts: loaders may fork
    with deterministic_mode(cfg["params"]["deterministic"]):  # set before CUDA's first call
        return _run_loaded(task, cfg, command, cli_keys, device, data_info, io, make_loop,
                           resume)


def _run_loaded(task: Task, cfg: dict[str, Any], command: list[str],
                cli_keys: set[str] | frozenset[str], device: torch.device,
                data_info: dict[str, Any], io: NetIO, make_loop: Callable,
                resume: str | os.PathLike | None = None) -> int:
    """:func:`run_experiment` once the data is loaded: check the device, make the run folder,
    train every seed and write the record."""
    check_device(device)
    num_params = count_parameters(build_net(cfg["model"], io, cfg["net_params"]))
    params = cfg["params"]
    if "seed" in cli_keys:
        seeds = [params["seed"] + i for i in range(params["runs"])]
    else:
        seeds = release_seeds(params["runs"])
        log.info("seeds: the release's %s (params.seed = %d applies only when --seed is given)",
                 seeds, params["seed"])
    point = None
    if resume is not None:  # refused here, before anything is written
        # the seeds follow from the command line (--seed or not): without --seed, the run's own
        point = open_run(resume, cfg, seeds if "seed" in cli_keys else None,
                         data_info["fingerprint"])
        if point.complete:
            log.info("%s is complete: nothing to resume", resume)
            return 0
        seeds = point.record["seeds"]

    # From here on a signal waits for a safe point (between batches): the run folder, its
    # writers and the loader workers exist and must be closed, and the record must say why.
    with deferred():
        if point is None:
            run_dir = make_run_dir(cfg["out_dir"], cfg["model"], cfg["dataset"])
        else:
            run_dir = point.run_dir
        file_log = _RunLog(run_dir / "train.log")
        file_log.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        log.addHandler(file_log)
        try:
            log.info("%s on %s: %d parameters, device %s, seeds %s -> %s", cfg["model"],
                     cfg["dataset"], num_params, device, seeds, run_dir)
            if point is None:
                write_atomic(run_dir / "config.json", json.dumps(cfg, indent=2))
                record = ExperimentRecord(run_dir, {
                    "model": cfg["model"], "dataset": cfg["dataset"], "task": task.name,
                    "num_params": num_params, "seeds": seeds, "primary_metric": task.primary,
                    "higher_is_better": task.higher_is_better, "device": str(device),
                    "versions": _versions(), "command": command, "data": data_info,
                    "started": time.strftime("%Y-%m-%d %H:%M:%S"), "config": cfg,
                })
            else:
                record = ExperimentRecord(run_dir, _resumed_header(point, command, device))
            _train_runs(task, cfg, io, make_loop, seeds, device, run_dir, record, point)
            _log_summary(record.data, run_dir)  # a signal now finds the work done: exit 0
        except KeyboardInterrupt as err:
            stop = as_interrupted(err)
            stop.run_dir = run_dir
            if stop is err:
                raise
            raise stop from None
        finally:
            log.removeHandler(file_log)
            file_log.close()
    return 0


def _train_runs(task: Task, cfg: dict[str, Any], io: NetIO, make_loop, seeds: list[int],
                device: torch.device, run_dir: Path, record: ExperimentRecord,
                point: ResumePoint | None = None) -> None:
    """Train every seed into ``record`` (after those ``point`` finished, continuing its saved
    state); on any way out the record says how it ended."""
    done = point.finished_runs if point is not None else 0
    fingerprint = record.data["data"]["fingerprint"]
    try:
        for i, seed in enumerate(seeds[done:], start=done):
            check()  # between runs: a signal during the last one's final evaluation
            loop = make_loop(i, seed, device)
            try:
                run = train_run(task, cfg, io, loop, seed, i, device, run_dir,
                                heartbeat=record.heartbeat, fingerprint=fingerprint,
                                state=point.state if point is not None and i == done else None)
            finally:
                loop.close()
            record.add_run(run)
    except BaseException as err:
        if isinstance(err, KeyboardInterrupt):
            status, error = "interrupted", as_interrupted(err).word
        else:
            status = "diverged" if isinstance(err, Diverged) else "failed"
            error = str(err) if isinstance(err, (TrainingError, WriteError)) else repr(err)
        try:
            record.finish(status, error=error)
        except OSError:
            pass  # a full disk: results.json keeps its last whole version
        raise
    record.finish("complete")
    (run_dir / STATE_FILE).unlink(missing_ok=True)  # nothing is left to continue


def _resumed_header(point: ResumePoint, command: list[str], device: torch.device) -> dict:
    """The record of a run folder being continued: its finished runs kept, and a ``resumed``
    entry saying from where and with which command."""
    data = {k: v for k, v in point.record.items() if k not in ("finished", "error")}
    data.update(device=str(device), versions=_versions())
    data["resumed"] = [*data.get("resumed", []), {
        "at": time.strftime("%Y-%m-%d %H:%M:%S"), "runs_finished": point.finished_runs,
        "after_epoch": point.state["epoch"] if point.state is not None else None,
        "command": command}]
    return data


class _RunLog(logging.FileHandler):
    """``train.log``; a line that cannot be written (a full disk) is dropped without a
    traceback: the next result file fails too and says so in one line."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass

    def close(self) -> None:  # the last lines' flush on a full disk: dropped, as above
        try:
            super().close()
        except OSError:
            pass


def train_run(task: Task, cfg: dict[str, Any], io: NetIO, loop, seed: int, index: int,
              device: torch.device, run_dir: Path,
              heartbeat: Callable[[], None] | None = None, fingerprint: Any = None,
              state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train one seed; returns its record (final metrics with the best-validation weights).

    After every epoch: the run's state is saved (:data:`STATE_FILE`, with the data's
    ``fingerprint``), then ``heartbeat`` is called. ``state``: a saved state to continue."""
    params = cfg["params"]
    set_seed(seed)
    model = build_net(cfg["model"], io, cfg["net_params"]).to(device)
    compiled, why = compilation.prepare(model, cfg["model"], params["compile"], device,
                                        params["epochs"] * loop.steps_per_epoch,
                                        params["deterministic"])
    if index == 0 or state is not None:
        log.info("compile: %s", why)
    warm_up = compilation.WarmUp(compiled and (index == 0 or state is not None))
    optimizer = torch.optim.Adam(optimizer_groups(model, params, cfg["net_params"]),
                                 lr=params["init_lr"],
                                 weight_decay=params["weight_decay"])
    schedule = params["scheduler"] or ("none" if task.level == "single_graph" else "plateau")
    scheduler = None
    if schedule == "plateau":
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="min", factor=params["lr_reduce_factor"],
            patience=params["lr_schedule_patience"])
    ckpt_path = run_dir / "checkpoints" / f"run{index}_seed{seed}_best.pt"
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    stopping = EarlyStopping(params["early_stop"], params["early_stop_patience"],
                             task.is_better)
    progress = Progress()
    resumed = {}
    if state is not None:
        progress = restore_run(state, model, optimizer, scheduler, stopping, loop)
        if progress.best_state is not None:  # the file may hold a later, unsaved epoch's
            save_checkpoint(ckpt_path, progress.best_state, cfg, io, seed, index,
                            progress.best_epoch)
        # The stopped process's last scalars may not have reached its event file (the writer
        # is asynchronous): a new file replaces them all (tensorboard drops what earlier files
        # logged from the purge step on) with those the state kept.
        resumed = {"purge_step": 0, "filename_suffix": f".resumed{progress.epoch + 1}"}
        log.info("run %d seed %d: resumed after epoch %d", index, seed, progress.epoch)
    writer = summary_writer_class()(str(run_dir / "logs" / f"run{index}_seed{seed}"),
                                    **resumed)
    for epoch, scalars in enumerate(progress.scalars):
        for tag, value in scalars.items():
            writer.add_scalar(tag, value, epoch)
    start = time.perf_counter() - progress.elapsed_s
    epochs = range(progress.epoch + 1, params["epochs"] if progress.stop_reason is None else 0)
    bar = tqdm(epochs, desc=f"run {index} seed {seed}", disable=None, dynamic_ncols=True,
               initial=progress.epoch + 1, total=params["epochs"])
    try:
        for epoch in bar:
            check()
            t0 = time.perf_counter()
            train_loss, train_metrics = _train_epoch(loop, model, optimizer)
            evaluated = loop.evaluate_splits(model, ["val", "test"])
            val, test = evaluated["val"], evaluated["test"]
            progress.epoch_times.append(time.perf_counter() - t0)
            warm_up.epoch_done(progress.epoch_times[-1])
            for split, loss in (("training", train_loss), ("validation", val and val[0])):
                if loss is not None and not math.isfinite(loss):
                    raise Diverged(f"run {index} (seed {seed}) diverged: the {split} loss "
                                   f"became {loss} at epoch {epoch}; try a lower --init_lr "
                                   f"(the best checkpoint so far is kept: {ckpt_path})")
            lr = optimizer.param_groups[0]["lr"]
            if scheduler is not None:
                scheduler.step(val[0] if val else train_loss)

            scalars = {"learning_rate": lr}
            for split, result in (("train", (train_loss, train_metrics)), ("val", val),
                                  ("test", test)):
                if result is not None:
                    scalars[f"{split}/_loss"] = result[0]
                    scalars.update({f"{split}/_{k}": v for k, v in result[1].items()})
            for tag, value in scalars.items():
                writer.add_scalar(tag, value, epoch)
            progress.scalars.append(scalars)
            keep, stop_early = stopping.update(val and val[0], val and val[1][task.primary])
            if keep:
                progress.best_epoch = epoch
                progress.best_state = copy.deepcopy(model.state_dict())
                save_checkpoint(ckpt_path, model, cfg, io, seed, index, epoch)
            desc = {"loss": f"{train_loss:.4f}", "lr": f"{lr:.1e}"}
            if val:
                desc[f"val_{task.primary}"] = f"{val[1][task.primary]:.4f}"
            bar.set_postfix(desc)
            if epoch % params["print_epoch_interval"] == 0:
                _log_epoch(epoch, (train_loss, train_metrics), val, test, lr,
                           progress.epoch_times[-1])
            progress.epoch, progress.elapsed_s = epoch, time.perf_counter() - start
            progress.stop_reason = _stop_reason(params, stop_early, optimizer, progress)
            save_state(run_dir / STATE_FILE, run_state(
                index, seed, cfg, fingerprint, progress, model, optimizer, scheduler, stopping,
                loop.generator))
            _pause_for_tests(index, epoch)
            if progress.stop_reason is not None:
                break
            if heartbeat is not None:
                heartbeat()
    finally:  # every way out, an interrupt included: nothing is left writing or waiting
        bar.close()
        _close_writer(writer)

    model.load_state_dict(progress.best_state)
    final = {split: result[1] if result else None
             for split, result in loop.evaluate_splits(model, ["train", "val", "test"]).items()}
    run = {
        "seed": seed, "epochs": len(progress.epoch_times), "best_epoch": progress.best_epoch,
        "stop_reason": progress.stop_reason or "epochs",
        "s_per_epoch": float(np.mean(progress.epoch_times)),
        "total_time_s": time.perf_counter() - start, "final": final,
        "peak_memory_mb": _peak_memory_mb(device), "checkpoint": str(ckpt_path.name),
        "compiled": compilation.is_compiled(model), "compile_warmup_s": warm_up.seconds,
    }
    if state is not None:
        run["resumed_after_epoch"] = state["epoch"]
    log.info("run %d seed %d done: %s", index, seed, json.dumps(final))
    return run


def _stop_reason(params: dict[str, Any], stop_early: bool, optimizer: torch.optim.Optimizer,
                 progress: Progress) -> str | None:
    """Why the run stops after this epoch (``None``: it goes on)."""
    if stop_early:
        return f"early_stop ({params['early_stop']})"
    if optimizer.param_groups[0]["lr"] < params["min_lr"]:
        return "min_lr"
    if progress.elapsed_s > params["max_time"] * 3600:
        return "max_time"
    return None


#: Test hook (tests/test_resume.py), ``RUN:EPOCH``: after saving that epoch's state the process
#: waits up to a minute for a signal, so a test can stop it at a known point.
PAUSE_ENV = "AUTOGCN_TEST_PAUSE_AFTER"


def _pause_for_tests(index: int, epoch: int) -> None:
    if os.environ.get(PAUSE_ENV) != f"{index}:{epoch}":
        return
    deadline = time.monotonic() + 60
    while not interrupts.pending() and time.monotonic() < deadline:
        time.sleep(0.02)


def _close_writer(writer) -> None:
    """Close the tensorboard writer; events lost on a full disk are logged, not raised."""
    try:
        writer.close()
    except OSError as err:
        log.warning("tensorboard logs are incomplete: %s", err.strerror or err)


def _train_epoch(loop, model: torch.nn.Module, optimizer: torch.optim.Optimizer):
    """One training epoch; a single-node batch in BatchNorm, or an op with no deterministic
    kernel under ``--deterministic``, is a one-line error."""
    try:
        return loop.train_epoch(model, optimizer)
    except ValueError as err:
        if "Expected more than 1 value per channel" not in str(err):
            raise
        raise TrainingError("a training batch has a single node, which BatchNorm cannot "
                            "normalise in training mode: use a larger --batch_size or "
                            "--batch_norm False") from None
    except RuntimeError as err:
        if "use_deterministic_algorithms" not in str(err):
            raise
        raise TrainingError(f"--deterministic: {first_line(err)} (run without --deterministic, or "
                            "see docs/reproducing.md)") from None


@functools.lru_cache(maxsize=1)
def summary_writer_class() -> type:
    """tensorboardX's writer, else torch's own (only ``tensorboard`` installed): the same
    event files."""
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

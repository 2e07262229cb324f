"""The experiment behind every ``main_*.py`` script: the command line and config, the device, the
data, then ``runs`` seeds with the release's protocol, each in one run folder
(:mod:`train.run_folder`). Statuses, exit codes, interrupts, ``--resume``: docs/reproducing.md.
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
import random
import resource
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from data.common import graph_data_fingerprint, node_data_fingerprint
from data.files import WriteError
from data.loaders import load_graph_dataset, load_node_data
from data.node_datasets import get_split, with_edge_direction, with_row_normalised_features
from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters, optimizer_groups
from train import compilation, interrupts, run_folder
from train.checkpoint import Progress, checkpoint_bytes, rng_state, set_rng_state, state_bytes
from train.config import OPTIONS, apply_overrides, option_help, read_config
from train.errors import (
    ArgumentParser,
    ConfigError,
    Diverged,
    TrainingError,
    UsageError,
    first_line,
    run_tool,
)
from train.interrupts import as_interrupted, check, deferred
from train.loop import FullGraph, GraphBatches
from train.run_folder import Result, RunFolder, check_out_dir, open_run, run_config
from train.tasks import EarlyStopping, Task

log = logging.getLogger("autogcn")


RELEASE_SEED_GENERATOR = 121  # the release draws run seeds from np.random.seed(121)


def release_seeds(runs: int) -> list[int]:
    """The release's run seeds: 4565, 7432, 9823, 2113, 5812 for five runs."""
    rng = np.random.RandomState(RELEASE_SEED_GENERATOR)
    return [int(s) for s in rng.randint(10000, size=runs)]


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


# cuBLAS is only deterministic with a fixed workspace per stream; torch refuses cuBLAS calls
# under deterministic algorithms unless this variable is ":4096:8" or ":16:8".
CUBLAS_WORKSPACE_CONFIG = ":4096:8"


def run_state(run: _Seed) -> dict[str, Any]:
    """``state.pt``'s contents after ``run``'s last epoch (and all it draws at random)."""
    return {"run": run.index, "seed": run.seed, "config": run.exp.cfg,
            "fingerprint": run.exp.folder.data["data"].get("fingerprint"), **vars(run.progress),
            "model": run.model.state_dict(), "optimizer": run.optimizer.state_dict(),
            "scheduler": run.scheduler.state_dict() if run.scheduler is not None else None,
            "stopping": run.stopping.state_dict(), "rng": rng_state(run.loop.generator)}


@contextmanager
def deterministic_mode(enabled: bool) -> Iterator[None]:
    """``--deterministic``: torch's deterministic algorithms and settings inside the block."""
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


# ----------------------------------------------------------------------------- device
def select_device(use_gpu: bool, gpu_id: int, from_command_line: bool = False) -> torch.device:
    """``cuda:<gpu_id>`` when requested and usable, else the CPU; a missing GPU is an error from
    ``--gpu_id``, GPU 0 from a config file (the authors' ZINC config names GPU 1)."""
    if not use_gpu:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        log.warning("CUDA requested (gpu.use=true) but no GPU is available: running on CPU")
        return torch.device("cpu")
    count = torch.cuda.device_count()
    if gpu_id >= count:
        if from_command_line:
            raise UsageError(f"--gpu_id {gpu_id}: this machine has {count} visible GPU(s) "
                             f"(ids 0-{count - 1}; CUDA_VISIBLE_DEVICES may hide others)")
        log.warning("the config asks for GPU %d but %d is/are visible: using GPU 0", gpu_id,
                    count)
        gpu_id = 0
    return torch.device("cuda", gpu_id)


def check_device(device: torch.device) -> None:
    """Run one kernel on ``device``: a torch build for other GPUs fails here, in one line."""
    if device.type != "cuda":
        return
    try:
        torch.cuda.set_device(device)
        (torch.ones(2, device=device) * 2).sum().item()
    except (RuntimeError, AssertionError) as err:
        raise UsageError(f"{device} ({torch.cuda.get_device_name(device)}) cannot run this "
                         f"torch build ({torch.__version__}): {first_line(err)}") from None


# ----------------------------------------------------------------------------- command line
def build_parser(task: Task, description: str) -> argparse.ArgumentParser:
    """``--config`` plus one ``--key VALUE`` per config key, its help from the config schema."""
    parser = ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Booleans take True/False. Every option overrides the config file's value.")
    parser.add_argument("--config", help="JSON config in the authors' schema")
    parser.add_argument("--dataset", help=f"one of {', '.join(task.datasets)}")
    for key in OPTIONS:
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
    """The config (file, resumed run's or defaults) with the overrides; the keys these set."""
    if args.config is not None:  # an empty --config is an error, not the defaults
        raw, origin = read_config(args.config), os.path.expanduser(args.config)
    elif args.resume:  # a run's resolved config: every key, at its version's defaults
        path = run_config(args.resume)
        raw, origin = read_config(path), str(path)
    else:
        raw, origin = {"model": "AUTOGCN", "dataset": task.datasets[0],
                       "out_dir": f"out/{task.name}/"}, "defaults"
    overrides = {k[len("override_"):]: v for k, v in vars(args).items()
                 if k.startswith("override_") and v is not None}
    if args.dataset is not None:  # an empty --dataset is an error, not the config's dataset
        overrides["dataset"] = args.dataset
    cfg = apply_overrides(raw, overrides, origin, recorded=args.config is None and
                          bool(args.resume))
    if cfg["dataset"] not in task.datasets:
        raise ConfigError(f"unknown dataset {cfg['dataset']!r} for this script; "
                          f"expected one of {', '.join(task.datasets)}")
    return cfg, set(overrides)


def main(task: Task, argv: Sequence[str] | None = None, description: str = "") -> int:
    """Entry point of a main script; returns the process exit code."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    args = build_parser(task, description).parse_args(argv)

    def experiment(_: object) -> int:
        if args.resume is not None and not args.resume.strip():  # an unset shell variable
            raise ConfigError("--resume: empty path; give the run folder to continue")
        cfg, cli_keys = resolve_config(task, args)
        return run_experiment(task, cfg, list(sys.argv if argv is None else argv), cli_keys,
                              resume=None if args.restart else args.resume)

    return run_tool(experiment, argv, interrupted=lambda stop: (
        f"results of finished runs are kept in {stop.run_dir}" if stop.run_dir
        else "stopped before training started"))


# ----------------------------------------------------------------------------- experiment
def load_data(task: Task, cfg: dict[str, Any], write_data: bool = True):
    """The data's record, the net's input/output sizes, and a per-run factory of epoch loops."""
    data_cfg = cfg["data"]
    if task.level == "single_graph":
        ds = with_edge_direction(load_node_data(cfg["dataset"], data_cfg),
                                 data_cfg["edge_direction"])
        if data_cfg["normalize_features"]:
            ds = with_row_normalised_features(ds)
        io = NetIO(task.level, task.input_kind, ds.features.shape[1], ds.num_classes)
        loops = task.adds_self_loops(cfg["model"], cfg["net_params"])
        graph = ds.graph.add_self_loops() if loops else ds.graph

        def make_loop(run: int, seed: int, device: torch.device) -> FullGraph:
            train, val, test = get_split(ds, run, seed, mode=data_cfg["split"],
                                         ratios=data_cfg["split_ratio"])
            return FullGraph(graph, ds.features, ds.labels,
                             {"train": train, "val": val, "test": test}, task, device)

        info = {**ds.info, "fingerprint": node_data_fingerprint(graph, ds.features, ds.labels)}
        return info, io, make_loop

    ds = load_graph_dataset(cfg["dataset"], data_cfg, write_data)
    if task.adds_self_loops(cfg["model"], cfg["net_params"]):
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
    """Train every seed of ``cfg`` into a new run folder, or continue ``resume``'s."""
    device = select_device(cfg["gpu"]["use"], cfg["gpu"]["id"],
                           from_command_line="gpu_id" in cli_keys)
    summary_writer_class()  # a missing package stops the run before anything is written
    check_out_dir(cfg["out_dir"])
    data_info, io, make_loop = load_data(task, cfg)  # before CUDA starts: loaders may fork
    with deterministic_mode(cfg["params"]["deterministic"]):  # set before CUDA's first call
        check_device(device)
        params = cfg["params"]
        if "seed" in cli_keys:
            seeds = [params["seed"] + i for i in range(params["runs"])]
        else:
            seeds = release_seeds(params["runs"])
            log.info("seeds: the release's %s (params.seed = %d applies only when --seed is "
                     "given)", seeds, params["seed"])
        point = None
        if resume is not None:  # refused here, before anything is written
            # the seeds follow from the command line (--seed or not): without --seed, the run's
            point = open_run(resume, cfg, seeds if "seed" in cli_keys else None,
                             data_info["fingerprint"])
            if point.status == "complete":
                log.info("%s is complete: nothing to resume", resume)
                return 0
            seeds = point.data["seeds"]
        # From here on a signal waits for a safe point (between batches): the run folder, its
        # writers and the loader workers exist and must be closed, and the record must say why.
        with deferred():
            if point is None:
                folder = RunFolder.create(cfg["out_dir"], {
                    "model": cfg["model"], "dataset": cfg["dataset"], "task": task.name,
                    "num_params": None, "seeds": seeds, "primary_metric": task.primary,
                    "higher_is_better": task.higher_is_better, "device": str(device),
                    "versions": _versions(), "command": command, "data": data_info,
                    "started": time.strftime("%Y-%m-%d %H:%M:%S"), "config": cfg})
            else:
                folder = RunFolder.reopen(point, command, str(device), _versions())
            Experiment(task, cfg, io, make_loop, device, seeds, folder).run(point)
    return 0


@dataclass
class Experiment:
    """One experiment: what it trains, where, with which seeds, into which run folder."""

    task: Task
    cfg: dict[str, Any]
    io: NetIO
    make_loop: Callable[[int, int, torch.device], Any]
    device: torch.device
    seeds: list[int]
    folder: RunFolder

    def run(self, point: Result | None = None) -> None:
        """Train every seed ``point`` has not finished; the record says how it ended."""
        with _RunLog(self.folder.path / "train.log"):
            log.info("%s on %s: device %s, seeds %s -> %s", self.cfg["model"],
                     self.cfg["dataset"], self.device, self.seeds, self.folder.path)
            try:
                self._train_seeds(point)
            except KeyboardInterrupt as err:
                stop = as_interrupted(err)
                stop.run_dir = self.folder.path
                raise stop from None
            _log_summary(self.folder.data, self.folder.path)  # a signal now: exit 0

    def _train_seeds(self, point: Result | None) -> None:
        done = point.finished_runs if point is not None else 0
        try:
            for i, seed in enumerate(self.seeds[done:], start=done):
                check()  # between runs: a signal during the last one's final evaluation
                loop = self.make_loop(i, seed, self.device)
                try:
                    state = point.saved_state if point is not None and i == done else None
                    run = self.train_seed(i, seed, loop, state)
                finally:
                    loop.close()
                self.folder.add_run(run)
        except BaseException as err:
            if isinstance(err, KeyboardInterrupt):
                status, error = "interrupted", as_interrupted(err).word
            else:
                status = "diverged" if isinstance(err, Diverged) else "failed"
                error = str(err) if isinstance(err, (TrainingError, WriteError)) else repr(err)
            try:
                self.folder.finish(status, error=error)
            except OSError:
                pass  # a full disk: results.json keeps its last whole version
            raise
        self.folder.finish("complete")

    def train_seed(self, index: int, seed: int, loop, state: dict[str, Any] | None = None
                   ) -> dict[str, Any]:
        """Train (or continue from ``state``) one seed; its record, with the best weights."""
        run = _Seed(self, index, seed, loop, state)
        epochs = self.cfg["params"]["epochs"]
        bar = tqdm(range(run.progress.epoch + 1, epochs if run.progress.stop_reason is None
                         else 0), desc=f"run {index} seed {seed}", disable=None,
                   dynamic_ncols=True, initial=run.progress.epoch + 1, total=epochs)
        try:
            for epoch in bar:
                check()
                if run.epoch(epoch, bar):
                    break
        finally:  # every way out, an interrupt included: nothing is left writing or waiting
            bar.close()
            try:
                run.writer.close()
            except OSError as err:  # events lost on a full disk: logged, not raised
                log.warning("tensorboard logs are incomplete: %s", err.strerror or err)
        return run.result(state)


class _Seed:
    """One seed in training: its modules, how far it has got, and its epoch."""

    def __init__(self, exp: Experiment, index: int, seed: int, loop: Any,
                 state: dict[str, Any] | None) -> None:
        self.exp, self.index, self.seed, self.loop = exp, index, seed, loop
        cfg, params = exp.cfg, exp.cfg["params"]
        set_seed(seed)
        self.model = build_net(cfg["model"], exp.io, cfg["net_params"]).to(exp.device)
        if exp.folder.data.get("num_params") is None:
            exp.folder.data["num_params"] = count_parameters(self.model)
            log.info("%d parameters", exp.folder.data["num_params"])
        compiled, why = compilation.prepare(self.model, cfg["model"], params["compile"],
                                            exp.device, params["epochs"] * loop.steps_per_epoch,
                                            params["deterministic"])
        if index == 0 or state is not None:
            log.info("compile: %s", why)
        self.warm_up = compilation.WarmUp(compiled and (index == 0 or state is not None))
        self.optimizer = torch.optim.Adam(
            optimizer_groups(self.model, params, cfg["net_params"]), lr=params["init_lr"],
            weight_decay=params["weight_decay"])
        schedule = params["scheduler"] or ("none" if exp.task.level == "single_graph"
                                           else "plateau")
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            self.optimizer, mode="min", factor=params["lr_reduce_factor"],
            patience=params["lr_schedule_patience"]) if schedule == "plateau" else None
        self.stopping = EarlyStopping(params["early_stop"], params["early_stop_patience"],
                                      exp.task.is_better)
        if exp.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(exp.device)
        self.progress, resumed = Progress(), {}
        if state is not None:
            self._restore(state)
            if self.progress.best_state is not None:  # the file may hold a later epoch's
                run_folder.write_atomic(self.checkpoint, self.best_bytes(self.progress.best_state))
            # The stopped process's last scalars may not have reached its event file (the
            # writer is asynchronous): a new file replaces them all (tensorboard drops what
            # earlier files logged from the purge step on) with those the state kept.
            resumed = {"purge_step": 0, "filename_suffix": f".resumed{self.progress.epoch + 1}"}
            log.info("run %d seed %d: resumed after epoch %d", index, seed, self.progress.epoch)
        self.writer = summary_writer_class()(
            str(exp.folder.path / "logs" / f"run{index}_seed{seed}"), **resumed)
        for epoch, scalars in enumerate(self.progress.scalars):
            for tag, value in scalars.items():
                self.writer.add_scalar(tag, value, epoch)
        self.start = time.perf_counter() - self.progress.elapsed_s

    def _restore(self, state: dict[str, Any]) -> None:
        """Put :func:`run_state`'s ``state`` back: the loop's workers first, random states last."""
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        self.stopping.load_state_dict(state["stopping"])
        self.loop.start_workers()
        set_rng_state(state["rng"], self.loop.generator)
        # states saved before runs recorded their devices lack "devices"
        self.progress = Progress(**{f.name: state[f.name] for f in fields(Progress)
                                    if f.name in state or f.name != "devices"})
        if self.progress.best_state is not None:
            self.progress.best_state = {k: v.to(self.exp.device)
                                        for k, v in self.progress.best_state.items()}

    @property
    def checkpoint(self) -> Path:
        return self.exp.folder.checkpoint_path(self.index, self.seed)

    def best_bytes(self, weights: dict[str, torch.Tensor]) -> bytes:
        return checkpoint_bytes(weights, self.exp.cfg, self.exp.io, self.seed, self.index,
                                self.progress.best_epoch)

    def epoch(self, epoch: int, bar) -> bool:
        """Train and evaluate ``epoch``, keep what it leaves; whether the seed stops here."""
        task, params, progress = self.exp.task, self.exp.cfg["params"], self.progress
        progress.on_device(str(self.exp.device), epoch)
        t0 = time.perf_counter()
        train_loss, train_metrics = _train_epoch(self.loop, self.model, self.optimizer)
        evaluated = self.loop.evaluate_splits(self.model, ["val", "test"])
        val, test = evaluated["val"], evaluated["test"]
        progress.epoch_times.append(time.perf_counter() - t0)
        self.warm_up.epoch_done(progress.epoch_times[-1])
        for split, loss in (("training", train_loss), ("validation", val and val[0])):
            if loss is not None and not math.isfinite(loss):
                raise Diverged(f"run {self.index} (seed {self.seed}) diverged: the {split} loss "
                               f"became {loss} at epoch {epoch}; try a lower --init_lr (the "
                               f"best checkpoint so far is kept: {self.checkpoint})")
        lr = self.optimizer.param_groups[0]["lr"]
        if self.scheduler is not None:
            self.scheduler.step(val[0] if val else train_loss)
        results = {split: result for split, result in (
            ("train", (train_loss, train_metrics)), ("val", val), ("test", test)) if result}
        scalars = {"learning_rate": lr}
        for split, (loss, metrics) in results.items():
            scalars[f"{split}/_loss"] = loss
            scalars.update({f"{split}/_{k}": v for k, v in metrics.items()})
        for tag, value in scalars.items():
            self.writer.add_scalar(tag, value, epoch)
        progress.scalars.append(scalars)
        keep, stop_early = self.stopping.update(val and val[0], val and val[1][task.primary])
        best = None
        if keep:
            progress.best_epoch = epoch
            progress.best_state = copy.deepcopy(self.model.state_dict())
            best = (self.checkpoint, self.best_bytes(self.model.state_dict()))
        desc = {"loss": f"{train_loss:.4f}", "lr": f"{lr:.1e}"}
        if val:
            desc[f"val_{task.primary}"] = f"{val[1][task.primary]:.4f}"
        bar.set_postfix(desc)
        if epoch % params["print_epoch_interval"] == 0:
            _log_epoch(epoch, results, lr, progress.epoch_times[-1])
        progress.epoch, progress.elapsed_s = epoch, time.perf_counter() - self.start
        progress.stop_reason = _stop_reason(params, stop_early, self.optimizer, progress)
        self.exp.folder.end_epoch(state_bytes(run_state(self)), best,
                                  last=progress.stop_reason is not None)
        _pause_for_tests(self.index, epoch)
        return progress.stop_reason is not None

    def result(self, state: dict[str, Any] | None) -> dict[str, Any]:
        """The seed's record, evaluated with its best weights."""
        self.model.load_state_dict(self.progress.best_state)
        final = {split: result[1] if result else None for split, result in
                 self.loop.evaluate_splits(self.model, ["train", "val", "test"]).items()}
        done = self.progress
        run = {"seed": self.seed, "epochs": len(done.epoch_times), "best_epoch": done.best_epoch,
               "stop_reason": done.stop_reason or "epochs",
               "s_per_epoch": float(np.mean(done.epoch_times)),
               "total_time_s": time.perf_counter() - self.start, "final": final,
               "peak_memory_mb": _peak_memory_mb(self.exp.device),
               "device": done.device_text() if done.devices else str(self.exp.device),
               "checkpoint": self.checkpoint.name, "compiled": compilation.is_compiled(self.model),
               "compile_warmup_s": self.warm_up.seconds}
        if state is not None:
            run["resumed_after_epoch"] = state["epoch"]
        log.info("run %d seed %d done: %s", self.index, self.seed, json.dumps(final))
        return run


class _RunLog(logging.FileHandler):
    """``train.log`` inside ``with``; a line a full disk refuses is dropped without a traceback
    (the next result file fails too, in one line)."""

    def __enter__(self) -> _RunLog:
        self.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        log.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        log.removeHandler(self)
        self.close()

    def handleError(self, record: logging.LogRecord) -> None:
        pass

    def close(self) -> None:  # the last lines' flush on a full disk: dropped, as above
        try:
            super().close()
        except OSError:
            pass


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


def _train_epoch(loop, model: torch.nn.Module, optimizer: torch.optim.Optimizer):
    """One training epoch; known failures of the settings are one-line errors."""
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
    """tensorboardX's writer, else torch's own where the tensorboard package is installed (the
    lent GPU machines have only that; both write the same event files). Imported on first use,
    checked before anything is written."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            raise ConfigError("tensorboard logging needs tensorboardX (pip install tensorboardX; "
                              "requirements.txt has it)") from None
    return SummaryWriter


def _log_epoch(epoch: int, results: dict[str, Any], lr: float, seconds: float) -> None:
    log.info(" | ".join([f"epoch {epoch:4d}", *(
        f"{split} loss {loss:.4f} " + " ".join(f"{k} {v:.4f}" for k, v in metrics.items())
        for split, (loss, metrics) in results.items()), f"lr {lr:.2e}", f"{seconds:.1f}s"]))


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

"""Evaluate a saved checkpoint on train/val/test, for any task (SBM, ZINC, superpixels, node).

    python evaluate_checkpoint.py out/.../checkpoints/run0_seed4565_best.pt [--data_dir DIR]

The checkpoint carries its resolved config, so the same data and net are rebuilt; data options
(--data_dir, --data_source, --max_graphs, --cache_dir) can point at another copy of the data.
Nothing is written. Exit codes as every entry point (``train/errors.py``): 0, 2 for bad input (an
unusable checkpoint, missing data; one line ``error: ...``), 1 for a failure, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from train.interrupts import startup

with startup():
    from data.loaders import SOURCE_CHOICES
    from scripts import cli
    from train.checkpoint import load_checkpoint, model_from_checkpoint
    from train.config import apply_overrides
    from train.errors import CheckpointError, one_line, run_tool
    from train.runner import check_device, load_data, select_device
    from train.tasks import Task, task_for_dataset


def evaluate_checkpoint(path: str, data_overrides: dict, use_gpu: bool = False) -> dict:
    """Metrics of the checkpoint's weights on every available split.

    The checkpoint's config is validated by the current schema (accepted aliases, such as the
    authors' ``gate: true``, become their canonical values) and the data options in
    ``data_overrides`` are checked like command-line options. Nothing is written into a data
    folder.
    """
    ckpt = load_checkpoint(path)
    overrides = {k: str(v) for k, v in data_overrides.items() if v is not None}
    cfg = apply_overrides(ckpt["config"], overrides, f"{path} (its config)", recorded=True)
    ckpt["config"] = cfg
    task = _checkpoint_task(path, ckpt)
    device = select_device(use_gpu, cfg["gpu"]["id"])
    _, io, make_loop = load_data(task, cfg, write_data=False)
    check_device(device)
    model = model_from_checkpoint(ckpt, io).to(device)
    loop = make_loop(ckpt.get("run", 0), ckpt["seed"], device)
    results = {split: None if out is None else {"loss": out[0], **out[1]}
               for split, out in loop.evaluate_splits(model, ["train", "val", "test"]).items()}
    return {"model": cfg["model"], "dataset": cfg["dataset"], "epoch": ckpt.get("epoch"),
            "seed": ckpt["seed"], "metrics": results}


def _checkpoint_task(path: str, ckpt: dict) -> Task:
    """The task of a checkpoint whose config passed validation (which names an unknown model); a
    dataset or seed that this project cannot rebuild is a :class:`CheckpointError` (exit 2), not
    a failure later."""
    if not isinstance(ckpt.get("seed"), int) or isinstance(ckpt.get("seed"), bool):
        raise CheckpointError(f"{path}: no run seed recorded (the data split and loader order "
                              "depend on it); not a checkpoint written by the main scripts")
    try:
        return task_for_dataset(ckpt["config"]["dataset"])
    except ValueError as err:
        raise CheckpointError(f"{path}: its config: {one_line(err)}") from None


def _main(argv: Sequence[str] | None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    parser = cli.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="a checkpoints/run<i>_seed<s>_best.pt of a run")
    parser.add_argument("--data_dir", type=cli.data_folder, metavar="DIR")
    parser.add_argument("--data_source", choices=SOURCE_CHOICES)
    parser.add_argument("--cache_dir", type=cli.data_folder, metavar="DIR")
    parser.add_argument("--max_graphs", type=cli.int_in(1, cli.MAX_GRAPHS),
                        help=f"use only the first N graphs of each split (1 to {cli.MAX_GRAPHS})")
    parser.add_argument("--use_gpu", action="store_true")
    args = parser.parse_args(argv)
    overrides = {"data_dir": args.data_dir, "data_source": args.data_source,
                 "cache_dir": args.cache_dir, "max_graphs": args.max_graphs}
    result = evaluate_checkpoint(args.checkpoint, overrides, args.use_gpu)
    print(json.dumps(result, indent=2))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 2 bad input, 1 failure, 130/143)."""
    return run_tool(_main, argv, interrupted="nothing was written")


if __name__ == "__main__":
    sys.exit(main())

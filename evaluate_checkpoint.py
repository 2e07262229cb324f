"""Evaluate a saved checkpoint on train/val/test, for any task (SBM, ZINC, superpixels, node).

    python evaluate_checkpoint.py out/.../checkpoints/run0_seed4565_best.pt [--data_dir DIR]

The checkpoint carries its resolved config, so the same data and net are rebuilt; data options
(--data_dir, --data_source, --max_graphs, --cache_dir) can point at another copy of the data.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from data.common import DataError
from train.checkpoint import CheckpointError, load_checkpoint, model_from_checkpoint
from train.cli import ArgumentParser
from train.config import ConfigError, apply_overrides, validate
from train.device import DeviceError, check_device, select_device
from train.runner import load_data
from train.tasks import task_for_dataset


def evaluate_checkpoint(path: str, data_overrides: dict, use_gpu: bool = False) -> dict:
    """Metrics of the checkpoint's weights on every available split.

    The checkpoint's config is validated by today's schema (older option names become their
    current ones) and the data options in ``data_overrides`` are checked like command-line
    options. Nothing is written into a data folder.
    """
    ckpt = load_checkpoint(path)
    overrides = {k: str(v) for k, v in data_overrides.items() if v is not None}
    cfg = apply_overrides(validate(ckpt["config"], origin=f"{path} (its config)"), overrides)
    ckpt["config"] = cfg
    task = task_for_dataset(cfg["dataset"])
    device = select_device(use_gpu, cfg["gpu"]["id"])
    _, io, make_loop = load_data(task, cfg, write_data=False)
    check_device(device)
    model = model_from_checkpoint(ckpt, io).to(device)
    loop = make_loop(ckpt.get("run", 0), ckpt["seed"], device)
    results = {}
    for split in ("train", "val", "test"):
        out = loop.evaluate(model, split)
        results[split] = None if out is None else {"loss": out[0], **out[1]}
    return {"model": cfg["model"], "dataset": cfg["dataset"], "epoch": ckpt["epoch"],
            "seed": ckpt["seed"], "metrics": results}


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    parser = ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint")
    parser.add_argument("--data_dir")
    parser.add_argument("--data_source")
    parser.add_argument("--cache_dir")
    parser.add_argument("--max_graphs")
    parser.add_argument("--use_gpu", action="store_true")
    args = parser.parse_args(argv)
    overrides = {"data_dir": args.data_dir, "data_source": args.data_source,
                 "cache_dir": args.cache_dir, "max_graphs": args.max_graphs}
    try:
        result = evaluate_checkpoint(args.checkpoint, overrides, args.use_gpu)
    except (CheckpointError, ConfigError, DataError, DeviceError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

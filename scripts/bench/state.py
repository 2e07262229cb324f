"""What saving a run's state after every epoch (``--resume``) costs against the epoch, for
AutoGCN trained by ``train.runner`` at its ZINC and SBM_PATTERN configs (docs/performance.md)."""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from scripts import cli
from scripts.bench.timing import new_parser
from scripts.sweep import cell_defaults
from train import run_folder, runner
from train.checkpoint import STATE_FILE
from train.tasks import task_for_dataset


def measure(name: str, data_dir: str, graphs: int, epochs: int, device: str, tmp: Path) -> str:
    """Train ``name`` once, timing each state's capture, encoding and atomic write (from
    ``run_state`` to the state file written, less the best weights' file written between)."""
    task, config = task_for_dataset(name), cell_defaults("AUTOGCN", name)["config"]
    timings: list[float] = []
    sizes: list[int] = []
    capture, write = runner.run_state, run_folder.write_atomic

    def timed_capture(*args, **kwargs):
        timings.append(-time.perf_counter())
        return capture(*args, **kwargs)

    def timed_write(path, content):
        t0 = time.perf_counter()
        write(path, content)
        if Path(path).name == STATE_FILE:
            timings[-1] += time.perf_counter()
            sizes.append(len(content))
        elif timings and timings[-1] < 0:  # a best checkpoint, within the span: not the state's
            timings[-1] -= time.perf_counter() - t0

    runner.run_state, run_folder.write_atomic = timed_capture, timed_write
    try:
        gpu = ["--use_gpu", "False"] if device == "cpu" else ["--gpu_id", device.partition(":")[2]
                                                              or "0"]
        code = runner.main(task, ["--config", config, "--data_dir", data_dir, "--max_graphs",
                                  str(graphs), "--epochs", str(epochs), "--runs", "1",
                                  "--seed", "1", "--compile", "off", "--out_dir",
                                  str(tmp / name), *gpu])
    finally:
        runner.run_state, run_folder.write_atomic = capture, write
    if code != 0:
        raise SystemExit(code)
    (res_file,) = (tmp / name).glob("*/results.json")
    res = json.loads(res_file.read_text())
    assert not list((tmp / name).glob(f"*/{STATE_FILE}"))  # removed once the run completed
    epoch = res["runs"][0]["s_per_epoch"]
    saved = sum(timings) / len(timings)
    return (f"{name}: {graphs} training graphs, epoch {epoch:.2f} s, state "
            f"{sizes[-1] / 2**20:.1f} MiB saved in {saved * 1000:.1f} ms = "
            f"{100 * saved / epoch:.2f} % of the epoch")


def main(argv: Sequence[str] | None = None) -> int:
    parser = new_parser("state", __doc__, "device")
    parser.add_argument("--zinc_dir", required=True, type=cli.data_folder, metavar="DIR",
                        help="the ZINC pickles")
    parser.add_argument("--max_graphs", type=cli.int_in(1, cli.MAX_GRAPHS), default=1000,
                        help="ZINC graphs per split")
    parser.add_argument("--sbm_graphs", type=cli.int_in(1, cli.MAX_GRAPHS), default=100,
                        help="SBM_PATTERN graphs per split (generated)")
    parser.add_argument("--epochs", type=cli.int_in(1, cli.MAX_EPOCHS), default=3)
    args = parser.parse_args(argv)
    logging.getLogger("autogcn").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="state_cost_") as name:
        tmp = Path(name)
        for name, data, graphs in (("ZINC", args.zinc_dir, args.max_graphs),
                                   ("SBM_PATTERN", tmp / "sbm", args.sbm_graphs)):
            print(measure(name, str(data), graphs, args.epochs, args.device, tmp), flush=True)
    return 0

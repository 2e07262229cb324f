"""The tools hold the main scripts' conventions (scripts/cli.py): bad input is one line naming the
option, exit code 2, found before any work and before anything is written; Ctrl-C and SIGTERM
are one line and 130 / 143; a command merged into another says what replaces it.

Tools are called in-process through their ``main(argv)``, which returns the exit code; the few
subprocesses run with a timeout that kills the child's process group.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path

import pytest

import evaluate_checkpoint
from data import sbm, superpixels
from scripts import (
    cli,
    diagnose,
    gpu_check,
)
from scripts.bench.__main__ import main as bench
from scripts.report.__main__ import main as report
from tests.data_writers import write_mnist, write_squirrel, write_tiny_zinc
from tests.helpers import run_in_own_group
from train import errors

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {
    "diagnose": diagnose.main,
    "depth": lambda argv: report(["depth", *argv]),
    "bench autogcn": lambda argv: bench(["autogcn", *argv]),
    "bench models": lambda argv: bench(["models", *argv]),
    "gpu_check": gpu_check.main, "evaluate_checkpoint": evaluate_checkpoint.main,
}


@pytest.fixture(scope="module")
def fx(tmp_path_factory) -> Path:
    """Tiny data in the real formats, an AutoGCN checkpoint, and a plain file."""
    from nets.gnn_net import NetIO
    from nets.registry import build_net
    from train.checkpoint import checkpoint_bytes
    from train.config import load_config

    root = tmp_path_factory.mktemp("tools")
    write_squirrel(root / "squirrel")
    write_tiny_zinc(root / "zinc", {"train": 6, "val": 4, "test": 4})
    write_mnist(root / "mnist", 6, 4)
    cfg = load_config(ROOT / "configs/node_classification_AUTOGCN_SQUIRREL.json")
    cfg["data"]["data_dir"] = str(root / "squirrel")
    io = NetIO("single_graph", "linear", 12, 5)
    net = build_net(cfg["model"], io, cfg["net_params"])
    (root / "ck.pt").write_bytes(checkpoint_bytes(net.state_dict(), cfg, io, seed=1, run=0,
                                                  epoch=0))
    (root / "results").mkdir()
    (root / "afile").write_text("not a folder")
    (root / "loop").symlink_to("loop")  # a symbolic link loop: "exists" for no check
    return root


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


LONG = "n" * 300
DIAG = ["--dataset", "SQUIRREL", "--data_dir", "{fx}/squirrel", "--out", "{out}"]
PLOT = ["--checkpoint", "{fx}/ck.pt", "--out", "{out}/f.png"]  # diagnose's filter figure
DEPTH = ["--results", "{fx}/results", "--out", "{out}/d.png"]
BENCH = ["--datasets", "ZINC", "--zinc_dir", "{fx}/zinc", "--graphs", "4", "--epochs", "1"]
BASE = ["--datasets", "ZINC", "--zinc_dir", "{fx}/zinc", "--graphs", "4", "--models", "GCN"]
EVAL = ["{fx}/ck.pt", "--data_dir", "{fx}/squirrel"]
# diagnose on the batched-graph datasets: it generates SBM files and builds superpixel caches
SBM = ["--dataset", "SBM_CLUSTER", "--data_dir", "{out}/sbm", "--out", "{out}/diag"]
SUPER = ["--dataset", "MNIST", "--data_dir", "{fx}/mnist", "--cache_dir", "{out}/cache",
         "--out", "{out}/diag"]
ZINC = ["--dataset", "ZINC", "--data_dir", "{fx}/zinc", "--out", "{out}/diag"]

# (tool, base arguments, changed or added arguments, what the one line must name)
BAD = [
    ("diagnose", DIAG, ["--max_graphs", "0"], "--max_graphs"),
    ("diagnose", DIAG, ["--workers", "-1"], "--workers"),
    ("diagnose", DIAG, ["--seed", "-1"], "--seed"),
    ("diagnose", DIAG, ["--seed", str(2**32)], "--seed"),
    ("diagnose", DIAG, ["--spectral_graphs", "0"], "--spectral_graphs"),
    ("diagnose", DIAG, ["--exact_max_nodes", "1000000"], "--exact_max_nodes"),
    ("diagnose", DIAG, ["--cheb_order", "100000000"], "--cheb_order"),
    ("diagnose", DIAG, ["--cheb_order", "0"], "--cheb_order"),
    ("diagnose", DIAG, ["--split_ratio", "0.5,0.5"], "--split_ratio"),
    ("diagnose", DIAG, ["--split_ratio", "abc"], "--split_ratio"),
    ("diagnose", DIAG, ["--split_ratio", "0/50/50"], "--split_ratio"),
    ("diagnose", DIAG, ["--out", "{fx}/afile"], "--out"),
    ("diagnose", DIAG, ["--out", ""], "--out"),
    ("diagnose", DIAG, ["--out", "{out}/" + LONG], "--out"),
    ("diagnose", DIAG, ["--sbm_variant", "bogus"], "--sbm_variant"),
    ("diagnose", DIAG, ["--data_source", "bogus"], "--data_source"),
    ("diagnose", DIAG, ["--dataset", "NOPE"], "NOPE"),
    ("diagnose", DIAG, ["--data_dir", "{out}/missing"], "squirrel"),
    ("diagnose", DIAG, ["--checkpoint", "{out}/missing.pt"], "missing.pt"),
    ("diagnose", DIAG, ["--checkpoint", "{fx}/ck.pt", "--sizes_only"], "--sizes_only"),
    ("diagnose", PLOT, ["--points", "-1"], "--points"),
    ("diagnose", PLOT, ["--points", "0"], "--points"),
    ("diagnose", PLOT, ["--points", "1"], "--points"),
    ("diagnose", PLOT, ["--points", "100000000"], "--points"),
    ("diagnose", PLOT, ["--points", "ten"], "--points"),
    ("diagnose", PLOT, ["--out", "{fx}"], "--out"),
    ("diagnose", PLOT, ["--out", ""], "--out"),
    ("diagnose", PLOT, ["--out", "{fx}/afile/f.png"], "--out"),
    ("diagnose", PLOT, ["--out", "{out}/f.txt"], "--out"),
    ("diagnose", PLOT, ["--out", "{out}/" + LONG + ".png"], "--out"),
    ("diagnose", ["--checkpoint", "{out}/missing.pt"], [], "missing.pt"),
    ("diagnose", ["--out", "{out}/f.png"], [], "give --dataset NAME"),
    ("diagnose", PLOT, ["--sizes_only"], "--sizes_only: for the dataset report"),
    ("diagnose", PLOT, ["--max_graphs", "5"], "--max_graphs: for the dataset report"),
    ("diagnose", DIAG, ["--checkpoint", "{fx}/ck.pt", "{fx}/ck.pt"], "takes one checkpoint"),
    ("depth", DEPTH, ["--runs", "0"], "--runs"),
    ("depth", DEPTH, ["--runs", "-1"], "--runs"),
    ("depth", DEPTH, ["--out", "{fx}"], "--out"),
    ("depth", DEPTH, ["--out", ""], "--out"),
    ("depth", DEPTH, ["--results", "{out}/missing"], "--results"),
    ("depth", DEPTH, ["--results", "{fx}/afile"], "--results"),
    ("depth", DEPTH, ["--results", ""], "--results"),  # would read the project root
    ("bench autogcn", BENCH, ["--graphs", "0"], "--graphs"),
    ("bench autogcn", BENCH, ["--graphs", "100000000"], "--graphs"),
    ("bench autogcn", BENCH, ["--epochs", "0"], "--epochs"),
    ("bench autogcn", BENCH, ["--batch_size", "0"], "--batch_size"),
    ("bench autogcn", BENCH, ["--device", "tpu"], "--device"),
    ("bench autogcn", BENCH, ["--device", "cuda:99"], "--device"),
    ("bench autogcn", BENCH, ["--threads", "0"], "--threads"),
    ("bench autogcn", BENCH, ["--profile_rows", "0"], "--profile_rows"),
    ("bench autogcn", BENCH, ["--datasets", "FOO"], "--datasets"),
    ("bench autogcn", BENCH, ["--seed", "-1"], "--seed"),
    ("bench autogcn", BENCH, ["--zinc_dir", "{out}/missing"], "missing"),
    ("bench autogcn", BENCH, ["--compile", "auto"], "--compile"),
    ("bench models", BASE, ["--epochs", "0"], "--epochs"),
    ("bench models", BASE, ["--graphs", "-5"], "--graphs"),
    ("bench models", BASE, ["--device", "tpu"], "--device"),
    ("bench models", BASE, ["--models", "FOO"], "--models"),
    ("bench models", BASE, ["--zinc_dir", "{out}/missing"], "missing"),
    ("bench models", BASE, ["--compile", "yes"], "--compile"),
    ("gpu_check", [], ["--quick", "--frobnicate"], "--frobnicate"),
    ("evaluate_checkpoint", EVAL, ["--max_graphs", "0"], "--max_graphs"),
    ("evaluate_checkpoint", EVAL, ["--max_graphs", "abc"], "--max_graphs"),
    ("evaluate_checkpoint", EVAL, ["--data_source", "bogus"], "--data_source"),
    ("evaluate_checkpoint", EVAL, ["--data_dir", "{out}/missing"], "missing"),
    ("evaluate_checkpoint", ["{out}/missing.pt"], [], "missing.pt"),
    ("diagnose", SBM, ["--data_dir", ""], "--data_dir"),
    ("diagnose", SBM, ["--data_dir", "{fx}/afile"], "--data_dir"),
    ("diagnose", SBM, ["--data_dir", "{out}/" + LONG], "--data_dir"),
    ("diagnose", SBM, ["--sbm_variant", "q20-size20"], "--sbm_variant"),  # a PATTERN variant
    ("diagnose", SBM, ["--sbm_variant", "final", "--data_source", "dgl"], "--sbm_variant"),
    # the main scripts' rule: no variant at all for SBM_CLUSTER, named as the user typed it
    ("diagnose", SBM, ["--sbm_variant", "final"],
     "--sbm_variant: 'final' is a variant of SBM_PATTERN's generator; SBM_CLUSTER has none"),
    ("diagnose", SBM, ["--sbm_variant", "q35-size5to34"], "SBM_CLUSTER has none"),
    ("diagnose", ZINC, ["--sbm_variant", "early"], "'early' is a variant of SBM_PATTERN's"),
    ("diagnose", DIAG, ["--out", "{fx}/loop"], "loop is a symbolic link loop (Too many levels"),
    ("diagnose", DIAG, ["--out", "{fx}/loop/sub"], "loop is a symbolic link loop"),
    ("diagnose", SUPER, ["--cache_dir", "{fx}/loop"], "--cache_dir"),
    ("diagnose", SUPER, ["--workers", "0"], "--workers"),
    ("diagnose", SUPER, ["--workers", "100000"], "--workers"),
    ("diagnose", SUPER, ["--cache_dir", "{fx}/afile"], "--cache_dir"),
    ("diagnose", SUPER, ["--data_dir", "{out}/missing"], "missing"),
    ("diagnose", ZINC, ["--data_dir", "{out}/missing"], "missing"),
]


def arguments(base: list[str], change: list[str], fx: Path, out: Path) -> list[str]:
    """``base`` with ``change`` applied: an option present in ``base`` gets the new value."""
    args = list(base)
    for i in range(0, len(change), 2):
        key, value = change[i], change[i + 1] if i + 1 < len(change) else None
        if key in args and value is not None:
            args[args.index(key) + 1] = value
        else:
            args += [key] if value is None else [key, value]
    return [a.replace("{fx}", str(fx)).replace("{out}", str(out)) for a in args]


@pytest.mark.parametrize("tool, base, change, needle", BAD,
                         ids=[f"{t}:{' '.join(c)[:40]}" for t, _, c, _ in BAD])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tool, base, change, needle, fx,
                                                          tmp_path, capsys):
    out = tmp_path / "out"
    before = snapshot(fx)
    code = TOOLS[tool](arguments(base, change, fx, out))
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert needle in lines[0] and "Traceback" not in captured.err
    assert not out.exists(), sorted(out.rglob("*"))
    assert snapshot(fx) == before


def test_an_earlier_plot_is_kept_when_the_input_is_bad(fx, tmp_path, capsys):
    earlier = tmp_path / "filters.png"
    earlier.write_bytes(b"an earlier figure")
    assert diagnose.main(["--checkpoint", str(fx / "ck.pt"), "--out", str(earlier),
                          "--points", "100000000"]) == 2
    assert "--points: must be >= 2 and <= 100000" in capsys.readouterr().err
    assert earlier.read_bytes() == b"an earlier figure"


def _edited_checkpoint(src: Path, dst: Path, change) -> None:
    """``src`` with ``change(dict)`` applied, saved at ``dst``."""
    import torch

    ckpt = torch.load(src, weights_only=True)
    change(ckpt)
    torch.save(ckpt, dst)


# (name, how the checkpoint is made from the fixture's, what the one line must name)
BAD_CHECKPOINTS = [
    ("foreign pickle", lambda src, dst: dst.write_bytes(__import__("pickle").dumps({"a": 1})),
     "not a readable checkpoint"),
    ("unknown model", lambda src, dst: _edited_checkpoint(
        src, dst, lambda c: c["config"].update(model="NOPE")), "NOPE"),
    ("unknown dataset", lambda src, dst: _edited_checkpoint(
        src, dst, lambda c: c["config"].update(dataset="FOO")), "FOO"),
    ("no seed", lambda src, dst: _edited_checkpoint(src, dst, lambda c: c.pop("seed")), "seed"),
    ("sizes missing", lambda src, dst: _edited_checkpoint(
        src, dst, lambda c: c.update(io={"x": 1})), "sizes"),
    ("config not a dict", lambda src, dst: _edited_checkpoint(
        src, dst, lambda c: c.update(config=None)), "config"),
]


@pytest.mark.parametrize("tool", ["evaluate_checkpoint", "diagnose"])
@pytest.mark.parametrize("name, make, needle", BAD_CHECKPOINTS,
                         ids=[b[0] for b in BAD_CHECKPOINTS])
def test_unusable_checkpoints_are_one_line_exit_2(tool, name, make, needle, fx, tmp_path,
                                                   capsys):
    if tool == "diagnose" and name in ("unknown dataset", "no seed"):
        pytest.skip("drawing the filters needs neither the dataset nor the seed")
    bad = tmp_path / "bad.pt"
    make(fx / "ck.pt", bad)
    before = snapshot(fx)
    args = [str(bad), "--data_dir", str(fx / "squirrel")] if tool == "evaluate_checkpoint" \
        else ["--checkpoint", str(bad), "--out", str(tmp_path / "out" / "f.png")]
    code = TOOLS[tool](args)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1 and lines[0].startswith("error: "), lines  # no torch warning either
    assert needle in lines[0] and "Traceback" not in captured.err
    assert not (tmp_path / "out").exists() and snapshot(fx) == before


def test_a_plot_replaces_an_earlier_one(fx, tmp_path, capsys):
    """An existing image at --out (the default of a second run) is replaced, not refused."""
    pytest.importorskip("matplotlib")
    png = tmp_path / "f.png"
    png.write_bytes(b"an earlier figure")
    assert cli.output_problem(png, "file", (".png",)) is None
    assert diagnose.main(["--checkpoint", str(fx / "ck.pt"), "--out", str(png), "--points",
                          "2"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()


@pytest.mark.parametrize("tool, bound", [
    ("diagnose", "--points"), ("diagnose", "--cheb_order"), ("bench autogcn", "--graphs"),
    ("diagnose", "--workers"),
])
def test_help_states_the_bounds(tool, bound, capsys):
    assert TOOLS[tool](["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert re.search(re.escape(bound) + r" \w+ [^-]*\(?\d+ to \d+", text), text


def test_diagnose_takes_the_split_ratio_as_the_main_scripts_do(fx, tmp_path):
    import json

    for ratio in ("60/20/20", "0.6,0.2,0.2"):
        out = tmp_path / ratio.replace("/", "_")
        assert diagnose.main(arguments(DIAG, ["--split_ratio", ratio], fx, out)) == 0
        report = json.loads((out / "SQUIRREL_diagnostics.json").read_text())
        assert report["size"]["random_split"]["ratios"] == pytest.approx([0.6, 0.2, 0.2])


def test_the_filter_figure_within_the_bounds(fx, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sub" / "f.png"
    assert diagnose.main(["--checkpoint", str(fx / "ck.pt"), "--out", str(png), "--points",
                          "2"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


# ----------------------------------------------------------------------------- the checkers
@pytest.mark.parametrize("checker, text, message", [
    (cli.int_in(2, 100000), "-1", "must be >= 2 and <= 100000, got -1"),
    (cli.int_in(1), "0", "must be >= 1, got 0"),
    (cli.int_in(1), "1.5", "expected an integer, got '1.5'"),
    (cli.float_in(0, 1, (False, True)), "0", "must be > 0 and <= 1, got 0"),
    (cli.float_in(0), "nan", "must be >= 0, got nan"),
    (cli.device_name, "tpu", "must be cpu, cuda or cuda:N, got 'tpu'"),
    (cli.device_name, "cpu:0", "must be cpu, cuda or cuda:N"),
    (cli.split_ratio, "1,0,0,0", "three non-negative fractions summing to 1"),
    (cli.split_ratio, "-10/60/50", "three non-negative fractions summing to 1"),
    (cli.path_type("folder"), "", "must not be empty"),
    (cli.path_type("file"), "   ", "must not be empty"),
])
def test_value_checkers(checker, text, message):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="^" + re.escape(message)):
        checker(text)


def test_split_ratio_is_parsed_as_the_config_parses_it():
    from train.config import validate

    cfg = validate({"model": "GCN", "data": {"split_ratio": "60/20/20"}})
    assert cfg["data"]["split_ratio"] == cli.split_ratio("60/20/20") == pytest.approx(
        [0.6, 0.2, 0.2])


def test_output_checks(tmp_path):
    (tmp_path / "file").write_text("x")
    assert "is a folder" in cli.output_problem(tmp_path, "file")
    assert "is a file, not a folder" in cli.output_problem(tmp_path / "file", "folder")
    assert "is a file, not a folder" in cli.output_problem(tmp_path / "file" / "x.png", "file")
    assert "longer than" in cli.output_problem(tmp_path / ("y" * 300), "folder")
    assert "must end in .png" in cli.output_problem(tmp_path / "x.txt", "file", (".png",))
    assert cli.output_problem(tmp_path / "new" / "deeper", "folder") is None
    assert cli.output_problem(tmp_path / "new" / "x.png", "file", (".png",)) is None
    assert cli.check_output("~/x.png", "file").parts[0] != "~"
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert "not writable" in cli.output_problem(locked / "sub", "folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"] + (
        ["locked"] if os.geteuid() != 0 else [])  # nothing was created


# ----------------------------------------------------------------------------- exit codes
def _raising(exc: BaseException):
    def main(argv):
        raise exc

    return main


@pytest.mark.parametrize("exc, code, start", [
    (KeyboardInterrupt(), 130, "interrupted"),
    (OSError(28, "No space left on device", "out/run/file.json"), 1,
     f"error: no space left on device writing in {Path('out/run').resolve()}"),
    (RuntimeError("boom\nsecond line"), 1, "error: RuntimeError: boom second line"),
    (cli.UsageError("--x: bad"), 2, "error: --x: bad"),
    (errors.ConfigError("net_params.K: bad"), 2, "error: net_params.K: bad"),
    (errors.TrainingError("use a larger --batch_size"), 2, "error: use a larger --batch_size"),
    (errors.Diverged("the loss became nan"), 1, "error: the loss became nan"),
])
def test_run_tool_maps_exceptions_to_exit_codes(exc, code, start, capsys, monkeypatch):
    monkeypatch.delenv("AUTOGCN_TRACEBACK", raising=False)
    assert errors.run_tool(_raising(exc), []) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(start), err


@pytest.mark.parametrize("exc, code", [(errors.Diverged("nan"), 1), (errors.ConfigError("c"), 2),
                                       (RuntimeError("boom"), 1)])
def test_the_main_scripts_use_the_same_mapping(exc, code, capsys, monkeypatch):
    """One mapping for every entry point: the main scripts' runner goes through run_tool."""
    from train import runner
    from train.tasks import ZINC

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.delenv("AUTOGCN_TRACEBACK", raising=False)
    monkeypatch.setattr(runner, "run_experiment", fail)
    assert runner.main(ZINC, ["--use_gpu", "False"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0]


def test_sigterm_in_a_tool_is_one_line_and_143(capsys):
    def main(argv):
        os.kill(os.getpid(), signal.SIGTERM)  # a real signal, as Slurm sends it
        raise AssertionError("the signal should have stopped the tool")

    previous = signal.getsignal(signal.SIGTERM)
    assert errors.run_tool(main, []) == 143
    assert capsys.readouterr().err.strip() == "terminated"
    assert signal.getsignal(signal.SIGTERM) == previous  # restored


# ----------------------------------------------------------------------------- Ctrl-C
def test_ctrl_c_in_evaluate_checkpoint(fx, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate_checkpoint, "load_data", interrupted)
    before = snapshot(fx)
    assert evaluate_checkpoint.main(arguments(EVAL, [], fx, fx)) == 130
    captured = capsys.readouterr()
    assert captured.err.strip() == "interrupted: nothing was written"
    assert "run folder" not in captured.err and captured.out == ""
    assert snapshot(fx) == before


def test_ctrl_c_in_sbm_generation_then_a_rerun_completes(tmp_path, monkeypatch, capsys):
    real = sbm.generate_sbm_sample
    calls = []

    def interrupted_on_the_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:  # the first split is written, the next is being generated
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(sbm, "generate_sbm_sample", interrupted_on_the_third)
    argv = arguments(SBM, ["--max_graphs", "2", "--spectral_graphs", "2"], tmp_path, tmp_path)
    assert diagnose.main(argv) == 130
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [f"interrupted: {cli.DATA_INTERRUPTED}"]
    assert "run folder" not in captured.err
    assert not list(tmp_path.rglob("meta*.json"))  # nothing marks the files complete
    assert not (tmp_path / "diag").exists()
    monkeypatch.setattr(sbm, "generate_sbm_sample", real)
    assert diagnose.main(argv) == 0
    assert list(tmp_path.rglob("meta*.json"))
    out = capsys.readouterr().out
    assert "split train" in out and "class_balance" in out  # the per-split statistics


@pytest.mark.parametrize("generate", ["files", "in memory"])
def test_the_generation_bar_is_closed_before_the_interrupt_is_reported(generate, tmp_path,
                                                                        monkeypatch):
    """The line saying "interrupted" or "terminated" must not land on the progress bar's line:
    the bar is closed while the interrupt passes through the generator, not whenever the
    traceback is freed."""
    bars = []

    class Bar:
        def __init__(self, *args, **kwargs):
            self.closed = False
            bars.append(self)

        def update(self, n: int = 1) -> None:
            pass

        def close(self) -> None:
            self.closed = True

    real = sbm.generate_sbm_sample
    calls = []

    def interrupted_on_the_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(sbm, "tqdm", Bar)
    monkeypatch.setattr(sbm, "generate_sbm_sample", interrupted_on_the_third)
    with pytest.raises(KeyboardInterrupt) as stop:
        if generate == "files":
            sbm.load_sbm_dataset("SBM_CLUSTER", tmp_path, max_graphs=2, progress=True)
        else:
            sbm.generate_sbm_split("SBM_CLUSTER", "train", 5, progress=True)
    assert stop.traceback  # the frames are still alive here, as when the error line is printed
    assert bars and all(bar.closed for bar in bars)


def test_ctrl_c_while_building_superpixels(fx, tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(superpixels, "slic_superpixels", interrupted)
    argv = arguments(SUPER, ["--workers", "1"], fx, tmp_path)
    assert diagnose.main(argv) == 130
    assert capsys.readouterr().err.strip() == f"interrupted: {cli.DATA_INTERRUPTED}"
    cache = tmp_path / "cache"
    assert not [p for p in cache.rglob("*") if p.is_file() and p.suffix == ".json"]


# ----------------------------------------------------------------------------- python -m only
def test_no_tool_edits_sys_path():
    """The tools run as ``python -m scripts.NAME`` from the project: none edits ``sys.path``
    (there is no bootstrap for running them as files)."""
    edits = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "scripts").rglob("*.py"))
             if re.search(r"sys\.path\s*(\.(insert|append)|\[[^]]*\]\s*=)", p.read_text())]
    assert edits == []
    assert not (ROOT / "scripts" / "_project_root.py").exists()


RETIRED = {  # the old command -> what replaces it
    "benchmark": "python -m scripts.bench autogcn",
    "benchmark_baselines": "python -m scripts.bench models",
    "benchmark_layers": "python -m scripts.bench layers",
    "state_cost": "python -m scripts.bench state",
    "plot_filters": "python -m scripts.diagnose --checkpoint",
}


@pytest.mark.parametrize("old", sorted(RETIRED))
def test_a_merged_command_says_what_replaces_it(old, tmp_path):
    proc = run_in_own_group([sys.executable, "-m", f"scripts.{old}", "--help"], 60, cwd=ROOT)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: scripts.{old} is now: {RETIRED[old]}")
    assert lines[0].endswith("(the same options)")
    assert not (ROOT / "scripts" / "gpu_check.sh").exists()  # now python -m scripts.gpu_check

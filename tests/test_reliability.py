"""Bad input and faults, by class: each gives one clear line (or the right behaviour), and
nothing an earlier run wrote changes.

Classes: values out of range or of the wrong kind, unwritable output, unusable checkpoint
files, data in the wrong shape, degenerate batches, runs left lying (SIGTERM, SIGKILL, NaN),
side effects (evaluation writing data, downloads nobody asked for).
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import evaluate_checkpoint
import train.runner as runner
from scripts import make_tables, sweep
from tests.data_writers import molecule, write_tiny_zinc, write_zinc
from train.results import refresh_status
from train.tasks import SBM, ZINC

ROOT = Path(__file__).resolve().parent.parent
SBM_CONFIG = "configs/SBMs_node_clustering_AUTOGCN_PATTERN.json"
ZINC_CONFIG = "configs/molecules_graph_regression_AUTOGCN_ZINC.json"
TINY = ["--epochs", "1", "--L", "2", "--hidden_dim", "8", "--batch_size", "4", "--use_gpu", "False"]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (to prove nothing changed)."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def main(task, args: list[str]) -> int:
    """A main script's exit code (argparse exits by SystemExit)."""
    try:
        return runner.main(task, args)
    except SystemExit as exit_:
        return int(exit_.code)


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ") and "Traceback" not in err[0]
    return err[0]


@pytest.fixture(scope="module")
def sbm_data(tmp_path_factory) -> Path:
    """A tiny generated SBM_PATTERN folder and an earlier complete run, shared by the tests."""
    root = tmp_path_factory.mktemp("sbm")
    code = runner.main(SBM, ["--config", SBM_CONFIG, "--max_graphs", "8", *TINY,
                             "--data_dir", str(root / "data"), "--out_dir", str(root / "out")])
    assert code == 0
    return root


# --------------------------------------------------------------------------- values
@pytest.mark.parametrize("args,names", [
    (["--init_lr", "-0.001"], "init_lr"),
    (["--epochs", "0"], "epochs"),
    (["--print_epoch_interval", "0"], "print_epoch_interval"),
    (["--seed", "-1"], "seed"),
    (["--lr_reduce_factor", "1"], "lr_reduce_factor"),
    (["--max_graphs", "0"], "max_graphs"),
    (["--max_graphs", "-1"], "max_graphs"),
    (["--max_graphs", "1.5"], "max_graphs"),
    (["--gpu_id", "-1"], "gpu"),
    (["--max_time", "-1"], "max_time"),
    (["--workers", "-1"], "workers"),
    (["--loader_workers", "-2"], "loader_workers"),
    (["--dropout", "1"], "dropout"),
    (["--L", "many"], "--L"),
    (["--readout", "median"], "readout"),
    (["--gate", "sometimes"], "gate"),
    (["--sbm_variant", "PATTERN_HARD"], "sbm_variant"),
    (["--data_source", "web"], "data_source"),
    (["--data_source", "raw"], "data_source"),  # a source SBM does not offer
    (["--split", "sideways"], "split"),
    (["--split_ratio", "0.5,0.6,0.1"], "split_ratio"),
    (["--batch_size", "0"], "batch_size"),
    (["--bogus", "1"], "bogus"),
    (["--model", "GCNN"], "GCNN"),
])
def test_bad_values_are_one_line_and_write_nothing(args, names, sbm_data, tmp_path, capsys):
    before = snapshot(sbm_data)
    code = main(SBM, ["--config", SBM_CONFIG, "--data_dir", str(sbm_data / "data"),
                      "--out_dir", str(tmp_path / "out"), *TINY, *args])
    assert code == 2
    assert names in one_line_error(capsys)
    assert not (tmp_path / "out").exists() and snapshot(sbm_data) == before


@pytest.mark.parametrize("content,match", [
    (None, "is a directory"),
    ("{", "not valid JSON"),
    ('{"model": "AUTOGCN", "params": {"epochs": null}}', "epochs: expected int, got null"),
    ('{"model": "AUTOGCN", "params": {"init_lr": "fast"}}', "init_lr"),
    ('[1, 2]', "top level must be a JSON object"),
    ('{"model": "AUTOGCN", "net_params": {"hiden_dim": 3}}', "hiden_dim"),
])
def test_bad_config_files(content, match, tmp_path, capsys):
    path = tmp_path / "cfg"
    if content is None:
        path.mkdir()
    else:
        path.write_text(content)
    assert runner.main(SBM, ["--config", str(path), "--out_dir", str(tmp_path / "out")]) == 2
    assert match in one_line_error(capsys)


def test_argument_errors_are_one_line(capsys):
    assert main(SBM, ["--config"]) == 2
    assert "expected one argument" in one_line_error(capsys)


# --------------------------------------------------------------------------- output
@pytest.mark.parametrize("kind", ["file", "read_only"])
def test_unwritable_out_dir(kind, sbm_data, tmp_path, capsys):
    out = tmp_path / "out"
    if kind == "file":
        out.write_text("not a folder")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        out.mkdir()
        out.chmod(0o500)
    code = runner.main(SBM, ["--config", SBM_CONFIG, "--data_dir", str(sbm_data / "data"),
                             "--out_dir", str(out / "runs"), "--max_graphs", "8", *TINY])
    assert code == 2
    assert "out_dir" in one_line_error(capsys)


# --------------------------------------------------------------------------- checkpoints
def _checkpoint(sbm_data: Path) -> Path:
    (run,) = [p for p in (sbm_data / "out").iterdir() if p.is_dir()]
    (ckpt,) = (run / "checkpoints").glob("*.pt")
    return ckpt


@pytest.mark.parametrize("damage,match", [
    ("truncated", "not a readable checkpoint"),
    ("random", "not a readable checkpoint"),
    ("empty", "not a readable checkpoint"),
    ("json", "not a readable checkpoint"),
    ("directory", "is a directory"),
    ("missing", "checkpoint not found"),
    ("state_dict", "a plain state dict"),
    ("mismatched", "do not fit its model"),
    ("bad_config", "its config"),
])
def test_unusable_checkpoints_are_one_line(damage, match, sbm_data, tmp_path, capsys):
    good = _checkpoint(sbm_data)
    path = tmp_path / "ckpt.pt"
    if damage == "truncated":
        path.write_bytes(good.read_bytes()[:300])
    elif damage == "random":
        path.write_bytes(os.urandom(2048))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "json":
        path.write_text(json.dumps({"state_dict": {}}))
    elif damage == "directory":
        path.mkdir()
    elif damage == "state_dict":
        torch.save(torch.load(good, weights_only=True)["state_dict"], path)
    elif damage in ("mismatched", "bad_config"):
        ckpt = torch.load(good, weights_only=True)
        if damage == "mismatched":
            ckpt["state_dict"] = {k: v[..., :1] if v.dim() else v
                                  for k, v in ckpt["state_dict"].items()}
        else:
            ckpt["config"]["net_params"]["opt"] = "double"
        torch.save(ckpt, path)
    before = snapshot(sbm_data)
    assert evaluate_checkpoint.main([str(path)]) == 2
    assert match in one_line_error(capsys)
    assert snapshot(sbm_data) == before


def test_evaluation_never_generates_data(sbm_data, tmp_path, capsys):
    elsewhere = tmp_path / "empty_data"
    elsewhere.mkdir()
    assert evaluate_checkpoint.main([str(_checkpoint(sbm_data)), "--data_dir",
                                     str(elsewhere)]) == 2
    assert "does not generate data" in one_line_error(capsys)
    assert list(elsewhere.iterdir()) == []
    assert evaluate_checkpoint.main([str(_checkpoint(sbm_data)), "--max_graphs", "-3"]) == 2
    assert "max_graphs" in one_line_error(capsys)


# --------------------------------------------------------------------------- data
def test_zinc_pickle_of_the_wrong_shape(tmp_path, capsys):
    data = tmp_path / "zinc"
    data.mkdir()
    (data / "train.pickle").write_bytes(pickle.dumps({"molecules": [1, 2]}))
    code = runner.main(ZINC, ["--config", ZINC_CONFIG, "--data_dir", str(data),
                              "--out_dir", str(tmp_path / "out"), *TINY])
    assert code == 2
    line = one_line_error(capsys)
    assert "train.pickle holds a dict; expected a list of molecule dicts" in line


def test_single_node_batch_with_batch_norm_says_what_to_change(tmp_path, capsys):
    gen = torch.Generator().manual_seed(0)
    data = tmp_path / "zinc"
    write_zinc(data, "train", [molecule(gen, 1)])
    write_zinc(data, "val", [molecule(gen, 4)])
    code = runner.main(ZINC, ["--config", ZINC_CONFIG, "--data_dir", str(data),
                              "--out_dir", str(tmp_path / "out"), *TINY, "--batch_size", "1"])
    assert code == 2
    assert "--batch_size or --batch_norm False" in one_line_error(capsys)


# --------------------------------------------------------------------------- runs left lying
def test_diverged_run_is_recorded_and_stopped(tmp_path, capsys, monkeypatch):
    write_tiny_zinc(tmp_path / "zinc", {"train": 8, "val": 4})
    calls = []
    real = runner._train_epoch

    def nan_after_one(loop, model, optimizer):
        calls.append(1)
        loss, metrics = real(loop, model, optimizer)
        return (float("nan") if len(calls) > 1 else loss), metrics

    monkeypatch.setattr(runner, "_train_epoch", nan_after_one)
    code = runner.main(ZINC, ["--config", ZINC_CONFIG, "--data_dir", str(tmp_path / "zinc"),
                              "--out_dir", str(tmp_path / "out"), *TINY, "--epochs", "5"])
    assert code == 1
    line = one_line_error(capsys)
    assert "diverged" in line and "at epoch 1" in line
    (run,) = (tmp_path / "out").iterdir()
    res = json.loads((run / "results.json").read_text())
    assert res["status"] == "diverged" and res["runs"] == []
    assert list((run / "checkpoints").glob("*.pt"))  # the last good weights are kept


def _main_process(tmp_path: Path, epochs: int) -> subprocess.Popen:
    write_tiny_zinc(tmp_path / "zinc", {"train": 16, "val": 4})
    return subprocess.Popen(
        [sys.executable, "main_molecules_graph_regression.py", "--config", ZINC_CONFIG,
         "--data_dir", str(tmp_path / "zinc"), "--out_dir", str(tmp_path / "out"),
         "--L", "2", "--hidden_dim", "8", "--batch_size", "4", "--epochs", str(epochs),
         "--runs", "2", "--use_gpu", "False"], cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "OMP_NUM_THREADS": "1"})


def _wait_for_status(tmp_path: Path, want: str = "running", timeout: float = 60) -> Path:
    end = time.time() + timeout
    while time.time() < end:
        files = list((tmp_path / "out").glob("*/results.json"))
        if files:
            try:
                if json.loads(files[0].read_text()).get("updated"):  # an epoch has run
                    return files[0]
            except ValueError:
                pass
        time.sleep(0.2)
    raise AssertionError("the run did not start")


@pytest.mark.parametrize("sig,status,code", [(signal.SIGTERM, "interrupted", 143),
                                             (signal.SIGKILL, "killed", -9)])
def test_terminated_and_killed_runs_are_not_left_running(sig, status, code, tmp_path):
    proc = _main_process(tmp_path, epochs=10000)
    path = _wait_for_status(tmp_path)
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == code
    if sig == signal.SIGTERM:
        assert proc.stderr.read().decode().strip().splitlines()[-1].startswith("terminated:")
    data = json.loads(path.read_text())
    if sig == signal.SIGKILL:
        assert data["status"] == "running"  # nobody could record it...
        data = refresh_status(path, data)  # ...until somebody looks: the sweep, make_tables
        assert json.loads(path.read_text())["status"] == "killed"
    assert data["status"] == status


def test_sweep_and_tables_mark_dead_running_cells(tmp_path):
    cell = sweep.Cell(id="c", row="r", column="ZINC", dataset="ZINC")
    folder = tmp_path / "table" / "c" / "run"
    folder.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    res = {"status": "running", "pid": dead.pid, "host": os.uname().nodename, "runs": []}
    (folder / "results.json").write_text(json.dumps(res))
    assert sweep.cell_state(folder.parent, 5)[0] == "killed"
    assert make_tables.cell_result(cell, folder.parent, "mae", 5).state == "killed"


def test_sigterm_to_a_sweep_reaches_its_cells(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import signal, sys, time\n"
                     "signal.signal(signal.SIGTERM, lambda *a: (print('cell got SIGTERM', "
                     "flush=True), sys.exit(143)))\n"
                     "print('started', flush=True)\ntime.sleep(60)\n")
    script = ("import sys; from pathlib import Path; from scripts import sweep\n"
              "cell = sweep.Cell(id='c0', row='r', column='c', dataset='ZINC')\n"
              f"jobs = [(cell, Path({str(tmp_path)!r}) / 'c0', 'missing')]\n"
              "signal = __import__('signal'); signal.signal(signal.SIGTERM, sweep._on_sigterm)\n"
              "try:\n"
              f"    sweep.run_cells(jobs, lambda c, d: [sys.executable, {str(probe)!r}], [None], "
              "{})\n"
              "except KeyboardInterrupt:\n    sys.exit(143)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = tmp_path / "c0" / "stdout.log"
    end = time.time() + 60
    while time.time() < end and not (log.exists() and "started" in log.read_text()):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    assert "cell got SIGTERM" in log.read_text()  # forwarded, not orphaned

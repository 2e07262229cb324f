"""Bad input and faults, by class: each gives one clear line (or the right behaviour), and
nothing an earlier run wrote changes.

Classes: values out of range or of the wrong kind, unwritable output, unusable checkpoint
files, data in the wrong shape, degenerate batches, runs left lying (SIGTERM, SIGKILL, NaN),
interrupts (a signal stops training at the next batch, whatever it arrives in), a full disk,
side effects (evaluation writing data, downloads nobody asked for). Every child process is
started in its own process group and killed with it on timeout.
"""

from __future__ import annotations

import ctypes
import errno
import fnmatch
import json
import logging
import multiprocessing
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import evaluate_checkpoint
import train.runner as runner
from scripts import sweep
from scripts.report.cells import cell_result
from tests.data_writers import molecule, write_mnist, write_tiny_zinc, write_zinc
from train import interrupts
from train.errors import ConfigError, UsageError
from train.run_folder import RunFolder, check_out_dir, refresh_status
from train.tasks import SBM, SUPERPIXELS, ZINC

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
    (["--dataset", ""], "dataset"),  # not the config's dataset
    (["--weight_decay", "-1e-9"], "--weight_decay=VALUE"),  # argparse takes it for an option
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


@pytest.mark.parametrize("make,below,names", [
    (lambda p: p.symlink_to(p.name), False, ["out is a symbolic link loop",
                                            "Too many levels of symbolic links"]),
    (lambda p: p.symlink_to(p.name), True, ["out is a symbolic link loop"]),
    (lambda p: p.symlink_to("nowhere"), False, ["out is a symbolic link to nowhere",
                                               "No such file or directory"]),
    (lambda p: p.symlink_to("nowhere"), True, ["out is a symbolic link to nowhere"]),
])
def test_out_dir_through_a_broken_link(make, below, names, sbm_data, tmp_path, capsys):
    """A link loop or a dangling link does not "exist": it must be named, not passed on to
    mkdir ("File exists")."""
    link = tmp_path / "out"
    make(link)
    out = link / "runs" if below else link
    with pytest.raises(UsageError) as err:
        check_out_dir(out)
    assert "\n" not in str(err.value) and all(n in str(err.value) for n in names)
    before = sorted(os.listdir(tmp_path))
    code = runner.main(SBM, ["--config", SBM_CONFIG, "--data_dir", str(sbm_data / "data"),
                             "--out_dir", str(out), "--max_graphs", "8", *TINY])
    assert code == 2
    line = one_line_error(capsys)
    assert "out_dir" in line and all(n in line for n in names)
    assert sorted(os.listdir(tmp_path)) == before and link.is_symlink()


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


@pytest.mark.parametrize("cache", ["new folder", "the run's cache", "an unreadable cache"])
def test_evaluation_writes_no_superpixel_cache(cache, tmp_path, monkeypatch, capsys):
    """Checkpoint evaluation writes nothing: a usable cache is read, otherwise the graphs are
    built in memory; no cache is created, filled or cleaned up."""
    import data.superpixels as sp

    monkeypatch.setattr(sp, "NUM_VAL", 2)
    data, run_cache, out = tmp_path / "mnist", tmp_path / "cache", tmp_path / "out"
    write_mnist(data, 6, 3)
    assert main(SUPERPIXELS, ["--config", "configs/superpixels_graph_classification_AUTOGCN_"
                              "MNIST.json", "--data_dir", str(data), "--cache_dir",
                              str(run_cache), "--out_dir", str(out), "--workers", "1",
                              *TINY]) == 0
    (ckpt,) = out.glob("*/checkpoints/*.pt")
    target = tmp_path / "fresh" if cache == "new folder" else run_cache
    if cache == "an unreadable cache":
        (pack,) = run_cache.glob("*_train.npz")
        pack.write_bytes(pack.read_bytes()[:100])
    capsys.readouterr()
    before = snapshot(tmp_path)
    assert evaluate_checkpoint.main([str(ckpt), "--cache_dir", str(target)]) == 0
    assert "test" in capsys.readouterr().out
    assert not (tmp_path / "fresh").exists()
    assert snapshot(tmp_path) == before


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


# --------------------------------------------------------------------------- interrupts
def _own_group_dying_with_parent() -> None:
    """In a child before it starts: its own process group (to be killed with what it starts),
    and SIGKILL when the test process dies (Linux), so a killed test run leaves nothing behind."""
    os.setsid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@pytest.fixture
def spawn(tmp_path):
    """Start a child in its own process group; any still running at the end is killed, with
    everything it started."""
    children: list[subprocess.Popen] = []

    def start(args: list[str], **kwargs) -> subprocess.Popen:
        proc = subprocess.Popen(args, cwd=ROOT, preexec_fn=_own_group_dying_with_parent,
                                env={**os.environ, "OMP_NUM_THREADS": "1"}, **kwargs)
        children.append(proc)
        return proc

    yield start
    for proc in children:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def finish(proc: subprocess.Popen, timeout: float) -> int:
    """The child's exit code; one that does not end in ``timeout`` seconds is killed with its
    process group, and the test fails."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        pytest.fail(f"the child did not end within {timeout} s of the signal (killed)")


def _main_process(spawn, tmp_path: Path, epochs: int) -> subprocess.Popen:
    write_tiny_zinc(tmp_path / "zinc", {"train": 16, "val": 4, "test": 4})
    stderr = open(tmp_path / "stderr.txt", "wb")  # a file: a pipe nobody reads would fill up
    try:
        return spawn(
            [sys.executable, "main_molecules_graph_regression.py", "--config", ZINC_CONFIG,
             "--data_dir", str(tmp_path / "zinc"), "--out_dir", str(tmp_path / "out"),
             "--L", "2", "--hidden_dim", "8", "--batch_size", "4", "--epochs", str(epochs),
             "--print_epoch_interval", "1", "--runs", "2", "--use_gpu", "False"],
            stdout=subprocess.DEVNULL, stderr=stderr)
    finally:
        stderr.close()


def _wait_for_logging(proc: subprocess.Popen, tmp_path: Path, timeout: float = 120) -> Path:
    """The run's folder once epochs have gone to tensorboard and into results.json."""
    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        for results in (tmp_path / "out").glob("*/results.json"):
            events = list(results.parent.glob("logs/*/events.out.tfevents.*"))
            try:
                updated = json.loads(results.read_text()).get("updated")
            except ValueError:
                continue
            if updated and events and events[0].stat().st_size > 0:
                return results.parent
        time.sleep(0.2)
    raise AssertionError(f"the run did not start logging (exit {proc.poll()}): "
                         f"{(tmp_path / 'stderr.txt').read_text()[-2000:]}")


@pytest.mark.parametrize("sig,status,code,word", [
    (signal.SIGTERM, "interrupted", 143, "terminated"),
    (signal.SIGINT, "interrupted", 130, "interrupted"),
    (signal.SIGKILL, "killed", -9, None),
])
def test_signal_during_tensorboard_logging_stops_within_seconds(sig, status, code, word,
                                                                tmp_path, spawn):
    proc = _main_process(spawn, tmp_path, epochs=100000)
    run = _wait_for_logging(proc, tmp_path)
    proc.send_signal(sig)
    assert finish(proc, timeout=20) == code
    path = run / "results.json"
    data = json.loads(path.read_text())
    if sig == signal.SIGKILL:
        assert data["status"] == "running"  # nobody could record it...
        data = refresh_status(path, data)  # ...until somebody looks: the sweep, the tables
        assert json.loads(path.read_text())["status"] == "killed"
    else:
        last = (tmp_path / "stderr.txt").read_text().strip().splitlines()[-1]
        assert last == f"{word}: results of finished runs are kept in {run}"
        assert data["error"] == word and data["runs"] == []
        assert not list(run.rglob("*.tmp*"))
    assert data["status"] == status


class RecordingWriter:
    """Stands in for the tensorboard writer; ``on_scalar`` runs inside every ``add_scalar``."""

    instances: list[RecordingWriter] = []
    on_scalar = staticmethod(lambda n: None)
    close_error: OSError | None = None

    def __init__(self, logdir: str) -> None:
        self.scalars, self.closed = 0, False
        RecordingWriter.instances.append(self)

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.scalars += 1
        RecordingWriter.on_scalar(self.scalars)
        assert not self.closed

    def close(self) -> None:
        self.closed = True
        if self.close_error is not None:
            raise self.close_error


@pytest.fixture
def recorded(monkeypatch):
    """Every writer and every loop close of the runs in the test; checked: all closed, and no
    run log handler or loader worker left behind."""
    monkeypatch.setattr(RecordingWriter, "instances", [])
    monkeypatch.setattr(runner, "summary_writer_class", lambda: RecordingWriter)
    closes: list[object] = []
    real_close = runner.GraphBatches.close

    def close(self):
        closes.append(self)
        real_close(self)

    monkeypatch.setattr(runner.GraphBatches, "close", close)
    yield closes
    assert RecordingWriter.instances and all(w.closed for w in RecordingWriter.instances)
    assert closes and not multiprocessing.active_children()
    assert not [h for h in runner.log.handlers if isinstance(h, logging.FileHandler)]


def _copy_of_earlier_run(sbm_data: Path, tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """An out_dir holding a copy of the earlier complete run, and its snapshot."""
    out = tmp_path / "out"
    shutil.copytree(sbm_data / "out", out)
    return out, snapshot(out)


def _new_run(out: Path, earlier: dict[str, bytes]) -> Path:
    (run,) = [p for p in out.iterdir() if p.is_dir() and not any(
        k.startswith(p.name + "/") for k in earlier)]
    return run


def _sbm(sbm_data: Path, out: Path, *args: str) -> int:
    return main(SBM, ["--config", SBM_CONFIG, "--data_dir", str(sbm_data / "data"),
                      "--out_dir", str(out), "--max_graphs", "8", *TINY, "--runs", "2",
                      "--loader_workers", "1", *args])


@pytest.mark.parametrize("sig,code,word", [(signal.SIGTERM, 143, "terminated"),
                                           (signal.SIGINT, 130, "interrupted")])
def test_signal_inside_a_tensorboard_write_waits_for_the_next_batch(
        sig, code, word, sbm_data, tmp_path, capsys, recorded, monkeypatch):
    """The signal arrives while the writer is busy; the write completes, training stops at the
    next batch, the finished run is kept and everything is closed."""
    out, earlier = _copy_of_earlier_run(sbm_data, tmp_path)
    sent = []

    def signal_once(n: int) -> None:
        if len(RecordingWriter.instances) == 2 and not sent:  # in the second run
            sent.append(n)
            os.kill(os.getpid(), sig)

    monkeypatch.setattr(RecordingWriter, "on_scalar", staticmethod(signal_once))
    handler = signal.getsignal(sig)
    assert _sbm(sbm_data, out, "--epochs", "3") == code
    assert sent and RecordingWriter.instances[1].scalars > sent[0]  # the write went on
    run = _new_run(out, earlier)
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{word}: results of finished runs are kept in {run}"]
    data = json.loads((run / "results.json").read_text())
    assert data["status"] == "interrupted" and len(data["runs"]) == 1
    assert signal.getsignal(sig) == handler  # the caller's handler is back
    assert {k: v for k, v in snapshot(out).items() if k in earlier} == earlier


@pytest.mark.parametrize("same_request_s,stops_at_once", [(60.0, False), (0.0, True)])
def test_second_signal(same_request_s, stops_at_once, sbm_data, tmp_path, capsys, recorded,
                       monkeypatch):
    """A repeat within the window is the same request (Slurm and a sweep both send one);
    a later one stops at once, without waiting for the batch to end."""
    out, _ = _copy_of_earlier_run(sbm_data, tmp_path)
    monkeypatch.setattr(interrupts, "SAME_REQUEST_S", same_request_s)
    after = []

    def twice(n: int) -> None:
        if n == 1:
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            after.append(n)

    monkeypatch.setattr(RecordingWriter, "on_scalar", staticmethod(twice))
    handler = signal.getsignal(signal.SIGTERM)
    assert _sbm(sbm_data, out, "--epochs", "3") == 143
    assert after == ([] if stops_at_once else [1])
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("terminated: ")
    assert signal.getsignal(signal.SIGTERM) == handler


def test_interrupt_while_loading_data_names_no_run_folder(sbm_data, tmp_path, capsys,
                                                          monkeypatch):
    def interrupted_load(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        raise AssertionError("the signal did not stop the loading")

    monkeypatch.setattr(runner, "load_data", interrupted_load)
    before = snapshot(sbm_data)
    assert _sbm(sbm_data, tmp_path / "out") == 130
    assert capsys.readouterr().err.strip().splitlines() == [
        "interrupted: stopped before training started"]
    assert not (tmp_path / "out").exists() and snapshot(sbm_data) == before


def test_interrupt_points_in_a_sweep_and_a_worker_process(monkeypatch):
    """check() raises only after a signal; a forked child that kept the inherited handler ends
    as the signal's default would (a pool's terminate() relies on it) and sets nothing pending;
    a signal after the first, while cleaning up, raises at once and the next one kills."""
    previous = signal.getsignal(signal.SIGTERM)
    with interrupts.handle_interrupts(), interrupts.deferred():
        interrupts.check()
        os.kill(os.getpid(), signal.SIGTERM)
        assert interrupts.pending()
        with pytest.raises(interrupts.Interrupted) as info:
            interrupts.check()
        assert interrupts.exit_code(info.value) == 143 and not interrupts.pending()
        pid = os.fork()
        if pid == 0:  # the child: SIGTERM ends it, as without the project's handler
            os.kill(os.getpid(), signal.SIGTERM)
            os._exit(3)
        status = os.waitpid(pid, 0)[1]
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
        assert not interrupts.pending()
        monkeypatch.setattr(interrupts, "SAME_REQUEST_S", 0.0)
        with pytest.raises(interrupts.Interrupted):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # interrupted by the signal: not waited for
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    assert interrupts.exit_code(KeyboardInterrupt()) == 130
    assert signal.getsignal(signal.SIGTERM) == previous


def _square(x: int) -> int:
    return x * x


@pytest.mark.parametrize("deferred", [False, True])
def test_a_process_pool_ends_inside_the_interrupt_handlers(deferred):
    """``with Pool()`` ends by terminate(): SIGTERM to its workers, then a join. Workers that
    ignored the inherited handler would make that join wait forever (the superpixel builder's
    pool did); the join runs in a thread here so that a hang fails the test instead."""
    import multiprocessing
    import threading

    def build() -> None:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            assert pool.map(_square, range(8)) == [x * x for x in range(8)]

    done = threading.Event()
    with interrupts.handle_interrupts():
        if deferred:
            with interrupts.deferred():
                worker = threading.Thread(target=lambda: (build(), done.set()), daemon=True)
                worker.start()
                worker.join(timeout=60)
        else:
            worker = threading.Thread(target=lambda: (build(), done.set()), daemon=True)
            worker.start()
            worker.join(timeout=60)
    assert done.is_set(), "the pool's terminate() waited for workers that ignored SIGTERM"


def test_a_forked_child_starts_with_the_default_signal_actions():
    """Right after a fork, before the child runs any code of its own, the handlers are the
    defaults again: a child that never runs Python again (forked while another thread held a
    lock it then waits for) still ends on SIGTERM, which a Python-level handler could not do."""
    with interrupts.handle_interrupts():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report its handlers, then leave without cleanup
            os.close(read)
            ok = all(signal.getsignal(s) is signal.SIG_DFL for s in interrupts.SIGNALS)
            os.write(write, b"1" if ok else b"0")
            os._exit(0)
        os.close(write)
        reported = os.read(read, 1)
        os.close(read)
        os.waitpid(pid, 0)
        assert signal.getsignal(signal.SIGTERM) is interrupts._handler  # the parent keeps its
    assert reported == b"1"


# --------------------------------------------------------------------------- exit paths
def _nan_epoch(monkeypatch) -> None:
    real = runner._train_epoch

    def nan(loop, model, optimizer):
        loss, metrics = real(loop, model, optimizer)
        return float("nan"), metrics

    monkeypatch.setattr(runner, "_train_epoch", nan)


def _full_disk(monkeypatch, pattern: str, after: int = 0) -> list[Path]:
    """Writes of files named like ``pattern`` fail with ENOSPC, after ``after`` good ones, half
    written first as on a real full disk; returns the paths that failed."""
    real = Path.write_bytes
    failed: list[Path] = []
    good = [0]

    def write_bytes(self, data):
        if fnmatch.fnmatch(self.name, pattern):
            if good[0] >= after:
                real(self, data[: len(data) // 2])
                failed.append(self)
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
            good[0] += 1
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    return failed


@pytest.mark.parametrize("path,code,status", [
    ("complete", 0, "complete"),
    ("diverged", 1, "diverged"),
    ("disk_full", 1, "failed"),
    ("interrupted", 143, "interrupted"),
])
def test_every_exit_path_closes_what_the_run_opened(path, code, status, sbm_data, tmp_path,
                                                    recorded, monkeypatch, capsys):
    out, earlier = _copy_of_earlier_run(sbm_data, tmp_path)
    if path == "diverged":
        _nan_epoch(monkeypatch)
    elif path == "disk_full":  # the tensorboard writer cannot flush its last events either
        _full_disk(monkeypatch, ".run0_*.pt.tmp*")
        monkeypatch.setattr(RecordingWriter, "close_error", OSError(errno.ENOSPC, "full"))
    elif path == "interrupted":  # as Slurm does: to the loader worker too
        def terminate(n: int) -> None:
            if n == 3:
                workers = multiprocessing.active_children()  # one per split's loader
                assert workers
                for worker in workers:
                    os.kill(worker.pid, signal.SIGTERM)
                os.kill(os.getpid(), signal.SIGTERM)

        monkeypatch.setattr(RecordingWriter, "on_scalar", staticmethod(terminate))
    assert _sbm(sbm_data, out) == code
    run = _new_run(out, earlier)
    assert json.loads((run / "results.json").read_text())["status"] == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == (0 if code == 0 else 1), err
    assert {k: v for k, v in snapshot(out).items() if k in earlier} == earlier


@pytest.mark.parametrize("target,pattern,after,status,where", [
    # the best checkpoint: results.json can still say "failed"
    ("checkpoint", ".run0_*_best.pt.tmp*", 0, "failed", "checkpoints (run0_seed"),
    # the second checkpoint: the first one stays whole
    ("second checkpoint", ".run1_*_best.pt.tmp*", 0, "failed", "checkpoints (run1_seed"),
    # results.json itself, after its first version: its last whole version ("running") stays,
    # which readers report as killed once the process is gone
    ("results.json", ".results.json.tmp*", 1, "running", "(results.json)"),
    # results.txt: results.json is written first and records the failure
    ("results.txt", ".results.txt.tmp*", 1, "failed", "(results.txt)"),
    # the config: nothing to record yet
    ("config.json", ".config.json.tmp*", 0, None, "(config.json)"),
])
def test_full_disk_is_one_line_naming_the_folder(target, pattern, after, status, where,
                                                 sbm_data, tmp_path, monkeypatch, capsys):
    out, earlier = _copy_of_earlier_run(sbm_data, tmp_path)
    failed = _full_disk(monkeypatch, pattern, after)
    assert _sbm(sbm_data, out, "--epochs", "2") == 1
    line = one_line_error(capsys)
    run = _new_run(out, earlier)
    assert failed and line.startswith(f"error: no space left on device writing {run}")
    assert where in line and "--out_dir" in line
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]
    if status is None:
        assert not (run / "results.json").exists()
    else:
        data = json.loads((run / "results.json").read_text())
        assert data["status"] == status
        if target == "results.json":  # no room for the error: readers say it went unrecorded
            dead = refresh_status(run / "results.json", {**data, "pid": 2**22 + 12345})
            assert dead["status"] == "killed" and "(a full disk?)" in dead["error"]
        elif status == "failed":
            assert data["error"] == line[len("error: "):]
    if target == "second checkpoint":
        (first,) = (run / "checkpoints").glob("run0_*.pt")
        assert torch.load(first, weights_only=True)["run"] == 0
    assert {k: v for k, v in snapshot(out).items() if k in earlier} == earlier


def _record(tmp_path: Path) -> RunFolder:
    """A record with one finished run, as the runner leaves it while the next one trains."""
    record = RunFolder(tmp_path, {"model": "GCN", "dataset": "ZINC", "config": {}})
    record.add_run({"seed": 1, "epochs": 2, "best_epoch": 1, "s_per_epoch": 0.5,
                    "stop_reason": "epochs", "total_time_s": 1.0,
                    "final": {"test": {"mae": 0.5}}})
    return record


@pytest.mark.parametrize("status", ["complete", "failed", "interrupted"])
def test_a_full_disk_at_the_end_keeps_the_last_whole_record(status, tmp_path, monkeypatch):
    record = _record(tmp_path)
    before = {name: (tmp_path / name).read_bytes() for name in ("results.json", "results.txt")}
    real = Path.write_bytes

    def write_bytes(self, data):  # no room: half the file is written, then ENOSPC
        real(self, bytes(data)[:10])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    with pytest.raises(OSError, match="no space left on device"):
        record.finish(status, error=None if status == "complete" else "why")
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    data = json.loads(before["results.json"])
    assert data["status"] == "running" and len(data["runs"]) == 1  # nothing recorded is lost
    monkeypatch.setattr(Path, "write_bytes", real)
    dead = refresh_status(tmp_path / "results.json", {**data, "pid": 2**22 + 12345})
    assert dead["status"] == "killed" and "its last write failed (a full disk?)" in dead["error"]


def test_a_results_file_its_reader_cannot_describe_is_left_as_it_was(tmp_path, spawn):
    """refresh_status makes both texts before writing either: a results.json that
    format_text cannot describe raises (its callers report it as malformed) and neither file is
    rewritten (before, results.json said "killed" while results.txt could not be written)."""
    dead = spawn([sys.executable, "-c", "pass"])
    assert finish(dead, timeout=60) == 0
    path = tmp_path / "results.json"
    odd = {"status": "running", "pid": dead.pid, "host": os.uname().nodename,
           "runs": [{"seed": 1}]}  # a run without its metrics
    path.write_text(json.dumps(odd))
    (tmp_path / "results.txt").write_text("earlier text")
    before = snapshot(tmp_path)
    with pytest.raises(KeyError):
        refresh_status(path, json.loads(path.read_text()))
    assert snapshot(tmp_path) == before
    odd["runs"] = []  # a file it can describe: marked, with both causes named
    path.write_text(json.dumps(odd))
    data = refresh_status(path, json.loads(path.read_text()))
    assert data["status"] == "killed" and "killed, or its last write failed" in data["error"]
    assert json.loads(path.read_text()) == data
    assert "Status: killed" in (tmp_path / "results.txt").read_text()


def test_full_disk_when_making_the_run_folder(sbm_data, tmp_path, monkeypatch, capsys):
    out, earlier = _copy_of_earlier_run(sbm_data, tmp_path)
    real = Path.mkdir

    def mkdir(self, *args, **kwargs):
        if self.parent == out:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    assert _sbm(sbm_data, out) == 1
    assert one_line_error(capsys).startswith(f"error: no space left on device writing {out} (")
    assert snapshot(out) == earlier


# --------------------------------------------------------------------------- sweeps
def test_sweep_and_tables_mark_dead_running_cells(tmp_path, spawn):
    cell = sweep.Cell(id="c", row="r", column="ZINC", dataset="ZINC")
    folder = tmp_path / "table" / "c" / "run"
    folder.mkdir(parents=True)
    dead = spawn([sys.executable, "-c", "pass"])
    assert finish(dead, timeout=60) == 0
    res = {"status": "running", "pid": dead.pid, "host": os.uname().nodename, "runs": []}
    (folder / "results.json").write_text(json.dumps(res))
    assert sweep.cell_results(folder.parent, None).state == "killed"
    assert cell_result(cell, folder.parent, "mae", 5, extra=None).state == "killed"


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_to_a_sweep_reaches_its_cells(sig, code, tmp_path, spawn):
    probe = tmp_path / "probe.py"
    probe.write_text("import signal, sys, time\n"
                     "for s in (signal.SIGTERM, signal.SIGINT):\n"
                     "    signal.signal(s, lambda n, f: (print('cell got', n, flush=True), "
                     "sys.exit(128 + n)))\n"
                     "print('started', flush=True)\ntime.sleep(60)\n")
    script = ("import sys; from pathlib import Path; from scripts import sweep\n"
              "from train import interrupts\n"
              "cell = sweep.Cell(id='c0', row='r', column='c', dataset='ZINC')\n"
              f"jobs = [(cell, Path({str(tmp_path)!r}) / 'c0', 'missing')]\n"
              "try:\n"
              "    with interrupts.handle_interrupts(), interrupts.deferred():\n"
              f"        sweep.run_cells(jobs, lambda c, d: [sys.executable, {str(probe)!r}], "
              "[None], {})\n"
              "except KeyboardInterrupt as err:\n    sys.exit(interrupts.exit_code(err))\n")
    proc = spawn([sys.executable, "-c", script], stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
    log = tmp_path / "c0" / "stdout.log"
    end = time.time() + 60
    while time.time() < end and not (log.exists() and "started" in log.read_text()):
        time.sleep(0.1)
    proc.send_signal(sig)
    assert finish(proc, timeout=30) == code
    assert f"cell got {int(sig)}" in log.read_text()  # forwarded, not orphaned


# --------------------------------------------------------------------------- Ctrl-C at start
# The main scripts, checkpoint evaluation and every tool (a scripts/*.py with a __main__).
ENTRY_POINTS = sorted(ROOT.glob("main_*.py")) + [ROOT / "evaluate_checkpoint.py"] + sorted(
    p for p in (ROOT / "scripts").glob("*.py") if '__name__ == "__main__"' in p.read_text())


@pytest.mark.parametrize("signum, word", [(signal.SIGINT, "interrupted"),
                                          (signal.SIGTERM, "terminated")])
def test_a_signal_while_the_libraries_load_is_one_line(signum, word, capsys, request):
    # Python's own SIGINT handler, as in a script started from a terminal: a shell's background
    # job inherits SIGINT ignored, and the signal would then do nothing here.
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, saved))
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stop:
        with interrupts.startup("stopped before training started"):
            os.kill(os.getpid(), signum)  # as during `import torch`
            time.sleep(5)  # the handler raises at the next bytecode; never reached
            raise AssertionError("the signal should have stopped the import")
    assert stop.value.code == 128 + signum
    assert capsys.readouterr().err == f"{word}: stopped before training started\n"
    assert signal.getsignal(signal.SIGTERM) == previous  # restored


@pytest.mark.parametrize("script", ENTRY_POINTS, ids=[p.stem for p in ENTRY_POINTS])
def test_every_entry_point_loads_its_libraries_inside_startup(script):
    """The first seconds of a command are spent importing torch: a Ctrl-C then must not be a
    traceback. Only the standard library and train.interrupts may come before startup()."""
    import train.entry

    assert "with startup(" in Path(train.entry.__file__).read_text()
    import ast

    tree = ast.parse(script.read_text())
    allowed = set(sys.stdlib_module_names)
    for node in tree.body:
        if isinstance(node, ast.With) and "startup(" in ast.unparse(node.items[0]):
            return
        if isinstance(node, ast.ImportFrom) and node.module in ("__future__",
                                                                "train.interrupts"):
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "train.entry":
            return  # the main scripts: train.entry.run loads the libraries inside startup()
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module] if isinstance(node, ast.ImportFrom) else [
                a.name for a in node.names]
            assert all((n or "").split(".")[0] in allowed for n in names), ast.unparse(node)
    pytest.fail(f"{script.name} imports its libraries outside train.interrupts.startup")


def test_train_log_closes_quietly_on_a_full_disk(tmp_path):
    """The last lines of train.log not reaching a full disk must not replace the one-line error
    that ended the run with a traceback from the logging module."""
    handler = runner._RunLog(tmp_path / "train.log")

    class Full:
        def write(self, text):
            return len(text)

        def flush(self):
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            self.flush()

    handler.stream.close()
    handler.stream = Full()
    handler.close()  # raises nothing


def test_without_tensorboardx_the_writer_is_torchs_or_one_line_names_the_package(monkeypatch):
    """A machine with tensorboard but no tensorboardX (the lent GPU machines) logs through
    torch's writer; with neither, the error names tensorboardX."""
    import types

    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # import fails, as if not installed
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    writer = runner.summary_writer_class
    writer.cache_clear()  # it is looked up once per process
    try:
        with pytest.raises(ConfigError, match="needs tensorboardX"):
            writer()
        torch_writer = types.ModuleType("torch.utils.tensorboard")
        torch_writer.SummaryWriter = type("SummaryWriter", (), {})
        monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", torch_writer)
        assert writer() is torch_writer.SummaryWriter
    finally:
        writer.cache_clear()  # later tests look up the real one

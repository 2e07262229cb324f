"""``--deterministic``: the same seed on the same device gives the same run, the global settings
it changes come back afterwards, and the deterministic path of the segment maximum equals the
default one (values and gradients)."""

from __future__ import annotations

import json
import os
import random
import signal
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import torch

import train.runner as runner
from autogcn.graph import Graph
from layers import propagation as P
from train.loop import GraphBatches, init_worker
from train.tasks import SBM

SBM_CONFIG = "configs/SBMs_node_clustering_AUTOGCN_PATTERN.json"
TINY = ["--epochs", "2", "--L", "2", "--hidden_dim", "8", "--batch_size", "4", "--use_gpu",
        "False", "--max_graphs", "8", "--dropout", "0.2", "--seed", "5"]


def _settings() -> tuple:
    """Every global the option changes."""
    cudnn = torch.backends.cudnn
    return (torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(), cudnn.benchmark,
            cudnn.deterministic, os.environ.get("CUBLAS_WORKSPACE_CONFIG"))


@contextmanager
def deterministic_algorithms():
    before = (torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])


@pytest.fixture(scope="module")
def sbm_dir(tmp_path_factory) -> Path:
    """A tiny generated SBM_PATTERN folder (one throwaway run generates it)."""
    root = tmp_path_factory.mktemp("sbm")
    code = runner.main(SBM, ["--config", SBM_CONFIG, *TINY, "--epochs", "1",
                             "--data_dir", str(root / "data"), "--out_dir", str(root / "warm")])
    assert code == 0
    return root


def _run(sbm_dir: Path, out: Path, *args: str) -> tuple[dict, dict[str, torch.Tensor]]:
    """One in-process run: its final metrics and its best weights."""
    before = _settings()
    code = runner.main(SBM, ["--config", SBM_CONFIG, *TINY, "--data_dir", str(sbm_dir / "data"),
                             "--out_dir", str(out), *args])
    assert code == 0
    assert _settings() == before  # nothing leaks into the rest of the process
    (run_dir,) = out.iterdir()
    results = json.loads((run_dir / "results.json").read_text())
    assert results["config"]["params"]["deterministic"] is ("True" in args)
    (ckpt,) = (run_dir / "checkpoints").iterdir()
    weights = torch.load(ckpt, map_location="cpu", weights_only=True)["state_dict"]
    return [run["final"] for run in results["runs"]], weights


@pytest.mark.parametrize("extra", [
    [],
    ["--loader_workers", "1"],  # shuffling and worker seeds come from the run's generator
    ["--model", "GAT", "--n_heads", "2"],  # edge_softmax: the deterministic segment maximum
], ids=["autogcn", "loader-worker", "gat"])
def test_same_seed_gives_identical_metrics_and_weights(extra, sbm_dir, tmp_path):
    first = _run(sbm_dir, tmp_path / "a", "--deterministic", "True", *extra)
    second = _run(sbm_dir, tmp_path / "b", "--deterministic", "True", *extra)
    assert first[0] == second[0]
    assert first[1].keys() == second[1].keys()
    for name, value in first[1].items():
        assert torch.equal(value, second[1][name]), name


def test_settings_come_back_after_a_failed_run(sbm_dir, tmp_path, capsys, monkeypatch):
    def fail(loop, model, optimizer):
        assert torch.are_deterministic_algorithms_enabled()  # on while training
        raise runner.TrainingError("stopped by the test")

    monkeypatch.setattr(runner, "_train_epoch", fail)
    before = _settings()
    code = runner.main(SBM, ["--config", SBM_CONFIG, *TINY, "--data_dir", str(sbm_dir / "data"),
                             "--out_dir", str(tmp_path), "--deterministic", "True"])
    assert code == 2
    assert "stopped by the test" in capsys.readouterr().err
    assert _settings() == before


def test_an_op_without_a_deterministic_kernel_is_one_line(sbm_dir, tmp_path, capsys,
                                                         monkeypatch):
    """torch refuses such an op under the setting: the run stops with one line naming it."""
    def put(loop, model, optimizer):
        torch.zeros(3).put_(torch.tensor([0]), torch.tensor([1.0]))  # none on any device

    monkeypatch.setattr(GraphBatches, "train_epoch", put)
    code = runner.main(SBM, ["--config", SBM_CONFIG, *TINY, "--data_dir", str(sbm_dir / "data"),
                             "--out_dir", str(tmp_path), "--deterministic", "True"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("error: --deterministic: put_ does not have a deterministic")
    (run_dir,) = tmp_path.iterdir()
    assert json.loads((run_dir / "results.json").read_text())["status"] == "failed"


def test_a_value_that_is_not_a_boolean_is_one_line(capsys, tmp_path):
    code = runner.main(SBM, ["--config", SBM_CONFIG, "--deterministic", "maybe",
                             "--out_dir", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--deterministic" in err[0]
    assert not (tmp_path / "out").exists()


class _WorkerState(torch.utils.data.Dataset):
    """What a loader worker sees: its torch seed, its first numpy and random draws, and its
    SIGINT handler."""

    def __len__(self) -> int:
        return 1  # one item: its draws are the worker's first

    def __getitem__(self, i: int) -> tuple:
        return (torch.initial_seed(), int(np.random.randint(2**31)), random.random(),
                signal.getsignal(signal.SIGINT) == signal.SIG_IGN)


def _worker_draws(seed: int) -> list[tuple]:
    loader = torch.utils.data.DataLoader(_WorkerState(), batch_size=None, num_workers=1,
                                         worker_init_fn=init_worker,
                                         generator=torch.Generator().manual_seed(seed))
    return list(loader)


def test_loader_workers_are_seeded_from_the_run_generator():
    first, again, other = _worker_draws(3), _worker_draws(3), _worker_draws(4)
    assert first == again and first != other
    for torch_seed, numpy_draw, random_draw, ignores_sigint in first:
        assert ignores_sigint  # the interrupt handling of the worker is kept
        expected = torch_seed % 2**32
        assert numpy_draw == np.random.RandomState(expected).randint(2**31)
        assert random_draw == random.Random(expected).random()


# --------------------------------------------------------------------------- segment maximum
def _graph() -> Graph:
    """Nine edges into five nodes: node 3 has none, node 0 three, one edge repeated."""
    src = torch.tensor([1, 2, 4, 0, 0, 3, 2, 1, 1])
    dst = torch.tensor([0, 0, 0, 1, 2, 2, 4, 4, 4])
    return Graph(src, dst, num_nodes=5)


def _both_paths(fn, *inputs: torch.Tensor) -> None:
    """``fn`` gives the same output and input gradients with deterministic algorithms on and
    off (bit for bit: a maximum involves no rounding)."""
    results = []
    for deterministic in (False, True):
        leaves = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
        if deterministic:
            with deterministic_algorithms():
                out = fn(*leaves)
                out.backward(torch.linspace(-1, 2, out.numel()).view_as(out))
        else:
            out = fn(*leaves)
            out.backward(torch.linspace(-1, 2, out.numel()).view_as(out))
        results.append((out.detach(), [x.grad for x in leaves if x.requires_grad]))
    (out0, grads0), (out1, grads1) = results
    assert torch.equal(out0, out1)
    for g0, g1 in zip(grads0, grads1, strict=True):
        assert torch.equal(g0, g1)


@pytest.mark.parametrize("shape", [(9,), (9, 3), (9, 2, 4)])
def test_segment_maximum_equals_scatter_reduce(shape):
    torch.manual_seed(0)
    values = torch.randn(shape).round(decimals=0)  # rounding makes ties within a row
    index = torch.tensor([2, 0, 2, 2, 5, 0, 1, 5, 2])  # rows 3 and 4 receive nothing
    _both_paths(lambda v: P.scatter_amax(v, index, 6), values)
    default = P.scatter_amax(values, index, 6)
    assert torch.equal(P._segment_amax(values, index, 6), default)
    assert (default[3] == 0).all() and (default[4] == 0).all()


def test_ties_at_zero_share_the_gradient_as_torch_does():
    """torch counts the 0 the output starts from among a maximum of exactly 0: the
    deterministic path must train the same way."""
    values = torch.tensor([0.0, 0.0, -1.0, 2.0, 2.0, -0.5])
    index = torch.tensor([0, 0, 0, 1, 1, 3])
    _both_paths(lambda v: P.scatter_amax(v, index, 4), values)


def test_the_layers_maxima_agree_on_both_paths():
    torch.manual_seed(1)
    g = _graph()
    x = torch.randn(5, 3)
    _both_paths(lambda h: P.aggregate(g, h, "max"), x)
    _both_paths(lambda m: P.aggregate_edges(g, m, "max"), torch.randn(9, 2))
    # edge_softmax's shift is a maximum: the same softmax, whichever path computed it
    _both_paths(lambda s: P.edge_softmax(g, s), torch.randn(9, 2))
    batch = Graph.batch([_graph(), Graph(torch.tensor([0]), torch.tensor([1]), num_nodes=2)])
    _both_paths(lambda h: P.readout(batch, h, "max"), torch.randn(7, 3))


def test_without_the_setting_scatter_reduce_is_used(monkeypatch):
    """The default path stays torch's kernel (the segment path is only a fallback)."""
    monkeypatch.setattr(P, "_segment_amax", lambda *a: pytest.fail("segment path used"))
    assert not torch.are_deterministic_algorithms_enabled()
    P.scatter_amax(torch.ones(3, 2), torch.tensor([0, 0, 1]), 2)

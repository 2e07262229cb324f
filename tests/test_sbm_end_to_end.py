"""The SBM main script end to end on tiny generated data, and its handling of bad input."""

import json
from pathlib import Path

import pytest
import torch

import train.runner as runner
from data.common import GraphDataset, GraphSplit
from nets.gnn_net import NetIO
from nets.registry import build_net
from tests.helpers import rand_graph
from train.config import load_config
from train.loop import GraphBatches
from train.tasks import SBM

TINY = ["--config", "configs/SBMs_node_clustering_AUTOGCN_CLUSTER.json", "--max_graphs", "6",
        "--epochs", "2", "--L", "2", "--hidden_dim", "16", "--batch_size", "4",
        "--use_gpu", "False"]  # the device is chosen explicitly: these are CPU tests


def run_main(tmp_path, *extra):
    args = TINY + ["--data_dir", str(tmp_path / "data"), "--out_dir", str(tmp_path / "out"),
                   *extra]
    return runner.main(SBM, args)


def scalar_tags(event_file) -> set[str]:
    """Tags of the scalars in a tensorboard event file (TFRecord framing, read directly)."""
    from tensorboardX.proto.event_pb2 import Event

    tags, data = set(), event_file.read_bytes()
    pos = 0
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 8], "little")
        event = Event.FromString(data[pos + 12:pos + 12 + length])
        tags |= {v.tag for v in event.summary.value}
        pos += 12 + length + 4
    return tags


def run_dirs(tmp_path):
    out = tmp_path / "out"
    return sorted(p for p in out.iterdir() if p.is_dir()) if out.exists() else []


def test_main_trains_and_writes_results_and_never_overwrites(tmp_path):
    assert run_main(tmp_path, "--runs", "2") == 0
    assert run_main(tmp_path) == 0
    first, second = run_dirs(tmp_path)
    assert first != second
    res = json.loads((first / "results.json").read_text())
    assert res["status"] == "complete" and res["seeds"] == [4565, 7432]  # the release's seeds
    assert len(res["runs"]) == 2 and res["num_params"] > 0
    for run in res["runs"]:
        assert set(run["final"]) == {"train", "val", "test"}
        assert {"acc", "acc_release"} <= set(run["final"]["test"])
        assert run["s_per_epoch"] > 0 and run["epochs"] == 2
        assert (first / "checkpoints" / run["checkpoint"]).exists()
    assert res["summary"]["test"]["acc"]["n"] == 2
    assert res["config"]["net_params"]["L"] == 2  # the resolved config is recorded
    assert (first / "results.txt").read_text().startswith("Model: AUTOGCN")
    assert json.loads((first / "config.json").read_text())["data"]["max_graphs"] == 6
    events = list((first / "logs").rglob("events.out.tfevents.*"))
    assert len(events) == 2
    tags = scalar_tags(events[0])
    for split in ("train", "val", "test"):
        assert {f"{split}/_loss", f"{split}/_acc", f"{split}/_acc_release"} <= tags
    assert "learning_rate" in tags
    assert json.loads((second / "results.json").read_text())["seeds"] == [4565]


def test_seed_from_command_line(tmp_path):
    assert run_main(tmp_path, "--seed", "7", "--runs", "2", "--epochs", "1") == 0
    (folder,) = run_dirs(tmp_path)
    assert json.loads((folder / "results.json").read_text())["seeds"] == [7, 8]


@pytest.mark.parametrize("extra,message", [
    (["--model", "NOPE"], "unknown model 'NOPE'"),
    (["--dataset", "SBM_SQUARE"], "unknown dataset 'SBM_SQUARE'"),
    (["--hiden_dim", "3"], None),  # argparse rejects unknown flags itself (exit code 2)
    (["--residual", "perhaps"], "True or False"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, extra, message):
    if message is None:
        with pytest.raises(SystemExit) as exc:
            run_main(tmp_path, *extra)
        assert exc.value.code == 2
    else:
        assert run_main(tmp_path, *extra) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]
    assert run_dirs(tmp_path) == []


def test_bad_config_key_in_file(tmp_path, capsys):
    cfg = json.loads(Path("configs/SBMs_node_clustering_AUTOGCN_CLUSTER.json").read_text())
    cfg["net_params"]["layers"] = 3
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(cfg))
    assert runner.main(SBM, ["--config", str(path), "--out_dir", str(tmp_path / "out")]) == 2
    assert "net_params.'layers'" in capsys.readouterr().err
    assert run_dirs(tmp_path) == []


def test_nonexistent_gpu_on_the_command_line_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert run_main(tmp_path, "--gpu_id", "3", "--use_gpu", "True") == 2
    err = capsys.readouterr().err
    assert "--gpu_id 3: this machine has 1 visible GPU(s)" in err and len(err.splitlines()) == 1
    assert run_dirs(tmp_path) == []


def test_gpu_requested_without_cuda_falls_back_to_cpu(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert run_main(tmp_path, "--gpu_id", "0", "--use_gpu", "True", "--epochs", "1") == 0
    assert "no GPU is available: running on CPU" in caplog.text
    (folder,) = run_dirs(tmp_path)
    assert json.loads((folder / "results.json").read_text())["device"] == "cpu"


def test_interrupt_keeps_finished_runs(tmp_path, monkeypatch):
    real = runner.Experiment.train_seed
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner.Experiment, "train_seed", flaky)
    assert run_main(tmp_path, "--runs", "3", "--epochs", "1") == 130
    (folder,) = run_dirs(tmp_path)
    res = json.loads((folder / "results.json").read_text())
    assert res["status"] == "interrupted" and len(res["runs"]) == 1
    assert "interrupted" in (folder / "results.txt").read_text()


def neighbour_task(n_graphs: int, seed: int) -> GraphDataset:
    """Label = 1 when a node has an in-neighbour with feature 1: needs one propagation step."""
    gen = torch.Generator().manual_seed(seed)
    graphs, labels = [], []
    for i in range(n_graphs):
        g = rand_graph(20, 50, seed=seed * 1000 + i)
        feat = (torch.rand(20, generator=gen) < 0.15).long()
        g.ndata["feat"] = feat
        label = torch.zeros(20, dtype=torch.long)
        src, dst = g.edges()
        label[dst[feat[src] == 1]] = 1
        graphs.append(g)
        labels.append(label)
    split = GraphSplit(graphs, labels)
    return GraphDataset("toy", split, None, None, in_dim=2, num_classes=2)


def test_loss_goes_down_on_a_learnable_task():
    torch.manual_seed(0)
    ds = neighbour_task(32, 0)
    cfg = load_config("configs/SBMs_node_clustering_AUTOGCN_CLUSTER.json")
    cfg["net_params"].update(L=2, hidden_dim=16, out_dim=16)
    model = build_net("AUTOGCN", NetIO("node", "embedding", ds.in_dim, ds.num_classes),
                      cfg["net_params"])
    loop = GraphBatches(ds, SBM, 8, torch.device("cpu"))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = [loop.train_epoch(model, opt)[0] for _ in range(25)]
    assert losses[-1] < 0.5 * losses[0]
    _, metrics = loop.evaluate(model, "train")
    assert metrics["acc"] > 0.9

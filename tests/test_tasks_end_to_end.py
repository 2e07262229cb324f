"""ZINC, superpixel and single-graph node classification scripts end to end on tiny data written
in the real formats, plus checkpoint evaluation reproducing the reported metrics."""

import json

import pytest
import torch

import evaluate_checkpoint
import train.runner as runner
from tests.data_writers import molecule as _molecule
from tests.data_writers import write_mnist as _write_mnist
from tests.data_writers import write_zinc as _write
from tests.test_node_datasets import write_squirrel
from train.tasks import NODE, SUPERPIXELS, ZINC

SMALL = ["--epochs", "2", "--L", "2", "--hidden_dim", "16", "--batch_size", "4",
         "--use_gpu", "False"]  # CPU tests; tests/test_gpu.py and scripts/gpu_check.py use CUDA


def only_run_dir(out):
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder, json.loads((folder / "results.json").read_text())


def check_checkpoint_reproduces(folder, res, **data):
    """Evaluating the saved best checkpoint gives the metrics the run reported."""
    ckpt = folder / "checkpoints" / res["runs"][0]["checkpoint"]
    evaluated = evaluate_checkpoint.evaluate_checkpoint(str(ckpt), data)
    for split, metrics in res["runs"][0]["final"].items():
        if metrics is None:
            assert evaluated["metrics"][split] is None
            continue
        for name, value in metrics.items():
            assert evaluated["metrics"][split][name] == pytest.approx(value, abs=1e-5)


def test_zinc_with_missing_test_split(tmp_path, caplog):
    gen = torch.Generator().manual_seed(0)
    for split, n in (("train", 12), ("val", 5)):
        _write(tmp_path, split, [_molecule(gen, 6 + i % 5) for i in range(n)])
    out = tmp_path / "out"
    args = ["--config", "configs/molecules_graph_regression_AUTOGCN_ZINC.json",
            "--data_dir", str(tmp_path), "--out_dir", str(out), *SMALL]
    assert runner.main(ZINC, args) == 0
    assert "test.pickle" in caplog.text  # the missing split is reported, not a crash
    folder, res = only_run_dir(out)
    assert res["status"] == "complete" and res["num_params"] > 0
    final = res["runs"][0]["final"]
    assert final["test"] is None and set(final["val"]) == {"mae"}
    assert "test" not in res["summary"] and res["summary"]["val"]["mae"]["n"] == 1
    check_checkpoint_reproduces(folder, res)


@pytest.mark.parametrize("model, extra, loops", [
    ("SGC", [], False),  # its config sets self_loop true; the release's molecules main ignores it
    ("GCN", ["--self_loop", "True"], True),
    ("GCN", [], False)])
def test_zinc_self_loops_as_the_release_molecules_main(tmp_path, model, extra, loops):
    gen = torch.Generator().manual_seed(0)
    molecules = [_molecule(gen, 6 + i % 5) for i in range(6)]
    _write(tmp_path, "train", molecules)
    _write(tmp_path, "val", molecules[:2])
    args = runner.build_parser(ZINC, "").parse_args([
        "--config", f"configs/molecules_graph_regression_{model}_ZINC.json",
        "--data_dir", str(tmp_path), *extra])
    cfg, _ = runner.resolve_config(ZINC, args)
    assert cfg["net_params"]["self_loop"] == (model == "SGC" or bool(extra))
    info, _, _ = runner.load_data(ZINC, cfg, write_data=False)
    nodes = sum(m["num_atom"] for m in molecules)
    bonds = sum(int((m["bond_type"] > 0).sum()) for m in molecules)
    assert info["train"]["mean_edges"] * len(molecules) == pytest.approx(bonds + nodes * loops)


def test_self_loop_on_a_task_without_them_names_the_dataset(tmp_path, capsys):
    args = ["--config", "configs/molecules_graph_regression_SGC_ZINC.json", "--self_loop",
            "True", "--data_dir", str(tmp_path), "--out_dir", str(tmp_path / "out")]
    assert runner.main(ZINC, args) == 2
    assert "--self_loop does not apply to SGC on ZINC" in capsys.readouterr().err


def test_zinc_missing_folder_is_one_line(tmp_path, capsys):
    args = ["--config", "configs/molecules_graph_regression_AUTOGCN_ZINC.json",
            "--data_dir", str(tmp_path / "nowhere"), "--out_dir", str(tmp_path / "out")]
    assert runner.main(ZINC, args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere" in err[0]
    assert not (tmp_path / "out").exists()


def test_mnist_superpixels_from_raw_idx(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    # validation = the first 5000 training images, so training graphs start at image 5000;
    # --max_graphs builds only the first few graphs of each split
    _write_mnist(raw, n_train=5010, n_test=8, gz=True)
    out = tmp_path / "out"
    args = ["--config", "configs/superpixels_graph_classification_AUTOGCN_MNIST.json",
            "--data_dir", str(raw), "--cache_dir", str(tmp_path / "cache"), "--workers", "1",
            "--max_graphs", "8", "--out_dir", str(out), *SMALL]
    assert runner.main(SUPERPIXELS, args) == 0
    folder, res = only_run_dir(out)
    assert res["status"] == "complete"
    assert set(res["runs"][0]["final"]["test"]) == {"acc"}
    assert res["data"]["train"]["graphs"] > 0
    check_checkpoint_reproduces(folder, res, cache_dir=str(tmp_path / "cache"))


@pytest.mark.parametrize("split", ["random", "fixed"])
def test_node_classification_on_squirrel_format(tmp_path, split):
    data = tmp_path / "squirrel"
    write_squirrel(data)
    out = tmp_path / "out"
    args = ["--config", "configs/node_classification_AUTOGCN_SQUIRREL.json",
            "--data_dir", str(data), "--out_dir", str(out), "--epochs", "3", "--runs", "2",
            "--split", split]
    assert runner.main(NODE, args) == 0
    folder, res = only_run_dir(out)
    assert res["status"] == "complete" and len(res["runs"]) == 2
    assert res["summary"]["test"]["acc"]["n"] == 2
    check_checkpoint_reproduces(folder, res)

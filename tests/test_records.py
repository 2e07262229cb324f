"""The committed evidence: records of measured cells, their checkpoints, the report and figure.

Fake sweep outputs are written into temporary folders (a ``results.json`` and a checkpoint per
cell, as the main scripts write them); one ZINC cell is trained for real, for one epoch on a
tiny ZINC copy, so that its record and pretrained checkpoint go through the whole path.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters
from scripts.report import figures
from scripts.report import records as rec
from scripts.report import reproduction as report
from scripts.report.__main__ import main
from scripts.report.cells import load_tables
from scripts.sweep import build_command, load_table, script_config
from train.checkpoint import (
    CheckpointError,
    checkpoint_bytes,
    load_checkpoint,
    model_from_checkpoint,
)
from train.config import load_config
from train.run_folder import CELL_FREE, difference, summarise

ROOT = Path(__file__).resolve().parent.parent
SEEDS = [4565, 7432, 9823, 2113, 5812]  # the release's seeds (train/runner.py: release_seeds)
PUBMED = NetIO("single_graph", "linear", 500, 3)
ZINC = NetIO("graph", "embedding", 28, 1)
PATTERN = NetIO("node", "embedding", 3, 2)


def fake_cell(out_root: Path, table: str, model: str, dataset: str, io: NetIO,
              values: list[float], split: str = "test", metric: str = "acc",
              status: str = "complete", stamp: str = "20260101-000000",
              cell: str | None = None) -> Path:
    """A run folder of one cell (``cell``: its id, default MODEL_DATASET) as a main script
    leaves it: ``results.json`` (one run per value, the release's seeds, the command the sweep
    gives the cell and the config the script resolves from it) and each run's best
    checkpoint, of a net built from that config."""
    cell = cell or f"{model}_{dataset}"
    spec = next(c for c in load_table(table).cells if c.id == cell)
    argv = build_command(spec, table, str(out_root), runs=len(values))[1:]
    if "--data_dir" in argv:
        argv[argv.index("--data_dir") + 1] = str(out_root / "data")
    cfg = script_config(dataset, argv[1:])
    net = build_net(model, io, cfg["net_params"])
    folder = out_root / table / cell / f"{cell}_{stamp}"
    (folder / "checkpoints").mkdir(parents=True)
    runs = []
    for i, (seed, value) in enumerate(zip(SEEDS, values, strict=False)):
        name = f"run{i}_seed{seed}_best.pt"
        (folder / "checkpoints" / name).write_bytes(
            checkpoint_bytes(net.state_dict(), cfg, io, seed, i, 3))
        final = {"train": {metric: value}, "val": {metric: value}, "test": None}
        final[split] = {metric: value}
        runs.append({"seed": seed, "epochs": 4, "s_per_epoch": 0.5, "total_time_s": 2.0,
                     "final": final, "checkpoint": name})
    data = {"status": status, "pid": 1, "host": "somehost", "model": model, "dataset": dataset,
            "num_params": count_parameters(net), "seeds": SEEDS[:len(values)],
            "device": "cpu", "versions": {"torch": torch.__version__}, "started": stamp,
            "command": argv, "config": cfg, "runs": runs, "summary": summarise(runs)}
    (folder / "results.json").write_text(json.dumps(data))
    return folder


def collect(out_root: Path, into: Path, tables=("node",), **kw) -> list[str]:
    lines: list[str] = []
    refused = rec.collect_records(out_root, list(tables), into, log=lines.append, **kw)
    assert refused == 0 and lines[-1].startswith("cells: ")
    return lines[:-1]


# ------------------------------------------------------------------------------- records
def test_a_complete_cell_becomes_a_record_with_its_config_s_parameter_count(tmp_path):
    fake_cell(tmp_path / "out", "node", "GCN", "PUBMED", PUBMED, [0.86, 0.87, 0.865, 0.86, 0.87])
    lines = collect(tmp_path / "out", tmp_path / "results", commit="abc1234", machine="CPU: test")
    assert lines == ["node/GCN_PUBMED: written (5/5 seeds)"]
    record = json.loads((tmp_path / "results" / "node" / "GCN_PUBMED.json").read_text())
    # GCN on PubMed builds the paper's #Param exactly (tests/test_param_counts.py)
    assert (record["model"], record["dataset"], record["num_params"]) == ("GCN", "PUBMED", 8105)
    assert record["seeds"] == SEEDS and record["seeds_protocol"] == 5
    assert [r["final"]["test"]["acc"] for r in record["runs"]] == [0.86, 0.87, 0.865, 0.86, 0.87]
    assert record["command"].endswith("--out_dir OUT --data_dir DIR --use_gpu False")
    assert record["command"].startswith("python main_node_classification.py --config configs/")
    assert (record["commit"], record["machine"]) == ("abc1234", "CPU: test")
    # the run's resolved config, its folders replaced, and the cell's setup
    assert (record["setup"], record["format"]) == ("published", rec.FORMAT)
    assert (record["config"]["out_dir"], record["config"]["data"]["data_dir"]) == ("OUT", "DIR")
    assert record["config"]["params"]["runs"] == 5
    text = json.dumps(record)
    assert str(tmp_path) not in text and "somehost" not in text and '"pid"' not in text


def test_seeds_run_on_several_devices_keep_theirs_and_need_a_machine_named(tmp_path, capsys):
    """A GPU call's seeds continued on a CPU: this machine's description would fit only some,
    so collect asks for --machine; each seed's device stays in the record."""
    folder = fake_cell(tmp_path / "out", "node", "GCN", "PUBMED", PUBMED, [0.86, 0.87])
    data = json.loads((folder / "results.json").read_text())
    data["runs"][0]["device"] = "cuda:0"
    data["runs"][1]["device"] = "cuda:0 (epochs 0-49), then cpu (from epoch 50)"
    (folder / "results.json").write_text(json.dumps(data))
    into = tmp_path / "results"
    assert rec.collect_records(tmp_path / "out", ["node"], into, commit="abc1234", runs=2,
                               log=print) == 1
    assert "ran on several devices" in capsys.readouterr().err and not into.exists()
    collect(tmp_path / "out", into, commit="abc1234", runs=2, machine="GPU: H200, then CPU: x")
    record = json.loads((into / "node" / "GCN_PUBMED.json").read_text())
    assert [r["device"] for r in record["runs"]] == [r["device"] for r in data["runs"]]
    assert record["machine"] == "GPU: H200, then CPU: x"


def test_collecting_again_changes_nothing_and_never_drops_seeds(tmp_path):
    out, into = tmp_path / "out", tmp_path / "results"
    fake_cell(out, "node", "GCN", "PUBMED", PUBMED, [0.86] * 5)
    collect(out, into, commit="abc1234")
    path = into / "node" / "GCN_PUBMED.json"
    before = path.read_bytes()
    assert collect(out, into, commit="abc1234") == ["node/GCN_PUBMED: unchanged (5/5 seeds)"]
    # a newer, complete result with fewer seeds is the one the tables would pick
    fake_cell(out, "node", "GCN", "PUBMED", PUBMED, [0.5, 0.5], stamp="20270101-000000")
    lines = collect(out, into, commit="abc1234", runs=2)
    assert lines[0].startswith("node/GCN_PUBMED: kept: the record has 5 seeds")
    assert path.read_bytes() == before
    assert collect(out, into, commit="abc1234", runs=2, replace=True) == [
        "node/GCN_PUBMED: updated (2/2 seeds)"]
    assert json.loads(path.read_text())["seeds"] == SEEDS[:2]


def test_unfinished_cells_are_reported_not_recorded(tmp_path):
    out = tmp_path / "out"
    fake_cell(out, "node", "GCN", "PUBMED", PUBMED, [0.86] * 3, status="interrupted")
    assert collect(out, tmp_path / "results") == [
        "node/GCN_PUBMED: not complete (interrupted 3/5)"]
    assert not (tmp_path / "results" / "node").exists()


def _good_record(tmp_path: Path) -> tuple[Path, dict]:
    fake_cell(tmp_path / "out", "node", "GCN", "PUBMED", PUBMED, [0.86] * 5)
    collect(tmp_path / "out", tmp_path / "results", commit="abc1234")
    path = tmp_path / "results" / "node" / "GCN_PUBMED.json"
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("tamper, why", [
    (lambda r: r["runs"].pop(2), "seed 9823 has no run"),
    (lambda r: r.update(num_params=8106), "#Param 8106, but its config builds 8105"),
    (lambda r: r.update(model="SGC"), "model 'SGC', but the cell GCN_PUBMED is GCN"),
    (lambda r: r["config"].update(model="SGC"),
     "its config is another experiment's: model is 'SGC' in the run, 'GCN' now"),
    (lambda r: r["config"]["params"].update(epochs=2),
     "its config is another experiment's: params.epochs is 2 in the run, "),
    (lambda r: r["config"]["net_params"].update(hidden_dim=17),
     "its config is another experiment's: net_params.hidden_dim is 17 in the run, 16 now"),
    (lambda r: r["config"]["params"].update(runs=3), "its config asks for 3 runs, it holds 5"),
    (lambda r: r.pop("config"), "no config (a record states the run's resolved config)"),
    (lambda r: r.update(setup="paper_text"),
     "setup 'paper_text', but the cell GCN_PUBMED is published"),
    (lambda r: r.update(format=1), "format 1; this project reads format 2"),
    (lambda r: r.update(machine="CPU in /home/someone"), None),
    (lambda r: r["runs"][1]["final"]["test"].update(acc=float("nan")),
     "seed 7432: test acc is nan, not a finite number"),
    (lambda r: [r["seeds"].__setitem__(1, 4565), r["runs"][1].update(seed=4565)],
     "a seed is listed twice"),
    (lambda r: r["runs"][2]["final"]["test"].update(acc=1.7),
     "seed 9823: test acc is 1.7, outside its range"),
    (lambda r: r["runs"][3].update(s_per_epoch=float("inf")),
     "seed 2113: s_per_epoch is inf, not a finite number"),
    (lambda r: r["runs"][0]["final"]["val"].update(acc=None),
     "seed 4565: val acc is None, not a finite number"),
    (lambda r: r.update(commit="unknown"), "commit 'unknown' is not a commit id"),
    (lambda r: r.update(machine="CPU: Xeon on node17.example.org"),
     "machine names a host or a path (node17.example.org)"),
    (lambda r: r.update(machine="CPU: Xeon (login1:/scratch/me)"),
     "machine names a host or a path (login1:/)"),
    (lambda r: r.update(machine="GPU: A100 via me@gpuhost"),
     "machine names a host or a path (me@gpuhost)"),
    (lambda r: r.update(machine=f"CPU: Xeon on {socket.gethostname().split('.')[0]}"),
     "machine names a host or a path"),
    (lambda r: r.update(machine="gpu-node-3"), "machine 'gpu-node-3': expected 'CPU: "),
])
def test_a_wrong_record_is_refused_with_one_line_naming_the_file(tmp_path, capsys, tamper, why):
    path, record = _good_record(tmp_path)
    tamper(record)
    path.write_text(json.dumps(record))
    with pytest.raises(rec.RecordError) as err:
        rec.read_records(tmp_path / "results")
    message = str(err.value)
    assert "\n" not in message and message.startswith(str(path))
    assert (why or "holds a machine path") in message
    assert main(["check", "--into", str(tmp_path / "results")]) == 1
    assert capsys.readouterr().err == f"error: {message}\n"


QUARTERS = [0.625, 0.75, 0.875, 0.5, 0.75]  # sums exact in binary: mean 3.5 / 5


def test_a_summary_its_runs_do_not_give_is_refused_at_collect_and_at_check(tmp_path, capsys):
    """The summary is recomputed from the runs (here by hand: sum / n) wherever it is read."""
    out, into = tmp_path / "out", tmp_path / "results"
    folder = fake_cell(out, "node", "GCN", "PUBMED", PUBMED, QUARTERS)
    ours = sum(QUARTERS) / len(QUARTERS)
    data = json.loads((folder / "results.json").read_text())
    good = json.loads(json.dumps(data))
    data["summary"]["test"]["acc"]["mean"] = 0.333  # edited by hand
    (folder / "results.json").write_text(json.dumps(data))
    why = f"summary test acc mean is 0.333, but its runs give {ours!r}"
    assert rec.collect_records(out, ["node"], into, commit="abc1234", log=print) == 1
    assert capsys.readouterr().err == f"error: {folder / 'results.json'}: refused: {why}\n"
    assert not into.exists()
    (folder / "results.json").write_text(json.dumps(good))
    collect(out, into, commit="abc1234")
    path = into / "node" / "GCN_PUBMED.json"
    record = json.loads(path.read_text())
    assert record["summary"]["test"]["acc"]["mean"] == ours
    record["summary"]["test"]["acc"]["mean"] = 0.333
    path.write_text(json.dumps(record))
    assert main(["check", "--into", str(into)]) == 1
    assert capsys.readouterr().err == f"error: {path}: {why}\n"
    record["summary"]["test"]["acc"]["mean"] = ours
    record["summary"]["val"].pop("acc")
    path.write_text(json.dumps(record))
    assert main(["check", "--into", str(into)]) == 1
    assert f"summary val acc mean is None, but its runs give {ours!r}" in capsys.readouterr().err


def test_a_non_finite_metric_is_refused_at_collect_naming_its_seed(tmp_path, capsys):
    out, into = tmp_path / "out", tmp_path / "results"
    folder = fake_cell(out, "node", "GCN", "PUBMED", PUBMED, [0.86, 0.87, float("nan"), 0.86,
                                                              0.87])
    assert rec.collect_records(out, ["node"], into, commit="abc1234", log=print) == 1
    assert capsys.readouterr().err == (f"error: {folder / 'results.json'}: refused: seed 9823: "
                                       "train acc is nan, not a finite number\n")
    assert not into.exists()


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], capture_output=True, text=True, check=True).stdout.strip()


def test_the_project_s_own_commit_is_recorded_not_that_of_the_results_repository(tmp_path):
    """Results collected from inside another git repository: the record states the commit of
    the project's checkout, the code that ran."""
    project = git(ROOT, "rev-parse", "HEAD")
    git(tmp_path, "init", "-q")
    (tmp_path / "notes.txt").write_text("another project")
    git(tmp_path, "add", "notes.txt")
    git(tmp_path, "commit", "-q", "-m", "another project")
    other = git(tmp_path, "rev-parse", "HEAD")
    fake_cell(tmp_path / "out", "node", "GCN", "PUBMED", PUBMED, [0.86] * 5)
    collect(tmp_path / "out", tmp_path / "results", machine="CPU: test")
    record = json.loads((tmp_path / "results" / "node" / "GCN_PUBMED.json").read_text())
    assert record["commit"].removesuffix("+dirty") == project != other


def test_without_the_project_s_commit_nothing_is_collected(tmp_path, capsys, monkeypatch):
    out, into = tmp_path / "out", tmp_path / "results"
    fake_cell(out, "node", "GCN", "PUBMED", PUBMED, [0.86] * 5)
    outer = tmp_path / "outer"
    (outer / "project").mkdir(parents=True)
    git(outer, "init", "-q")
    argv = ["collect", "--results", str(out), "--into", str(into), "--tables", "node"]
    # an unpacked copy, alone or inside another repository: no commit of its own
    for folder in (outer / "project", tmp_path / "unpacked"):
        folder.mkdir(exist_ok=True)
        monkeypatch.setattr(rec, "PROJECT", folder)
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "cannot tell the project's commit" in err[0] \
            and "--commit" in err[0]
        assert not into.exists()
    assert main([*argv, "--commit", "HEAD~1"]) == 2
    assert "--commit 'HEAD~1': expected a commit id" in capsys.readouterr().err
    assert main([*argv, "--commit", "abc1234", "--machine", "CPU: x on node9.example.org"]) == 2
    assert "--machine names a host or a path" in capsys.readouterr().err
    assert not into.exists()
    assert main([*argv, "--commit", "abc1234", "--machine", "CPU: test"]) == 0
    assert json.loads((into / "node" / "GCN_PUBMED.json").read_text())["commit"] == "abc1234"


def test_another_cell_s_record_under_this_cell_s_name_is_refused(tmp_path):
    path, _ = _good_record(tmp_path)
    path.rename(path.with_name("SGC_PUBMED.json"))
    with pytest.raises(rec.RecordError, match="SGC_PUBMED.json: model 'GCN', but the cell "
                                              "SGC_PUBMED is SGC"):
        rec.read_records(tmp_path / "results")


def test_the_committed_records_agree_with_their_configs():
    """Each committed record: its model, dataset and #Param rebuilt from its command's config
    (``read_records`` refuses any other), every seed there, its checkpoint loadable."""
    records = rec.read_records(ROOT / "results")
    for table, cells in records.items():
        for cell_id, record in cells.items():
            suffix = "_paper_text" if record["setup"] == "paper_text" else ""
            assert cell_id == f"{record['model']}_{record['dataset']}{suffix}"
            assert len(record["runs"]) == len(record["seeds"]) <= record["seeds_protocol"]
            ckpt = ROOT / "results" / table / f"{cell_id}.pt"
            if record["dataset"] in rec.CHECKPOINT_DATASETS:
                loaded = load_checkpoint(ckpt)
                assert loaded["seed"] == record["seeds"][0]
                net = model_from_checkpoint(loaded)
                assert count_parameters(net) == record["num_params"]
                assert ckpt.stat().st_size <= rec.MAX_CHECKPOINT_BYTES


def test_a_record_is_its_cell_s_by_its_config_not_by_its_command_read_today(tmp_path):
    """GIN on PubMed ran before gin_release_forward existed: its command names the config file
    alone, which now turns the release's forward on. Read today, the command would pass as
    the published cell; the config the run resolved is the paper-text cell's, and under the
    published cell's name the record is refused, naming the key."""
    committed = json.loads((ROOT / "results/node/GIN_PUBMED_paper_text.json").read_text())
    published = next(c for c in load_table("node").cells if c.id == "GIN_PUBMED")
    today = script_config("PUBMED", committed["command"].split()[2:])
    assert difference(today, rec.cell_config("node", published), CELL_FREE) is None
    folder = tmp_path / "results" / "node"
    folder.mkdir(parents=True)
    (folder / "GIN_PUBMED_paper_text.json").write_text(json.dumps(committed))
    assert list(rec.read_records(tmp_path / "results")["node"]) == ["GIN_PUBMED_paper_text"]
    (folder / "GIN_PUBMED_paper_text.json").unlink()
    moved = {**committed, "cell": "GIN_PUBMED", "setup": "published"}
    (folder / "GIN_PUBMED.json").write_text(json.dumps(moved))
    with pytest.raises(rec.RecordError, match="GIN_PUBMED.json: its config is another "
                       "experiment's: net_params.gin_release_forward is False in the run, "
                       "True now"):
        rec.read_records(tmp_path / "results")


def test_a_split_ratio_left_to_the_default_is_that_default():
    """A run that left the split to the dataset (None) is a run of a cell that states the
    default explicitly; another ratio is not."""
    cell = next(c for c in load_table("heterophily").cells if c.id == "GCN_SQUIRREL_paper_text")
    wanted = rec.cell_config("heterophily", cell)
    assert wanted["data"]["split_ratio"] == [0.5, 0.25, 0.25]
    ran = json.loads(json.dumps(wanted))
    ran["data"]["split_ratio"] = None
    assert rec.config_problem({"config": ran}, "heterophily", cell) is None
    ran["data"]["split_ratio"] = [0.6, 0.2, 0.2]
    assert "data.split_ratio is [0.6, 0.2, 0.2] in the run" in rec.config_problem(
        {"config": ran}, "heterophily", cell)


# ------------------------------------------------------------------------------- checkpoints
class _Marker:
    """An object whose unpickling would write a file: a stand-in for arbitrary code."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_a_checkpoint_holding_a_pickled_object_is_refused_unexecuted(tmp_path):
    net = build_net("GCN", PUBMED, load_config(
        ROOT / "configs/node_classification_GCN_PUBMED.json")["net_params"])
    touched = tmp_path / "touched"
    path = tmp_path / "evil.pt"
    torch.save({"state_dict": net.state_dict(), "config": {"model": "GCN"}, "io": {},
                "extra": _Marker(str(touched))}, path)
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_checkpoint(path)
    assert not touched.exists()
    # the same file read without the weights-only guard would run the object's code
    torch.load(path, weights_only=False)
    assert touched.exists()


def test_a_zinc_cell_s_checkpoint_is_kept_and_evaluates_to_its_record(tmp_path, monkeypatch):
    """One epoch of GCN on a tiny ZINC copy, run as the sweep runs a cell (here a GCN_ZINC cell
    of one epoch: a record is a run of its cell's config); its record and its pretrained
    checkpoint, which ``evaluate_checkpoint.py`` scores as the run did, and the figure that
    evaluation gives on a test split added later."""
    from tests.data_writers import write_tiny_zinc

    def one_epoch(names):
        tables = load_tables(names)
        for cell in (c for t in tables for c in t.cells if c.id == "GCN_ZINC"):
            cell.overrides = {**cell.overrides, "epochs": 1}
        return tables

    monkeypatch.setattr(rec, "load_tables", one_epoch)

    data = tmp_path / "zinc"
    write_tiny_zinc(data, {"train": 8, "val": 4})
    out = tmp_path / "out" / "graph" / "GCN_ZINC"
    cmd = [sys.executable, "main_molecules_graph_regression.py", "--config",
           "configs/molecules_graph_regression_GCN_ZINC.json", "--runs", "1", "--out_dir",
           str(out), "--data_dir", str(data), "--use_gpu", "False", "--epochs", "1"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    into = tmp_path / "results"
    lines = collect(tmp_path / "out", into, tables=("graph",))
    assert len(lines) == 1 and lines[0].startswith("graph/GCN_ZINC: written (1/5 seeds, "
                                                   "checkpoint 0.")
    record = json.loads((into / "graph" / "GCN_ZINC.json").read_text())
    assert record["command"].endswith("--data_dir DIR --use_gpu False --epochs 1")
    ckpt = into / "graph" / "GCN_ZINC.pt"
    assert str(tmp_path).encode() not in ckpt.read_bytes()
    assert ckpt.stat().st_size < 1_000_000
    shown = subprocess.run([sys.executable, "evaluate_checkpoint.py", str(ckpt), "--data_dir",
                            str(data)], cwd=ROOT, env=env, check=True, capture_output=True,
                           text=True, timeout=300).stdout
    metrics = json.loads(shown[shown.index("{"):])["metrics"]
    assert metrics["val"]["mae"] == pytest.approx(record["runs"][0]["final"]["val"]["mae"],
                                                  rel=1e-5)
    assert record["summary"]["val"]["mae"]["n"] == 1
    assert metrics["test"] is None and record["runs"][0]["final"]["test"] is None

    # the data gains a test split: the checkpoint's evaluation on it becomes the seed's test
    # figure, named in the record with its command and commit
    write_tiny_zinc(data, {"test": 4}, seed=1)
    command = ["evaluate_checkpoint.py", "results/graph/GCN_ZINC.pt", "--data_dir", str(data)]
    shown = subprocess.run([sys.executable, str(ROOT / command[0]), *command[1:]], cwd=tmp_path,
                           env=env, check=True, capture_output=True, text=True,
                           timeout=300).stdout
    test_mae = json.loads(shown[shown.index("{"):])["metrics"]["test"]["mae"]
    path = into / "graph" / "GCN_ZINC.json"
    evaluated = rec.with_evaluation(record, SEEDS[0], "test", {"mae": test_mae}, command,
                                    "abc1234")
    path.write_text(json.dumps(evaluated))
    assert rec.read_records(into)["graph"]["GCN_ZINC"]["summary"]["test"]["mae"] == {
        "mean": test_mae, "std": 0.0, "n": 1}
    assert evaluated["evaluations"] == [{
        "seed": SEEDS[0], "split": "test", "command": "python evaluate_checkpoint.py "
        "results/graph/GCN_ZINC.pt --data_dir DIR", "commit": "abc1234",
        "metrics": {"mae": test_mae}}]
    section, figure = report.build(into)
    row = next(line for line in section.splitlines() if line.startswith("| GCN | ZINC"))
    assert f"{test_mae:.3f}"[1:] in row and "†" not in row and "ZINC" in figure
    assert "Evaluated after the run: the test figure of the first seed" in section
    assert "`evaluations` names the command and commit), of ZINC: GCN." in section

    def refused(edit, why: str) -> None:
        changed = json.loads(json.dumps(evaluated))
        edit(changed)
        path.write_text(json.dumps(changed))
        with pytest.raises(rec.RecordError, match=why):
            rec.read_records(into)

    refused(lambda r: r["evaluations"][0]["metrics"].update(mae=0.1),
            "evaluations\\[0\\]: seed 4565 test is .* in its run, .*0.1.* in the evaluation")
    refused(lambda r: r["evaluations"][0].update(command="python evaluate_checkpoint.py "
                                                         "results/graph/GIN_ZINC.pt"),
            "its command is not python evaluate_checkpoint.py GCN_ZINC.pt")
    refused(lambda r: r["evaluations"][0].update(commit="today"), "commit 'today' is not")
    refused(lambda r: r["evaluations"][0].update(split="valid"), "with a split 'valid'")

    def other_seed(r: dict) -> None:
        r["seeds"], r["runs"][0]["seed"], r["evaluations"][0]["seed"] = [7432], 7432, 7432
    refused(other_seed, "its checkpoint is seed 4565's, its evaluation says seed 7432")


# ------------------------------------------------------------------------------- report
def _report_records(tmp_path: Path) -> Path:
    """Records whose marks are known: GCN .001 above the paper's mean (within 1σ), SGC 1.5 published
    stds off (within 2σ), MLP far off, one SBM_PATTERN seed against a published std of 0
    (not comparable) and one ZINC seed on the validation split."""
    out = tmp_path / "out"
    fake_cell(out, "node", "GCN", "PUBMED", PUBMED, [0.861, 0.873, 0.867, 0.867, 0.867])
    fake_cell(out, "node", "SGC", "PUBMED", PUBMED, [0.872] * 5)  # paper .866 ± .004
    fake_cell(out, "node", "MLP", "PUBMED", PUBMED, [0.9] * 5)  # paper .493 ± .164
    fake_cell(out, "node", "GCN", "SBM_PATTERN", PATTERN, [0.85])  # paper .855 ± .000
    fake_cell(out, "graph", "GCN", "ZINC", ZINC, [0.40], split="val", metric="mae")
    into = tmp_path / "results"
    collect(out, into, tables=("node", "graph"))
    return into


def test_the_report_marks_each_cell_and_counts_them(tmp_path):
    section, data = report.build(_report_records(tmp_path))
    assert section.startswith(report.BEGIN) and section.endswith(report.END + "\n")
    rows = _rows(section)  # the node table has GIN in two setups: a Setup column
    ours = {key[:2]: row for key, row in rows.items() if key[2:] in ((), ("published",))}
    assert ours["GCN", "PUBMED"] == [".867 ± .004", "5", ".866 ± .005", "+0.2", "within 1σ",
                                     "8,105"]
    assert ours["SGC", "PUBMED"][:5] == [".872 ± .000", "5", ".866 ± .004", "+1.5", "within 2σ"]
    assert ours["MLP", "PUBMED"][4] == "outside 2σ"
    assert ours["GCN", "SBM_PATTERN"][:5] == [".850 ± .000", "1 of 5", ".855 ± .000", "", "n/c"]
    # ZINC: our validation MAE (†) against the paper's test MAE .314 ± .009
    assert ours["GCN", "ZINC"][:5] == [".400 ± .000†", "1 of 5", ".314 ± .009", "+9.6",
                                       "outside 2σ†"]
    # every cell of a table without a record is not run (node: DSGCN not implemented among
    # them); a table with two setups has a counts line for each, the published one first
    cells = {t: {s: sum(c.setup == s for c in load_table(t).cells)
                 for s in ("published", "paper_text")} for t in ("node", "heterophily", "graph")}
    node = ("Published setup: **Cells measured 4: within one std 1, within two 1, outside 1, not "
            f"comparable 1; not run {cells['node']['published'] - 4} (1 not implemented).**")
    node_text = ("Paper-text setup: **Cells measured 0: within one std 0, within two 0, outside "
                 f"0; not run {cells['node']['paper_text']}.**")
    assert node in section and node_text in section
    assert section.index(node) < section.index(node_text)
    assert ("Published setup: **Cells measured 1: within one std 0, within two 0, outside 1; "
            f"not run {cells['graph']['published'] - 1}.** († 1 of them") in section
    for table in ("heterophily", "graph"):
        for setup, label in (("published", "Published"), ("paper_text", "Paper-text")):
            if table == "heterophily" or setup == "paper_text":
                assert (f"{label} setup: **Cells measured 0: within one std 0, within two 0, "
                        f"outside 0; not run {cells[table][setup]}.**") in section
    # the split and edges of each dataset and setup (once where the setups share them: PubMed's
    # two GIN forwards), the seeds, the std's ddof, the machine
    assert ("SQUIRREL (published): random 60/20/20 split per seed, the stored, directed edge "
            "list; SQUIRREL (paper text): random 50/25/25 split per seed, symmetrised "
            "edges") in section
    assert "Split and edges: PUBMED: random 60/20/20 split per seed, symmetrised edges; " \
        in section
    assert "- Seeds: 4565, 7432, 9823, 2113, 5812 (a cell with n < 5 ran the first n); ours is "\
           "their mean ± std with ddof 0." in section
    assert "- Machine: CPU: " in section
    # the figure shows test figures only: ZINC's validation figure is not plotted
    assert sorted(data) == ["PUBMED", "SBM_PATTERN"]
    assert {p["model"]: (p["paper"], p["ours"], p["n"]) for p in data["PUBMED"]} == {
        "GCN": (0.866, 0.867, 5), "SGC": (0.866, 0.872, 5), "MLP": (0.493, 0.9, 5)}


def _rows(section: str) -> dict[tuple[str, ...], list[str]]:
    """(model, dataset[, setup]) -> [ours, n, paper, Δ/σ, mark, #Param] of a report's rows."""
    rows = {}
    for line in section.splitlines():
        parts = [p.strip() for p in line.strip("|").split("|")]
        if len(parts) in (9, 10) and parts[0] != "Model" and not parts[0].startswith("---"):
            rows[tuple(parts[:len(parts) - 7])] = parts[-7:-1]
    return rows


@pytest.mark.parametrize("machines, lines", [
    ({"CPU: X, 2 threads; two to three runs at a time, shared": ["MLP", "GCN"],
      "CPU: X, 2 threads; three to five runs at a time, shared": ["SGC"]},
     ["- Machine: CPU: X, 2 threads; two to three / three to five runs at a time, shared (by "
      "cell; each record states its own)."]),
    ({"CPU: X, 2 threads": ["MLP"], "CPU: X, 2 threads, shared": ["GCN"]},
     ["- Machine: CPU: X, 2 threads / 2 threads, shared (by cell; each record states its own)."]),
    # no shared leading clause: one item per machine, naming its cells (a cell continued from
    # a GPU on a CPU names both in one machine string)
    ({"CPU: X; two runs at a time": ["MLP", "GCN", "MLP"],
      "GPU: H200 for the seeds each run names; CPU: X; two runs at a time": ["ChebNet"]},
     ["- Machine, by cell (each record states its own):",
      "  - MLP, GCN: CPU: X; two runs at a time.",
      "  - ChebNet: GPU: H200 for the seeds each run names; CPU: X; two runs at a time."]),
    ({"CPU: X": ["GIN"], "CPU: X, shared": ["GAT"]},
     ["- Machine, by cell (each record states its own):", "  - GIN: CPU: X.",
      "  - GAT: CPU: X, shared."]),
    ({"GPU: H200": ["GIN", "GAT"]}, ["- Machine: GPU: H200."])])
def test_a_table_s_machines_are_named_once_with_what_differs_between_its_records(machines, lines):
    assert report.machine_lines(machines) == lines


def test_a_cell_measured_in_both_setups_has_a_row_and_a_counts_line_for_each(tmp_path):
    out, into = tmp_path / "out", tmp_path / "results"
    fake_cell(out, "node", "GIN", "PUBMED", PUBMED, [0.871] * 5)
    fake_cell(out, "node", "GIN", "PUBMED", PUBMED, [0.885] * 5, cell="GIN_PUBMED_paper_text")
    collect(out, into)
    records = rec.read_records(into)["node"]
    assert {k: r["setup"] for k, r in records.items()} == {
        "GIN_PUBMED": "published", "GIN_PUBMED_paper_text": "paper_text"}
    assert records["GIN_PUBMED"]["config"]["net_params"]["gin_release_forward"] is True
    assert records["GIN_PUBMED_paper_text"]["config"]["net_params"]["gin_release_forward"] \
        is False
    section, _ = report.build(into)
    rows = _rows(section)
    assert list(rows) == [("GIN", "PUBMED", "published"), ("GIN", "PUBMED", "paper text")]
    assert [r[0] for r in rows.values()] == [".871 ± .000", ".885 ± .000"]
    published = section.index("Published setup: **Cells measured 1: within one std 1")
    paper_text = section.index("Paper-text setup: **Cells measured 1: within one std 0, within "
                               "two 0, outside 1")
    assert published < paper_text


def test_the_report_command_rewrites_only_its_section_and_the_figure(tmp_path):
    into = _report_records(tmp_path)
    doc = tmp_path / "results.md"
    doc.write_text(f"# Results\n\nbefore\n\n{report.BEGIN}\nold\n{report.END}\n\nafter\n")
    figure = tmp_path / "fig" / "reproduction.png"
    args = ["--records", str(into), "--doc", str(doc), "--figure", str(figure)]
    assert main(["render", *args, "--check"]) == 1
    assert main(["check", *args]) == 1
    assert main(["render", *args]) == 0
    section, data = report.build(into)
    assert doc.read_text() == f"# Results\n\nbefore\n\n{section}\nafter\n"
    assert figures.figure_text(figure) == data
    assert main(["render", *args, "--check"]) == 0
    assert main(["check", *args]) == 0


def test_the_committed_report_and_figure_are_those_of_the_committed_records():
    section, data = report.build(ROOT / "results")
    text = report.DOC.read_text()
    assert report.replace_section(text, section, report.DOC) == text, \
        "docs/results.md: run python -m scripts.report render"
    assert figures.figure_text(report.FIGURE) == data, \
        "docs/figures/reproduction.png: run python -m scripts.report render"



# ------------------------------------------------------------------------------- the command
@pytest.mark.parametrize("old, new", [("make_tables", "tables"), ("records", "collect|check"),
                                      ("reproduction_report", "render"), ("plot_depth", "depth")])
def test_an_old_results_command_says_in_one_line_what_replaces_it(old, new):
    for how in (["-m", f"scripts.{old}", "--help"], [str(ROOT / "scripts" / f"{old}.py")]):
        done = subprocess.run([sys.executable, *how], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.startswith(f"error: scripts.{old} is now: python -m scripts.report "
                                      f"{new} (the same options")
        assert len(done.stderr.splitlines()) == 1


def test_the_report_command_guards_the_committed_numbers(capsys):
    """``python -m scripts.report check`` as a user runs it: every committed record follows from
    its runs and config, and docs/results.md and its figure are what the records give."""
    done = subprocess.run([sys.executable, "-m", "scripts.report", "check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    n = len(list((ROOT / "results").glob("*/*.json")))
    assert done.stdout == f"{n} records, each consistent with its runs and its config\n"
    assert main(["check", "--", "--epochs", "2"]) == 2
    assert "after -- are for the tables subcommand" in capsys.readouterr().err


def test_a_committed_checkpoint_evaluates_to_its_records_test_figure(real_data):
    """The committed ZINC checkpoints were written by an older version (their configs list
    every key at that version's defaults): they still load, and give the test figure their
    record states."""
    import evaluate_checkpoint

    zinc = real_data("zinc", "train.pickle", "val.pickle", "test.pickle")
    record = json.loads((ROOT / "results" / "graph" / "GCN_ZINC.json").read_text())
    out = evaluate_checkpoint.evaluate_checkpoint(str(ROOT / "results" / "graph" / "GCN_ZINC.pt"),
                                                  {"data_dir": str(zinc)})
    first = next(r for r in record["runs"] if r["seed"] == out["seed"])
    assert out["metrics"]["test"]["mae"] == pytest.approx(first["final"]["test"]["mae"], abs=1e-5)

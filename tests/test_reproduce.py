"""The reproduction tooling: sweep cells and resuming, tables, plots."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters
from scripts import scheduler, sweep
from scripts.report.__main__ import main as report
from scripts.report.cells import load_published
from scripts.report.figures import depth_results, plot_depth
from scripts.report.tables import make_tables
from tests.helpers import run_in_own_group
from train.config import apply_overrides, load_config
from train.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent

MODELS = ["MLP", "GIN", "GraphSage", "GAT", "MoNet", "ChebNet", "GCN", "SGC", "APGCN", "AUTOGCN"]
ABLATION = ["full", "wo_low", "wo_high", "wo_middle", "wo_over", "wo_par", "wo_gate"]
EXPECTED_IDS = {
    "node": {f"{m}_{d}" for m in MODELS for d in ("PUBMED", "SBM_PATTERN", "SBM_CLUSTER")}
    | {"DSGCN_PUBMED", "GIN_PUBMED_paper_text"},  # GIN's fixed forward beside the release's
    # Squirrel on the published setup and, beside each cell, the paper-text setup
    "heterophily": {f"{m}_{d}" for m in MODELS for d in ("ARXIV_YEAR", "YELPCHI", "SQUIRREL")}
    | {f"{m}_SQUIRREL_paper_text" for m in MODELS},
    "graph": {f"{m}_{d}" for m in MODELS for d in ("ZINC", "MNIST", "CIFAR10")}
    | {"GIN_ZINC_paper_text"},  # benchmarking-gnns' GIN layer beside the release's
    "ablation": {f"{v}_{d}" for v in ABLATION for d in ("SBM_CLUSTER", "ZINC")},
    "depth": {f"{m}_{d}_L{n:02d}" for m in ("AUTOGCN", "GCN") for d in ("SBM_CLUSTER", "ZINC")
              for n in range(2, 17, 2)},
}


def dry_run(capsys, *args: str) -> tuple[int, list[list[str]], str]:
    """Run ``sweep.main`` with --dry-run; the printed commands (split) and the whole output."""
    args = list(args)
    cut = args.index("--") if "--" in args else len(args)
    code = sweep.main([*args[:cut], "--dry-run", *args[cut:]])
    out = capsys.readouterr().out
    cmds = [line.split("  > ")[0].split() for line in out.splitlines()
            if line and not line.startswith("#")]
    return code, cmds, out


def option(cmd: list[str], name: str) -> str | None:
    """The last value of ``--name`` in a command."""
    values = [cmd[i + 1] for i, a in enumerate(cmd[:-1]) if a == f"--{name}"]
    return values[-1] if values else None


# --------------------------------------------------------------------------- sweep cells
@pytest.mark.parametrize("table", sweep.TABLES)
def test_tables_list_the_expected_cells(table, capsys, tmp_path):
    t = sweep.load_table(table)
    assert {c.id for c in t.cells} == EXPECTED_IDS[table]
    runnable = [c for c in t.cells if not c.not_implemented]
    for c in runnable:  # every cell points at a real script and config of the right dataset
        assert (ROOT / c.script).is_file(), c.script
        cfg = load_config(ROOT / c.config)
        assert cfg["dataset"] == c.dataset and cfg["model"] == c.model, c.id
        assert c.row in t.rows and c.column in {col["name"] for col in t.columns}, c.id
    code, cmds, out = dry_run(capsys, table, "--out_root", str(tmp_path))
    assert code == 0
    assert len(cmds) == len(runnable)
    by_id = {c.id: c for c in runnable}
    for cmd in cmds:
        cell = by_id[Path(option(cmd, "out_dir")).name]
        assert option(cmd, "out_dir") == str(tmp_path / table / cell.id)
        assert cmd[1] == cell.script and option(cmd, "config") == cell.config
        assert option(cmd, "runs") == "5" and option(cmd, "use_gpu") == "False"
        for key, value in cell.overrides.items():
            assert option(cmd, key) == str(value)
    if table == "node":
        assert "DSGCN_PUBMED: not implemented" in out


def test_ablation_and_depth_overrides(capsys, tmp_path):
    _, cmds, _ = dry_run(capsys, "ablation", "--out_root", str(tmp_path))
    cmds = {Path(option(c, "out_dir")).name: c for c in cmds}
    assert len(cmds) == 14
    expected = {"wo_low": ("filters", "mid,high"), "wo_high": ("filters", "low,mid"),
                "wo_middle": ("filters", "low,high"), "wo_over": ("opt", "single"),
                "wo_par": ("opt", "fix"), "wo_gate": ("gate", "none")}
    for dataset in ("SBM_CLUSTER", "ZINC"):
        assert option(cmds[f"full_{dataset}"], "filters") is None
        for variant, (key, value) in expected.items():
            cmd = cmds[f"{variant}_{dataset}"]
            assert option(cmd, key) == value
            widened = key == "filters"
            assert (option(cmd, "hidden_dim") is not None) == widened
    _, cmds, _ = dry_run(capsys, "depth", "--out_root", str(tmp_path))
    assert len(cmds) == 32
    for cmd in cmds:
        name = Path(option(cmd, "out_dir")).name
        assert option(cmd, "L") == str(int(name[-2:]))
        assert option(cmd, "hidden_dim") is None  # hidden size stays the config's


@pytest.mark.parametrize("dataset,io", [
    ("SBM_CLUSTER", NetIO("node", "embedding", 7, 6)),
    ("ZINC", NetIO("graph", "embedding", 28, 1)),
])
def test_ablation_hidden_size_keeps_the_parameter_count(dataset, io):
    table = sweep.load_table("ablation")
    cells = {c.id: c for c in table.cells}
    cfg = load_config(ROOT / cells[f"full_{dataset}"].config)
    full = count_parameters(build_net("AUTOGCN", io, cfg["net_params"]))
    assert full == {"SBM_CLUSTER": 202819, "ZINC": 204594}[dataset]  # published #Param
    K, L = cfg["net_params"]["K"], cfg["net_params"]["L"]
    for variant in ("wo_low", "wo_high", "wo_middle"):
        cell = cells[f"{variant}_{dataset}"]
        hidden = cell.overrides["hidden_dim"]

        def count(h: int, cell=cell) -> int:
            over = {"filters": cell.overrides["filters"], "hidden_dim": str(h)}
            return count_parameters(build_net("AUTOGCN", io,
                                              apply_overrides(cfg, over)["net_params"]))

        # the layer formula nF·in·out + nF·K + out + 2·out (two filters) gives the same count
        layers = L * (2 * hidden * hidden + 2 * K + 3 * hidden)
        net = build_net("AUTOGCN", io, apply_overrides(
            cfg, {"filters": cell.overrides["filters"], "hidden_dim": str(hidden)})["net_params"])
        assert sum(p.numel() for p in net.stack.parameters()) == layers
        best = min(range(hidden - 3, hidden + 4), key=lambda h: abs(count(h) - full))
        assert best == hidden
        assert abs(count(hidden) - full) / full < 0.01


def test_sweep_options(capsys, tmp_path):
    _, cmds, _ = dry_run(capsys, "graph", "--out_root", str(tmp_path), "--gpus", "0,1",
                         "--only", "AUTOGCN,SGC_ZINC", "--data_root", "/data",
                         "--data_dir", "ZINC=elsewhere/zinc", "--",
                         "--epochs", "2", "--max_graphs", "100")
    names = sorted(Path(option(c, "out_dir")).name for c in cmds)
    assert names == ["AUTOGCN_CIFAR10", "AUTOGCN_MNIST", "AUTOGCN_ZINC", "SGC_ZINC"]
    assert sorted(c[0] for c in cmds) == ["CUDA_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES=0",
                                         "CUDA_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=1"]
    for cmd in cmds:  # each cell sees only its GPU, as device 0
        assert option(cmd, "gpu_id") == "0" and option(cmd, "use_gpu") is None
        assert cmd[-4:] == ["--epochs", "2", "--max_graphs", "100"]  # extra args come last
        dataset = Path(option(cmd, "out_dir")).name.split("_", 1)[1]
        expected = "elsewhere/zinc" if dataset == "ZINC" else f"/data/{dataset}"
        assert option(cmd, "data_dir") == expected
        if dataset != "ZINC":
            assert option(cmd, "cache_dir") == "/data/cache"
    assert sweep.main(["ablation", "--list", "--out_root", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 14 and lines[3].split()[:3] == ["3", "wo_middle_SBM_CLUSTER", "missing"]
    _, cmds, _ = dry_run(capsys, "ablation", "--cell", "3", "--out_root", str(tmp_path))
    assert len(cmds) == 1 and option(cmds[0], "filters") == "low,high"
    assert sweep.main(["ablation", "--cell", "99", "--dry-run"]) == 2
    assert sweep.main(["nosuchtable", "--dry-run"]) == 2


def test_gpu_list_is_validated_and_mapped_through_visible_devices():
    assert scheduler.parse_gpus("0,1", {}) == ["0", "1"]
    assert scheduler.parse_gpus("1, 0", {"CUDA_VISIBLE_DEVICES": "3,5"}) == ["5", "3"]
    for bad, env in (("a", {}), ("0,0", {}), ("-1", {}), (",", {}),
                     ("2", {"CUDA_VISIBLE_DEVICES": "3,5"})):
        with pytest.raises(UsageError):
            scheduler.parse_gpus(bad, env)
    assert sweep.main(["graph", "--gpus", "0,x", "--dry-run"]) == 2


def test_cells_run_pinned_to_their_gpu_with_their_share_of_the_cores(tmp_path, monkeypatch):
    probe = ("import os; print('pinned', os.environ.get('CUDA_VISIBLE_DEVICES'), "
             "os.environ['OMP_NUM_THREADS'])")
    cells = [sweep.Cell(id=f"c{i}", row="r", column="c", dataset="ZINC") for i in range(4)]
    jobs = [(c, tmp_path / c.id, "missing") for c in cells]
    env = {**sweep.os.environ, "OMP_NUM_THREADS": "3"}
    monkeypatch.setattr(sweep, "cell_request", lambda cell, cmd: (None, []))  # not main scripts
    codes = sweep.run_cells(jobs, lambda cell, device: [sys.executable, "-c", probe],
                            ["4", "6"], env)
    assert codes == {c.id: 0 for c in cells}
    seen = {(tmp_path / c.id / "stdout.log").read_text().split("pinned ")[1].split()[0]
            for c in cells}
    assert seen == {"4", "6"}  # every cell ran on one of the two GPUs, and only that one


# --------------------------------------------------------------------------- resuming
AUTO = ["<the cell's>"]  # fabricate: record the command line the sweep gives the cell


def table_cell(folder: Path) -> sweep.Cell | None:
    """The cell of ``<out_root>/<table>/<cell id>``, if the folder is one."""
    try:
        table = sweep.load_table(folder.parent.name)
    except sweep.SweepError:
        return None
    return next((c for c in table.cells if c.id == folder.name), None)


def fabricate(folder: Path, *, status: str = "complete", runs: int = 5, metric: str = "acc",
              values: list[float] | None = None, splits=("train", "val", "test"),
              command: list[str] | None = AUTO, params: int = 1000, started: str = "2025-01-01",
              s_per_epoch: float = 2.0, name: str = "run", model: str | None = None,
              dataset: str | None = None, device: str = "cpu") -> Path:
    """A results.json in the runner's format under ``folder/name``: by default the result of
    the cell the folder belongs to (its model, dataset and command line)."""
    from train.runner import release_seeds

    cell = table_cell(folder)
    values = values or [0.5 + 0.01 * i for i in range(runs)]
    seeds = release_seeds(runs)
    run_list = [{
        "seed": seeds[i], "epochs": 10, "best_epoch": 5, "stop_reason": "epochs",
        "s_per_epoch": s_per_epoch, "total_time_s": 10 * s_per_epoch, "checkpoint": "x.pt",
        "final": {s: ({metric: values[i]} if s in splits else None)
                  for s in ("train", "val", "test")},
        "peak_memory_mb": {"process_max_rss_mb": 1.0},
    } for i in range(runs)]
    data = {"status": status, "model": model or (cell.model if cell else "M"),
            "dataset": dataset or (cell.dataset if cell else "D"), "num_params": params,
            "seeds": seeds, "primary_metric": metric, "runs": run_list,
            "summary": {}, "started": started, "config": {}, "device": device}
    if command is AUTO and cell is not None:
        command = sweep.build_command(cell, folder.parent.name, str(folder.parent.parent))[1:]
    if command is not None and command is not AUTO:
        data["command"] = command
        if cell is not None:  # the resolved config, as the runner records it
            data["config"] = sweep.script_config(cell.dataset, command[1:])
            data["config"].update(model=data["model"], dataset=data["dataset"])
    path = folder / name / "results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def planned_command(table: str, cell_id: str, out_root: Path, extra=()) -> list[str]:
    cell = next(c for c in sweep.load_table(table).cells if c.id == cell_id)
    return sweep.build_command(cell, table, str(out_root), extra=list(extra))


def test_complete_cells_are_skipped_partial_and_stale_ones_rerun(capsys, tmp_path):
    cell_id = "wo_gate_ZINC"
    folder = tmp_path / "ablation" / cell_id
    cmd = planned_command("ablation", cell_id, tmp_path)
    recorded = cmd[1:]  # sys.argv as the runner records it (script first)

    def state() -> str:
        _, _, out = dry_run(capsys, "ablation", "--only", cell_id, "--out_root", str(tmp_path))
        return next(line for line in out.splitlines() if cell_id in line)

    assert state().endswith("missing")
    fabricate(folder, runs=3, command=recorded, name="a")
    assert state().endswith("partial")  # fewer than 5 runs: run again
    fabricate(folder, runs=5, command=recorded, name="b", started="2025-01-02")
    assert state().endswith("complete -> skip")
    _, cmds, _ = dry_run(capsys, "ablation", "--only", cell_id, "--out_root", str(tmp_path),
                         "--force")
    assert len(cmds) == 1  # --force reruns it
    # the same cell asked with other arguments (e.g. after a smoke run) is not complete
    _, cmds, out = dry_run(capsys, "ablation", "--only", cell_id, "--out_root",
                           str(tmp_path), "--", "--epochs", "2")
    assert "stale" in out and len(cmds) == 1
    # device and path options do not matter; a newer running folder does not hide it
    fabricate(folder, status="running", runs=1, command=recorded, name="c", started="2025-02")
    cell = table_cell(folder)
    assert sweep.cell_results(folder, planned_command("ablation", cell_id, tmp_path)[:-2]
                              + ["--gpu_id", "1"], cell).state == "complete"
    # nor does compiling, which changes how a result is computed, not what
    assert sweep.cell_results(folder, planned_command("ablation", cell_id, tmp_path)
                              + ["--compile", "off"], cell).state == "complete"
    (folder / "d").mkdir()
    (folder / "d" / "results.json").write_text("{not json")  # never fatal
    assert state().endswith("complete -> skip")


def test_one_tiny_cell_end_to_end_then_skipped_and_plotted(capsys, tmp_path):
    extra = ["--epochs", "1", "--max_graphs", "4", "--L", "2", "--hidden_dim", "8"]
    args = ["ablation", "--only", "wo_low_SBM", "--out_root", str(tmp_path / "out"),
            "--data_root", str(tmp_path / "data"), "--runs", "1", "--", *extra]
    assert sweep.main(args) == 0
    folder = tmp_path / "out" / "ablation" / "wo_low_SBM_CLUSTER"
    assert "final test acc" in (folder / "stdout.log").read_text()
    (result,) = folder.glob("*/results.json")
    data = json.loads(result.read_text())
    assert data["status"] == "complete" and len(data["runs"]) == 1
    assert data["config"]["net_params"]["filters"] == ["mid", "high"]
    capsys.readouterr()
    assert sweep.main(args) == 0
    assert "nothing to run" in capsys.readouterr().out
    # the learned filters of the run's checkpoint, headless
    from scripts import learned_filters

    (ckpt,) = result.parent.glob("checkpoints/*.pt")
    png = learned_filters.plot_filters(ckpt, tmp_path / "filters.png")
    assert png.stat().st_size > 5000 and png.read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- tables
def first_table(markdown: str) -> dict[str, list[str]]:
    """The rows of the first markdown table, keyed by their first cell, split into cells."""
    rows: dict[str, list[str]] = {}
    for line in markdown.splitlines():
        if line.startswith("| "):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            rows[cells[0]] = cells
        elif rows:
            break
    return rows


def test_make_tables_layout_values_marks_and_malformed_json(tmp_path, capsys):
    root = tmp_path / "results"
    node = root / "node"
    # complete, 5 runs: mean .741, std (ddof 0) .001414 -> ".741±.001"
    fabricate(node / "AUTOGCN_SBM_CLUSTER", values=[0.739, 0.740, 0.741, 0.742, 0.743],
              params=202819, s_per_epoch=30.0)
    # an older complete and a newer running folder: the complete one is used
    fabricate(node / "GCN_SBM_CLUSTER", values=[0.6] * 5, params=199015, name="old",
              started="2025-01-01", s_per_epoch=15.0)
    fabricate(node / "GCN_SBM_CLUSTER", status="running", runs=1, values=[0.1], name="new",
              started="2025-03-01")
    fabricate(node / "GIN_SBM_CLUSTER", runs=3, values=[0.66, 0.67, 0.68], params=207412)
    fabricate(node / "GAT_PUBMED", status="interrupted", runs=2, values=[0.85, 0.86])
    fabricate(node / "SGC_PUBMED", status="failed", runs=0)
    bad = node / "MoNet_PUBMED" / "x" / "results.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"status": "complete", "runs": [')  # truncated JSON
    (node / "ChebNet_PUBMED" / "y").mkdir(parents=True)
    (node / "ChebNet_PUBMED" / "y" / "results.json").write_text("[1, 2]")  # not a result
    # ablation in %, ZINC without a test split (validation, marked)
    fabricate(root / "ablation" / "full_SBM_CLUSTER", values=[0.741] * 5)
    fabricate(root / "ablation" / "full_ZINC", metric="mae", values=[0.25] * 5,
              splits=("train", "val"))
    (root / "graph").mkdir()  # an empty table folder
    out = tmp_path / "tables"
    text = make_tables(root, out, ["node", "ablation", "graph", "depth"])
    err = capsys.readouterr().err
    assert "MoNet_PUBMED" in err and "ChebNet_PUBMED" in err  # reported, skipped

    rows = first_table((out / "node.md").read_text())
    header = rows["Model"]
    col = header.index("SBM_CLUSTER")
    auto = rows["AutoGCN"]
    assert auto[col] == ".741±.001 (202819)"
    assert auto[col + 1] == ".741±.002 (202819)" and auto[col + 2] == "+.000"
    assert rows["GCN"][col] == ".600±.000 (199015)"  # the complete folder, not the newer one
    assert rows["GCN"][col + 2] == "-.045"
    assert rows["GIN"][col] == ".670±.008 (207412) *partial 3/5*"
    assert rows["MLP"][col] == "—"
    pub = header.index("PUBMED")
    assert rows["GAT"][pub] == ".855±.005 (1000) *interrupted 2/5*"
    assert rows["SGC"][pub] == "*failed*"
    assert rows["MoNet"][pub] == "—" and rows["DSGCN"][pub] == "n/i"
    assert rows["DSGCN"][pub + 1] == ".853±.007 (9080)"
    assert "| AutoGCN/GCN | " in text and "2.00 (paper 1.38)" in text  # s/epoch ratio

    abl = (out / "ablation.md").read_text()
    assert "| AutoGCN | 74.100±0.000 (1000) | 74.104±0.151 | -0.004 | 0.250±0.000† (1000) " \
           "| 0.225±0.009 | +0.025 |" in abl
    assert "† validation split" in abl
    assert (out / "depth.md").is_file() and "L=16" in (out / "depth.md").read_text()
    assert (out / "tables.md").read_text().count("### ") == 4

    records = list(csv.DictReader(io.StringIO((out / "node.csv").read_text())))
    rec = next(r for r in records if r["cell_id"] == "AUTOGCN_SBM_CLUSTER")
    assert rec["status"] == "ok" and float(rec["mean"]) == pytest.approx(0.741)
    assert float(rec["paper_mean"]) == 0.741 and float(rec["diff"]) == pytest.approx(0.0)
    assert float(rec["s_per_epoch"]) == 30.0
    states = {r["cell_id"]: r["status"] for r in records}
    assert states["GIN_SBM_CLUSTER"] == "partial" and states["MLP_PUBMED"] == "missing"
    assert states["DSGCN_PUBMED"] == "not implemented"
    # the command line prints the same markdown and survives a missing results folder
    assert report(["tables", "--results", str(tmp_path / "none"), "--out",
                   str(tmp_path / "t2"), "--tables", "graph"]) == 0
    assert "### Graph prediction" in capsys.readouterr().out


def test_published_numbers_cover_every_table_cell():
    published = load_published()
    for table in ("node", "heterophily", "graph", "ablation"):
        t = sweep.load_table(table)
        for cell in t.cells:
            entry = published[table][cell.row][cell.column]
            assert entry == "OOM" or {"mean", "std"} <= set(entry), (table, cell.id)
    assert published["node"]["AutoGCN"]["SBM_CLUSTER"] == {"mean": 0.741, "std": 0.002,
                                                          "params": 202819}
    assert published["heterophily"]["GAT"]["YELPCHI"] == "OOM"
    assert published["ablation"]["w/o middle"]["SBM_CLUSTER"]["mean"] == 71.924
    assert published["s_per_epoch"]["GCN"]["CIFAR10"] == 57.07


def test_plot_depth_on_fabricated_results(tmp_path):
    for model, dataset, metric, base in (("AUTOGCN", "SBM_CLUSTER", "acc", 0.7),
                                         ("GCN", "SBM_CLUSTER", "acc", 0.6),
                                         ("AUTOGCN", "ZINC", "mae", 0.3)):
        for depth in (2, 4, 8):
            runs = 5 if depth < 8 else 2
            fabricate(tmp_path / "depth" / f"{model}_{dataset}_L{depth:02d}", metric=metric,
                      runs=runs, values=[base + 0.01 * depth + 0.001 * i for i in range(runs)])
    data = depth_results(tmp_path)
    points = data["SBM_CLUSTER"]["AUTOGCN"]
    assert [d for d, _ in points] == list(range(2, 17, 2))
    assert points[0][1].mean == pytest.approx(0.722) and points[3][1].state == "partial"
    png = plot_depth(tmp_path / "depth", tmp_path / "depth.png")
    assert png.stat().st_size > 5000 and png.read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- reproduce.sh
def reproduce_sh(*args: str, env: dict[str, str] | None = None,
                 cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``scripts/reproduce.sh ARGS`` with this Python (the script's ``PYTHON``: the suite may
    run in another environment than the checkout's ``.venv``), killed with its process group
    after 120 s."""
    return run_in_own_group(["bash", str(ROOT / "scripts" / "reproduce.sh"), *args], 120,
                            cwd=cwd or ROOT,
                            env={**os.environ, "PYTHON": sys.executable, **(env or {})})


def test_reproduce_sh_usage_and_gpus_without_a_gpu(tmp_path):
    done = reproduce_sh()
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: give a TABLE")
    done = reproduce_sh("--help")
    assert done.returncode == 0 and "Exit codes:" in done.stdout and "set -e" not in done.stdout
    # no GPU visible (even on a GPU machine): refused before anything runs or is written,
    # never reported as done "on GPU 0"
    out = tmp_path / "out"
    done = reproduce_sh("ablation", "--gpus", "0", "--only", "wo_gate_ZINC", "--out_root",
                        str(out), env={"CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("error: --gpus 0 but no CUDA GPU is visible under "
                                   "CUDA_VISIBLE_DEVICES='' (leave out --gpus to run the cells "
                                   "on the CPU, --jobs N at a time)")
    assert not out.exists()

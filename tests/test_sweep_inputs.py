"""The sweep's tools take what a user gives them the way the user means it.

* paths on the command line are relative to the folder the command runs from (defaults: the
  project's own folders), for the sweep, reproduce.sh and the report command;
* arguments after ``--`` that the sweep or the table sets are refused in one line, and the
  sweep's ``--list`` and the tables agree on how many runs make a cell complete;
* a cell stopped by a signal or a time limit is reported as interrupted, never FAILED;
* several cells on one device (``--jobs``, ``--per_gpu``) pass a memory guard that says what it
  did; a cell that runs out of memory beside others is run again with fewer at once;
* the data modules that were once runnable say where their command went.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scripts import scheduler, sweep
from scripts.report.__main__ import main as report
from scripts.report.figures import plot_depth
from tests import test_tables_reliability as reliability
from tests.test_reproduce import fabricate, first_table, reproduce_sh
from tests.test_tables_reliability import one_error_line, snapshot
from train.errors import run_tool

ROOT = Path(__file__).resolve().parent.parent
stand_in = reliability.probe  # a fixture: main scripts replaced by a quick stand-in


def option(cmd: list[str], name: str) -> str | None:
    values = [cmd[i + 1] for i, a in enumerate(cmd[:-1]) if a == f"--{name}"]
    return values[-1] if values else None


def dry_commands(out: str) -> list[list[str]]:
    return [line.split("  > ")[0].split() for line in out.splitlines()
            if line and not line.startswith("#")]


# --------------------------------------------------------------------------- paths
def test_paths_are_relative_to_the_users_folder(tmp_path, capsys, monkeypatch):
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    assert sweep.main(["graph", "--only", "SGC_ZINC,SGC_MNIST", "--out_root", "rel",
                       "--data_root", "data", "--data_dir", "ZINC=zinc", "--dry-run"]) == 0
    cmds = {Path(option(c, "out_dir")).name: c for c in dry_commands(capsys.readouterr().out)}
    assert option(cmds["SGC_ZINC"], "out_dir") == str(here / "rel" / "graph" / "SGC_ZINC")
    assert option(cmds["SGC_ZINC"], "data_dir") == str(here / "zinc")
    assert option(cmds["SGC_MNIST"], "data_dir") == str(here / "data" / "MNIST")
    assert option(cmds["SGC_MNIST"], "cache_dir") == str(here / "data" / "cache")
    # a table file given by path, too; left out, the folders are the project's own
    table = here / "t.yaml"
    table.write_text((ROOT / "scripts" / "tables" / "ablation.yaml").read_text())
    assert sweep.main(["t.yaml", "--only", "wo_gate_ZINC", "--dry-run"]) == 0
    (cmd,) = dry_commands(capsys.readouterr().out)
    assert option(cmd, "out_dir") == "out/reproduce/ablation/wo_gate_ZINC"  # run in ROOT
    assert option(cmd, "data_dir") == "datasets/ZINC"
    assert not (here / "out").exists() and not (here / "datasets").exists()


def test_a_cell_run_from_another_folder_writes_there(stand_in, tmp_path, capsys, monkeypatch):
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    before = snapshot(ROOT / "out")
    assert sweep.main(["ablation", "--only", "wo_gate_ZINC", "--out_root", "rel",
                       "--runs", "1"]) == 0
    assert (here / "rel" / "ablation" / "wo_gate_ZINC" / "run" / "results.json").is_file()
    assert snapshot(ROOT / "out") == before
    capsys.readouterr()
    assert sweep.main(["ablation", "--only", "wo_gate_ZINC", "--out_root", "rel", "--runs", "1",
                       "--list"]) == 0
    assert capsys.readouterr().out.split()[1:3] == ["wo_gate_ZINC", "complete"]


def test_make_tables_and_plot_depth_read_and_write_relative_to_the_users_folder(
        tmp_path, capsys, monkeypatch):
    here = tmp_path / "elsewhere"
    fabricate(here / "res" / "ablation" / "wo_gate_ZINC", runs=5)
    monkeypatch.chdir(here)
    before = snapshot(ROOT / "tables")
    assert run_tool(report, ["tables", "--results", "res", "--out", "rel",
                             "--tables", "ablation"]) == 0
    capsys.readouterr()
    rows = first_table((here / "rel" / "ablation.md").read_text())
    assert rows["w/o gate"][2] not in ("—", "")  # found under ./res, written to ./rel
    assert snapshot(ROOT / "tables") == before
    fabricate(here / "res" / "depth" / "AUTOGCN_ZINC_L02", metric="mae", runs=5)
    png = plot_depth("res", "fig.png")
    assert png.resolve() == (here / "fig.png").resolve() and png.stat().st_size > 5000
    assert sweep.resolve(None, "out/reproduce") == ROOT / "out" / "reproduce"


def test_reproduce_sh_resolves_paths_in_the_callers_folder(tmp_path):
    """Also: the script runs with the suite's Python (PYTHON), not the checkout's .venv."""
    here = tmp_path / "elsewhere"
    here.mkdir()
    done = reproduce_sh("ablation", "--only", "wo_gate_ZINC", "--out_root", "rel", "--data_dir",
                        "ZINC=zinc", "--dry-run", cwd=here)
    assert done.returncode == 0, done.stderr
    (cmd,) = dry_commands(done.stdout)
    assert cmd[0] == sys.executable
    assert option(cmd, "out_dir") == str(here / "rel" / "ablation" / "wo_gate_ZINC")
    assert option(cmd, "data_dir") == str(here / "zinc")


# --------------------------------------------------------------------------- extra arguments
@pytest.mark.parametrize("extra, option_name", [
    (["--runs", "1"], "--runs"), (["--runs=1"], "--runs"), (["--run", "1"], "--runs"),
    (["--seed", "3"], "--seed"), (["--gpu_id", "1"], "--gpu_id"),
    (["--use_gpu", "True"], "--use_gpu"), (["--data_dir", "x"], "--data_dir"),
    (["--out_dir", "x"], "--out_dir"), (["--config", "c.json"], "--config"),
    (["--dataset", "ZINC"], "--dataset"), (["--model", "GCN"], "--model"),
    (["--epochs", "2", "--runs", "1"], "--runs"),
])
def test_extra_arguments_the_sweep_sets_are_refused(extra, option_name, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_tool(sweep.main, ["ablation", "--only", "wo_gate_ZINC", "--out_root", str(out),
                                 "--runs", "10", "--", *extra]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: {option_name} after --: the sweep sets it"), line
    assert not out.exists()


def test_extra_help_and_make_tables_extra_arguments_are_one_line(tmp_path, capsys):
    assert run_tool(sweep.main, ["ablation", "--dry-run", "--", "--help"]) == 2
    assert "python main_molecules_graph_regression.py --help" in one_error_line(
        capsys.readouterr().err)
    assert run_tool(report, ["tables", "--out", str(tmp_path / "t"), "--tables", "ablation",
                             "--", "--runs", "1"]) == 2
    assert one_error_line(capsys.readouterr().err).startswith("error: --runs after --")
    assert not (tmp_path / "t").exists()


def test_reproduce_sh_and_the_slurm_script_refuse_a_bad_setting_in_one_line(tmp_path):
    done = reproduce_sh("ablation", "--dry-run", env={"PYTHON": str(tmp_path / "nopython")})
    assert done.returncode == 2 and "PYTHON=" in one_error_line(done.stderr)
    sbatch = ROOT / "scripts" / "slurm_reproduce.sbatch"
    for env, says in (({}, "set TABLE"), ({"TABLE": "ablation"}, "job array"),
                      ({"TABLE": "ablation", "SLURM_ARRAY_TASK_ID": "0",
                        "AUTOGCN_ROOT": str(tmp_path)}, "AUTOGCN_ROOT")):
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("TABLE", "SLURM_ARRAY_TASK_ID", "AUTOGCN_ROOT")}
        done = subprocess.run(["bash", str(sbatch)], cwd=tmp_path, env={**clean, **env},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and says in one_error_line(done.stderr)


def test_list_and_make_tables_agree_on_a_cells_runs(tmp_path, capsys):
    """A result with fewer runs than asked for is partial for both, whatever it recorded."""
    out = tmp_path / "out"
    folder = out / "ablation" / "wo_gate_ZINC"
    cmd = sweep.build_command(next(c for c in sweep.load_table("ablation").cells
                                   if c.id == "wo_gate_ZINC"), "ablation", str(out), runs=10)
    fabricate(folder, runs=1, metric="mae", command=[*cmd[1:], "--runs", "1"])  # `-- --runs 1`
    for runs, state in (("10", "partial"), ("1", "complete")):
        assert sweep.main(["ablation", "--only", "wo_gate_ZINC", "--out_root", str(out),
                           "--runs", runs, "--list"]) == 0
        assert capsys.readouterr().out.split()[2] == state
        assert run_tool(report, ["tables", "--results", str(out), "--out",
                                 str(tmp_path / f"t{runs}"), "--tables", "ablation",
                                 "--runs", runs]) == 0
        capsys.readouterr()
        rows = first_table((tmp_path / f"t{runs}" / "ablation.md").read_text())
        cell = rows["w/o gate"][rows["Variant"].index("ZINC")]
        assert ("partial" in cell) == (state == "partial"), cell


# --------------------------------------------------------------------------- interrupted cells
STOPPED = textwrap.dedent("""\
    # A main script stopped by SIGTERM: records its runs as interrupted, then exits as told.
    import json, os, signal, sys
    args = sys.argv[1:]
    out = os.path.join(args[args.index("--out_dir") + 1], "run")
    os.makedirs(out, exist_ok=True)
    with open(args[args.index("--config") + 1]) as f:
        config = json.load(f)
    done = os.environ.get("STOP_AFTER") == "complete"  # a signal while exiting, all runs done
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"status": "complete" if done else "interrupted", "model": config["model"],
                   "command": sys.argv, "dataset": config["dataset"], "device": "cpu",
                   "runs": [{"seed": 0}] if done else []}, f)
    if os.environ["STOP_HOW"] == "signal":
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit(143)
""")


@pytest.mark.parametrize("how, code", [("exit", 143), ("signal", -15)])
def test_a_cell_stopped_by_sigterm_is_interrupted_not_failed(how, code, stand_in, tmp_path,
                                                             capsys, monkeypatch):
    stand_in.write_text(STOPPED)
    monkeypatch.setenv("STOP_HOW", how)
    out = tmp_path / "out"
    assert sweep.main(["ablation", "--only", "wo_gate_ZINC", "--out_root", str(out),
                       "--runs", "1"]) == 143
    captured = capsys.readouterr()
    assert f"wo_gate_ZINC interrupted (exit {code}; 0 finished run(s) kept" in captured.out
    assert "FAILED" not in captured.out + captured.err
    assert "0 failed, 1 interrupted" in captured.out
    assert one_error_line(captured.err.replace("terminated: ", "error: ", 1))
    assert captured.err.startswith("terminated: ablation: 1 cell(s) stopped before the end")
    # the same signal after the cell recorded its runs complete: done, not interrupted
    monkeypatch.setenv("STOP_AFTER", "complete")
    assert sweep.main(["ablation", "--only", "wo_gate_ZINC", "--out_root", str(out),
                       "--runs", "1", "--force"]) == 0
    captured = capsys.readouterr()
    assert f"wo_gate_ZINC done on cpu (stopped by a signal, exit {code}, after recording it)" \
        in captured.out
    assert captured.err == ""


# --------------------------------------------------------------------------- several per device
TIMED = textwrap.dedent("""\
    # Stands in for a cell: notes when it ran; fails for lack of memory when another one runs
    # at the same time and OOM_BESIDE is set (as a GPU that fits one cell would). It marks
    # itself busy first and looks for others at its start and at its end: two cells that
    # overlap then always see each other, however their starts interleave.
    import os, sys, time
    here, name = sys.argv[1], sys.argv[2]
    mine = "busy." + name
    def others():
        return any(n.startswith("busy.") and n != mine for n in os.listdir(here))
    open(os.path.join(here, mine), "w").close()
    t0 = time.time()
    beside = others()
    time.sleep(0.8)
    beside = others() or beside
    os.remove(os.path.join(here, mine))
    if beside and os.environ.get("OOM_BESIDE"):
        print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
        sys.exit(1)
    with open(os.path.join(here, name + ".times"), "a") as f:
        f.write(f"{t0} {time.time()}\\n")
""")


def packed(tmp_path: Path, n: int, devices: list, cell_memory: float, free_gib: float,
           capsys, monkeypatch) -> tuple[dict, str, list[tuple[float, float]]]:
    """Run ``n`` TIMED cells on ``devices``; the exit codes, stdout and the cells' intervals."""
    script = tmp_path / "timed.py"
    script.write_text(TIMED)
    cells = [sweep.Cell(id=f"c{i}", row="r", column="c", dataset="ZINC") for i in range(n)]
    jobs = [(c, tmp_path / c.id, "missing") for c in cells]
    monkeypatch.setattr(sweep, "cell_request", lambda cell, cmd: (None, []))  # not main scripts
    codes = sweep.run_cells(jobs, lambda cell, device: [sys.executable, str(script),
                                                         str(tmp_path), cell.id],
                            devices, dict(os.environ), cell_memory=cell_memory,
                            read_free=lambda device: int(free_gib * scheduler.GIB))
    spans = [tuple(map(float, line.split())) for c in cells
             for line in (tmp_path / f"{c.id}.times").read_text().splitlines()]
    return codes, capsys.readouterr().out, spans


def overlapping(spans: list[tuple[float, float]]) -> bool:
    spans = sorted(spans)
    return any(b[0] < a[1] for a, b in zip(spans, spans[1:]))


def test_jobs_run_together_while_memory_allows(tmp_path, capsys, monkeypatch):
    codes, out, spans = packed(tmp_path, 2, [None, None], 2.0, 64.0, capsys, monkeypatch)
    assert codes == {"c0": 0, "c1": 0} and overlapping(spans)
    assert "memory guard" not in out


def test_the_memory_guard_holds_a_cell_back_and_says_so(tmp_path, capsys, monkeypatch):
    codes, out, spans = packed(tmp_path, 3, [None, None], 2.0, 1.5, capsys, monkeypatch)
    assert codes == {"c0": 0, "c1": 0, "c2": 0}
    assert not overlapping(spans)  # 1.5 GiB free < 2: one cell at a time
    assert "has 1.5 GiB free, under --cell_memory 2, with 1 cell(s) running there: " in out
    assert " waits" in out


def test_a_cell_out_of_memory_beside_another_is_run_again_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OOM_BESIDE", "1")
    codes, out, spans = packed(tmp_path, 3, ["7", "7"], 2.0, 64.0, capsys, monkeypatch)
    assert codes == {"c0": 0, "c1": 0, "c2": 0}
    assert len(spans) == 3 and not overlapping(spans)  # after the first, one at a time
    assert re.search(r"ran out of memory beside [12] other cell\(s\) on GPU 7: it is queued "
                     r"again, and GPU 7 now runs at most 1 cell\(s\) at a time", out), out


def test_jobs_end_to_end_with_the_hosts_real_memory(stand_in, tmp_path, capsys):
    """``--jobs 2`` and a guard no host can meet: the real MemAvailable is read, the second
    cell waits for the first, and the sweep says so."""
    out = tmp_path / "out"
    assert sweep.main(["ablation", "--only", "wo_gate", "--out_root", str(out), "--runs", "1",
                       "--jobs", "2", "--cell_memory", "1000000"]) == 0
    text = capsys.readouterr().out
    assert "(2 at a time)" in text and "2 cell(s) done" in text
    assert "under --cell_memory 1e+06, with 1 cell(s) running there" in text


def test_free_memory_is_read_from_nvidia_smi_and_the_host(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "nvidia-smi"  # answers as the real one, for the GPU asked
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\n[ "$3" = "-i" ] && [ "$4" = GPU-7 ] && echo 40960 && exit 0\n'
                    'exit 6\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    assert scheduler.free_bytes("GPU-7") == 40960 * 1024 ** 2
    assert scheduler.free_bytes("3") is None  # an id it does not know: unguarded
    host = scheduler.free_bytes(None)
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert host is not None and 0 < host <= total


def test_per_gpu_places_n_cells_on_each_gpu(tmp_path, capsys):
    assert sweep.main(["ablation", "--only", "ZINC", "--gpus", "0,1", "--per_gpu", "3",
                       "--out_root", str(tmp_path), "--dry-run"]) == 0
    pins = [c[0] for c in dry_commands(capsys.readouterr().out)]
    assert sorted(pins) == ["CUDA_VISIBLE_DEVICES=0"] * 4 + ["CUDA_VISIBLE_DEVICES=1"] * 3
    for argv in (["--per_gpu", "2"], ["--gpus", "0", "--jobs", "2"], ["--per_gpu", "0"],
                 ["--cell_memory", "0"], ["--cell_memory", "nan"]):
        assert run_tool(sweep.main, ["ablation", "--dry-run", *argv]) == 2
        one_error_line(capsys.readouterr().err)


# --------------------------------------------------------------------------- removed commands
@pytest.mark.parametrize("module", ["sbm", "superpixels", "molecules", "node_datasets"])
def test_data_modules_that_once_ran_say_where_their_command_went(module):
    done = subprocess.run([sys.executable, "-m", f"data.{module}"], cwd=ROOT, text=True,
                          capture_output=True, timeout=120,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 2 and done.stdout == ""
    line = one_error_line(done.stderr)
    assert f"python -m data.{module} no longer runs" in line and "scripts.diagnose" in line


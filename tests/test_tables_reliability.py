"""Results are credited only to their own experiment; the sweep and the tables are strict.

* the tables and the sweep share one test of whether a result is a cell's
  (``scripts.sweep.mismatch``): another model, dataset or command line is stale, never shown;
* bad input exits 2 with one ``error:`` line, before anything is written;
* a cell claimed by another sweep is not run twice; a dead sweep's claim is taken over;
* ``--gpus`` without a visible GPU is refused, and where a cell ran comes from its result;
* a failed or crashed cell makes the sweep exit 1; a full disk names the folder, exits 1 and
  leaves no half-written table.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from scripts import scheduler, sweep
from scripts.report.__main__ import main as report
from scripts.report.cells import table_results
from tests.test_reproduce import fabricate, first_table
from train.errors import run_tool

ROOT = Path(__file__).resolve().parent.parent


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (relative path -> content)."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    return lines[0]


# --------------------------------------------------------------------------- stale results
STALE = {
    "model": dict(model="GAT"),
    "dataset": dict(dataset="SBM_PATTERN"),
    "arguments": dict(command=["main_SBMs_node_classification.py", "--config",
                               "configs/SBMs_node_clustering_GCN_CLUSTER.json", "--epochs", "2"]),
}


@pytest.mark.parametrize("kind", sorted(STALE))
def test_results_of_another_experiment_are_stale_in_tables_and_sweep(kind, tmp_path, capsys):
    root = tmp_path / "results"
    folder = root / "node" / "GCN_SBM_CLUSTER"
    fabricate(folder, values=[0.9] * 5, **STALE[kind])  # would be a (wrong) .900 in the table
    out = tmp_path / "tables"
    assert run_tool(report, ["tables", "--results", str(root), "--out", str(out),
                             "--tables", "node"]) == 0
    captured = capsys.readouterr()
    stale_lines = [line for line in captured.err.splitlines() if "GCN_SBM_CLUSTER" in line]
    assert len(stale_lines) == 1 and "another experiment" in stale_lines[0]
    named = {"model": "model is 'GAT'", "dataset": "dataset is 'SBM_PATTERN'",
             "arguments": "params.epochs is 2"}[kind]
    assert named in stale_lines[0]
    rows = first_table((out / "node.md").read_text())
    col = rows["Model"].index("SBM_CLUSTER")
    assert rows["GCN"][col] == "*stale*"
    assert ".900" not in (out / "node.md").read_text()
    # the sweep reaches the same verdict with the same function: it would rerun the cell
    assert sweep.main(["node", "--only", "GCN_SBM_CLUSTER", "--list",
                       "--out_root", str(root)]) == 0
    assert capsys.readouterr().out.split()[2] == "stale"


def test_a_cells_own_result_wins_over_a_newer_stale_one(tmp_path, capsys):
    root = tmp_path / "results"
    folder = root / "node" / "GCN_SBM_CLUSTER"
    fabricate(folder, values=[0.6] * 5, name="own", started="2025-01-01")
    fabricate(folder, values=[0.9] * 5, name="other", started="2025-02-01", model="GAT")
    res = table_results(sweep.load_table("node"), root / "node")["GCN_SBM_CLUSTER"]
    assert res.state == "ok" and res.mean == pytest.approx(0.6)
    assert res.stale == [f"{folder / 'other'}: model is 'GAT' in the run, 'GCN' now"]


def test_smoke_run_results_count_only_with_the_same_extra_arguments(tmp_path, capsys):
    root = tmp_path / "results"
    cell = next(c for c in sweep.load_table("node").cells if c.id == "GCN_SBM_CLUSTER")
    smoke = sweep.build_command(cell, "node", str(root), extra=["--epochs", "2"])[1:]
    fabricate(root / "node" / cell.id, values=[0.3] * 5, command=smoke)
    plain = table_results(sweep.load_table("node"), root / "node")["GCN_SBM_CLUSTER"]
    assert plain.state == "stale" and plain.mean is None
    assert "params.epochs is 2 in the run" in plain.stale[0]
    smoke_res = table_results(sweep.load_table("node"), root / "node",
                              extra=["--epochs", "2"])["GCN_SBM_CLUSTER"]
    assert smoke_res.state == "ok" and smoke_res.mean == pytest.approx(0.3)


# --------------------------------------------------------------------------- tables input
BAD_TABLE_ARGS = {
    "unknown table": (["--tables", "nosuch"], "valid: node, heterophily, graph, ablation, depth"),
    "one unknown of two": (["--tables", "node,nosuch"], "unknown table 'nosuch'"),
    "no table": (["--tables", ","], "names no table"),
    "runs 0": (["--runs", "0"], "--runs"),
    "runs negative": (["--runs", "-2"], "--runs"),
    "runs huge": (["--runs", "1000000000"], "--runs"),
    "out is a file": (["--out", "{file}"], "is a file"),
    "out below a file": (["--out", "{file}/sub"], "is a file"),
    "out empty": (["--out", ""], "must not be empty"),
    "results is a file": (["--results", "{file}"], "is a file"),
    "published missing": (["--published", "{tmp}/none.yaml"], "--published"),
    "published not a mapping": (["--published", "{file}"], "--published"),
    "sbm metric": (["--sbm_metric", "x"], "--sbm_metric"),
}


@pytest.mark.parametrize("case", sorted(BAD_TABLE_ARGS))
def test_make_tables_bad_input_exits_2_before_writing(case, tmp_path, capsys):
    args, expected = BAD_TABLE_ARGS[case]
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    out = tmp_path / "tables"
    out.mkdir()
    (out / "node.md").write_text("an earlier table\n")
    before = snapshot(tmp_path)
    args = [a.format(file=afile, tmp=tmp_path) for a in args]
    argv = ["--results", str(tmp_path / "results"), "--out", str(out), *args]
    assert run_tool(report, ["tables", *argv]) == 2
    captured = capsys.readouterr()
    assert expected in one_error_line(captured.err) and captured.out == ""
    assert snapshot(tmp_path) == before


def test_full_disk_while_writing_tables_leaves_the_earlier_ones_whole(tmp_path, capsys,
                                                                     monkeypatch):
    out = tmp_path / "tables"
    out.mkdir()
    (out / "node.md").write_text("the earlier node table\n")
    (out / "graph.md").write_text("the earlier graph table\n")
    before = snapshot(out)
    real = Path.write_bytes

    def full(self: Path, data: bytes) -> int:
        if self.parent == out:  # half of it reaches the disk, then it is full
            real(self, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full)
    (tmp_path / "results").mkdir()
    code = run_tool(report, ["tables", "--results", str(tmp_path / "results"), "--out",
                             str(out), "--tables", "node,graph"])
    assert code == 1
    line = one_error_line(capsys.readouterr().err)
    assert "no space left" in line and str(out) in line
    assert snapshot(out) == before  # nothing half-written, no temporary file left


# --------------------------------------------------------------------------- sweep input
BAD_SWEEP_ARGS = {
    "unknown table": (["nosuch"], "tables: node"),
    "only matches nothing": (["graph", "--only", "NOPE"], "--only NOPE"),
    "only one pattern matches nothing": (["graph", "--only", "ZINC,NOPE"], "--only NOPE"),
    "only empty": (["graph", "--only", ","], "--only"),
    "gpus empty": (["graph", "--gpus", ""], "--gpus"),
    "gpus twice": (["graph", "--gpus", "0,0"], "twice"),
    "gpus negative": (["graph", "--gpus", "-1"], "--gpus"),
    "gpus with jobs": (["graph", "--gpus", "0", "--jobs", "2"], "--jobs"),
    "runs 0": (["graph", "--runs", "0"], "--runs"),
    "runs huge": (["graph", "--runs", "1000000000"], "--runs"),
    "jobs 0": (["graph", "--jobs", "0"], "--jobs"),
    "cell negative": (["graph", "--cell", "-1"], "--cell"),
    "cell too large": (["graph", "--cell", "999"], "--cell 999"),
    "data_dir without path": (["graph", "--data_dir", "ZINC"], "DATASET=PATH"),
    "data_dir unknown dataset": (["graph", "--data_dir", "ZNC={tmp}"], "unknown dataset ZNC"),
    "data_dir is a file": (["graph", "--data_dir", "ZINC={file}"], "is a file"),
    "data_dir twice": (["graph", "--data_dir", "ZINC={tmp},ZINC=/x"], "twice"),
    "data_root is a file": (["graph", "--data_root", "{file}"], "--data_root"),
    "out_root is a file": (["graph", "--out_root", "{file}"], "is a file"),
    "out_root empty": (["graph", "--out_root", ""], "must not be empty"),
    "extra out_dir": (["graph", "--", "--out_dir", "x"], "--out_dir"),
    "extra out of range": (["graph", "--only", "SGC_ZINC", "--", "--epochs", "0"], "epochs"),
    "extra unknown": (["graph", "--only", "SGC_ZINC", "--", "--nosuch", "1"], "--nosuch"),
}


@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "run"])
@pytest.mark.parametrize("case", sorted(BAD_SWEEP_ARGS))
def test_sweep_bad_input_exits_2_before_writing(case, dry, tmp_path, capsys, monkeypatch):
    args, expected = BAD_SWEEP_ARGS[case]
    monkeypatch.setattr(scheduler, "run_cell", lambda *a: pytest.fail("a cell was started"))
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    args = [a.format(file=afile, tmp=tmp_path) for a in args]
    cut = args.index("--") if "--" in args else len(args)
    if "--out_root" not in args:
        args.insert(1, "--out_root")
        args.insert(2, str(tmp_path / "out"))
        cut += 2
    argv = args[:cut] + (["--dry-run"] if dry else []) + args[cut:]
    before = snapshot(tmp_path)
    assert run_tool(sweep.main, argv) == 2
    assert expected in one_error_line(capsys.readouterr().err)
    assert snapshot(tmp_path) == before and not (tmp_path / "out").exists()


def test_gpus_without_a_visible_gpu_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(scheduler, "cuda_device_count", lambda: 0)
    monkeypatch.setattr(scheduler, "run_cell", lambda *a: pytest.fail("a cell was started"))
    argv = ["ablation", "--only", "wo_gate_ZINC", "--out_root", str(tmp_path / "out"),
            "--gpus", "0"]
    assert sweep.main(argv) == 2
    assert one_error_line(capsys.readouterr().err) == (
        "error: --gpus 0 but no CUDA GPU is visible (leave out --gpus to run the cells on the "
        "CPU, --jobs N at a time)")
    assert not (tmp_path / "out").exists()
    monkeypatch.setattr(scheduler, "cuda_device_count", lambda: 1)  # one GPU: id 1 is not there
    assert sweep.main([*argv[:-1], "0,1"]) == 2
    assert "1 CUDA GPU(s) visible" in one_error_line(capsys.readouterr().err)
    assert sweep.main([*argv, "--dry-run"]) == 0  # planning for a GPU machine is fine


# --------------------------------------------------------------------------- running cells
PROBE = textwrap.dedent("""\
    # Stands in for a main script: records a results.json the way the runner does.
    import json, os, sys
    args = sys.argv[1:]
    opt = lambda name: args[len(args) - 1 - args[::-1].index(name) + 1]
    out = os.path.join(opt("--out_dir"), "run")
    os.makedirs(out, exist_ok=True)
    code = int(os.environ.get("PROBE_EXIT", "0"))
    with open(opt("--config")) as f:
        config = json.load(f)
    run = {"seed": 0, "epochs": 1, "best_epoch": 1, "stop_reason": "epochs", "s_per_epoch": 1.0,
           "total_time_s": 1.0, "final": {"test": {"acc": 0.5}}}
    data = {"status": "complete" if code == 0 else "failed", "model": config["model"],
            "dataset": config["dataset"], "device": os.environ["PROBE_DEVICE"],
            "command": sys.argv, "runs": [run] * int(opt("--runs")) if code == 0 else []}
    with open(os.environ["PROBE_CONFIGS"]) as f:  # the resolved config and seeds, as the runner
        data.update(json.load(f)[opt("--out_dir")])
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(data, f)
    print("probe ran on", os.environ.get("CUDA_VISIBLE_DEVICES"), flush=True)
    sys.exit(code)
""")


@pytest.fixture()
def probe(tmp_path, monkeypatch):
    """Cells of the ablation table run the probe instead of their main script (same
    arguments), on a machine with ``cuda_device_count`` GPUs (2 unless a test says)."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    real = sweep.build_command

    configs = tmp_path / "probe_configs.json"
    configs.write_text("{}")

    def build(cell, *args, **kwargs):
        cmd = real(cell, *args, **kwargs)
        # what the runner would record: the config the command resolves to, the seeds it asks
        config, seeds = sweep.cell_request(cell, cmd)
        known = json.loads(configs.read_text())
        known[cmd[cmd.index("--out_dir") + 1]] = {"config": config, "seeds": seeds}
        configs.write_text(json.dumps(known))
        return [cmd[0], str(script), *cmd[2:]]

    monkeypatch.setattr(sweep, "build_command", build)
    monkeypatch.setattr(sweep, "check_command", lambda cell, cmd: None)
    monkeypatch.setattr(scheduler, "cuda_device_count", lambda: 2)
    monkeypatch.setenv("PROBE_DEVICE", "cpu")
    monkeypatch.setenv("PROBE_CONFIGS", str(configs))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return script


def test_where_a_cell_ran_comes_from_its_result_not_from_gpus(probe, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["ablation", "--only", "wo_gate_ZINC", "--out_root", str(out), "--runs", "1",
            "--gpus", "1"]
    assert sweep.main(argv) == 0  # the probe says it used the CPU, as a fallback would
    text = capsys.readouterr().out
    assert "on cpu, NOT on GPU 1" in text
    assert "not recorded on a GPU although --gpus was given: wo_gate_ZINC" in text
    assert "done on cuda" not in text and "GPU 1)" not in text
    assert "probe ran on 1" in (out / "ablation" / "wo_gate_ZINC" / "stdout.log").read_text()


def test_a_failed_cell_and_a_crash_of_the_sweep_exit_1(probe, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    argv = ["ablation", "--only", "wo_gate", "--out_root", str(out), "--runs", "1"]
    monkeypatch.setenv("PROBE_EXIT", "1")
    assert sweep.main(argv) == 1
    captured = capsys.readouterr()
    assert one_error_line(captured.err).startswith("error: ablation: 2 cell(s) failed: ")
    assert "wo_gate_ZINC (exit 1)" in captured.err
    monkeypatch.setenv("PROBE_EXIT", "0")
    real = scheduler.run_cell

    def crash(cmd, folder, *args):
        if folder.name == "wo_gate_ZINC":
            raise RuntimeError("worker bug")
        return real(cmd, folder, *args)

    monkeypatch.setattr(scheduler, "run_cell", crash)
    assert sweep.main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == ("error: wo_gate_ZINC: the sweep could not run it: RuntimeError: "
                      "worker bug")
    assert err[1].startswith("error: ablation: 1 cell(s) failed: wo_gate_ZINC (exit 1)")
    assert len(err) == 2
    assert not list((out / "ablation").rglob(scheduler.CLAIM_FILE))  # claims released


def test_a_full_disk_stops_the_sweep_naming_the_folder(probe, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"

    def full(cmd, folder, *args):
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "stdout.log"))

    monkeypatch.setattr(scheduler, "run_cell", full)
    argv = ["ablation", "--only", "wo_gate", "--out_root", str(out), "--runs", "1"]
    assert sweep.main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "disk full" in err[0]
    ids = {"wo_gate_SBM_CLUSTER", "wo_gate_ZINC"}
    (first,) = [i for i in ids if str(out / "ablation" / i) in err[0]]
    assert f"1 not started: {(ids - {first}).pop()}" in err[1]  # nothing more was tried


HOLDER = textwrap.dedent("""\
    import sys, time
    from pathlib import Path
    from scripts import scheduler
    claim, note = scheduler.claim_cell(Path(sys.argv[1]))
    Path(sys.argv[2]).write_text("held" if claim else "not held")
    time.sleep(60)
""")


def test_a_claimed_cell_is_not_run_twice_and_a_dead_claim_is_taken_over(probe, tmp_path,
                                                                       capsys):
    out = tmp_path / "out"
    folder = out / "ablation" / "wo_gate_ZINC"
    flag = tmp_path / "flag"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), str(flag)], cwd=ROOT,
                              start_new_session=True)
    try:
        end = time.time() + 60
        while not flag.exists() and holder.poll() is None and time.time() < end:
            time.sleep(0.05)
        assert flag.read_text() == "held"  # another sweep runs the cell
        argv = ["ablation", "--only", "wo_gate_ZINC", "--out_root", str(out), "--runs", "1"]
        assert sweep.main(argv) == 0
        text = capsys.readouterr().out
        assert f"skipped wo_gate_ZINC: claimed by pid {holder.pid} on host" in text
        assert not (folder / "stdout.log").exists()  # never started here
        assert sweep.main([*argv, "--list"]) == 0
        assert f"(claimed by pid {holder.pid}" in capsys.readouterr().out
        os.killpg(holder.pid, signal.SIGKILL)  # the other sweep dies without releasing
        holder.wait(timeout=30)
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.wait(timeout=30)
    assert sweep.main(argv) == 0
    text = capsys.readouterr().out
    assert f"took over the claim of pid {holder.pid}" in text and "done on cpu" in text
    assert not (folder / scheduler.CLAIM_FILE).exists()


def test_claims_exclude_each_other_and_a_finished_cell_is_not_rerun(tmp_path):
    folder = tmp_path / "cell"
    first, note = scheduler.claim_cell(folder)
    assert first is not None and note == ""
    second, holder = scheduler.claim_cell(folder)
    assert second is None and holder.startswith(f"pid {os.getpid()} on host")
    assert scheduler.claim_holder(folder) == holder
    first.release()
    assert scheduler.claim_holder(folder) is None
    assert not (folder / scheduler.CLAIM_FILE).exists()
    again, note = scheduler.claim_cell(folder)
    assert again is not None and note == ""  # released cleanly: nothing to take over
    again.release()


def test_a_cell_completed_by_another_sweep_meanwhile_is_skipped(probe, tmp_path, capsys):
    out = tmp_path / "out"
    cell = next(c for c in sweep.load_table("ablation").cells if c.id == "wo_gate_ZINC")
    folder = out / "ablation" / cell.id
    cmd = sweep.build_command(cell, "ablation", str(out), runs=1)
    jobs = [(cell, folder, "missing")]  # planned while missing ...
    fabricate(folder, runs=1, command=cmd[1:])  # ... then another sweep finished it
    time.sleep(0.01)
    codes = sweep.run_cells(jobs, lambda c, d: cmd, [None], dict(os.environ))
    assert codes == {cell.id: "completed meanwhile by another sweep"}
    assert not (folder / "stdout.log").exists()


# --------------------------------------------------------------------------- odd result files
ODD_RESULTS = {
    "deep nesting": "[" * 100000 + "]" * 100000,
    "5000-digit number": '{"runs": [], "num_params": ' + "9" * 5000 + "}",
    "not UTF-8": b"\xff\xfe\x00garbage",
    "dead running, runs not records": {"status": "running", "pid": 2**22 + 12345,
                                       "runs": ["x"], "model": "GCN", "dataset": "SBM_CLUSTER"},
}


@pytest.mark.parametrize("kind", sorted(ODD_RESULTS))
def test_odd_result_files_are_skipped_not_fatal(kind, tmp_path, capsys):
    """A result file no runner wrote is named on stderr and skipped; the cell's own result is
    still shown, the tables are written, the sweep lists the cell; nothing else changes."""
    import socket

    root = tmp_path / "results"
    folder = root / "node" / "GCN_SBM_CLUSTER"
    fabricate(folder, values=[0.7] * 5)
    odd = folder / "odd" / "results.json"
    odd.parent.mkdir()
    content = ODD_RESULTS[kind]
    if isinstance(content, dict):
        content = json.dumps({**content, "host": socket.gethostname()})
    odd.write_bytes(content if isinstance(content, bytes) else content.encode())
    own = snapshot(folder / "run")
    assert report(["tables", "--results", str(root), "--out", str(tmp_path / "t"),
                   "--tables", "node"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert any(line.startswith("warning: skipped") and "odd" in line
               for line in captured.err.splitlines()), captured.err
    assert ".700" in (tmp_path / "t" / "node.md").read_text()
    assert sweep.main(["node", "--list", "--out_root", str(root)]) == 0
    assert re.search(r"GCN_SBM_CLUSTER\s+complete", capsys.readouterr().out)
    assert snapshot(folder / "run") == own


@pytest.mark.parametrize("text", ["a: [\n", "- 1\n- 2\n", None], ids=["yaml", "list", "folder"])
def test_a_bad_table_file_is_one_line(text, tmp_path, capsys):
    table = tmp_path / "t.yaml"
    if text is None:
        table.mkdir()
    else:
        table.write_text(text)
    assert run_tool(sweep.main, [str(table), "--out_root", str(tmp_path / "out")]) == 2
    assert str(table) in one_error_line(capsys.readouterr().err)
    assert run_tool(report, ["tables", "--tables", str(table), "--out",
                             str(tmp_path / "out")]) == 2
    assert str(table) in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("signum, word", [(signal.SIGINT, "interrupted"),
                                          (signal.SIGTERM, "terminated")])
def test_an_interrupted_sweep_says_so_in_one_line(signum, word, probe, tmp_path, capsys,
                                                  monkeypatch):
    from train.interrupts import Interrupted

    def interrupted(*args, **kwargs):
        raise Interrupted(signum)

    monkeypatch.setattr(sweep, "run_cells", interrupted)
    out = tmp_path / "out"
    assert sweep.main(["ablation", "--only", "wo_gate", "--out_root", str(out),
                       "--runs", "1"]) == 128 + signum
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{word}: ") and "rerunning resumes" in err[0]


def test_a_claim_that_cannot_be_written_leaves_no_claim_file(tmp_path, monkeypatch):
    """A full disk while claiming a cell: the error reaches the sweep (which reports the
    folder), and no empty claim file is left for the next sweep to puzzle over."""
    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(scheduler.os, "pwrite", full)
    with pytest.raises(OSError):
        scheduler.claim_cell(tmp_path / "cell")
    assert list((tmp_path / "cell").iterdir()) == []


def test_a_signal_while_cells_run_is_passed_on_and_one_line(probe, tmp_path, capsys,
                                                            monkeypatch):
    """The sweep's own loop sees the signal (train.interrupts.check raising at its first safe
    point): the workers stop taking cells, the running ones get the signal, exit code 143."""
    from train import interrupts
    from train.interrupts import Interrupted

    out = tmp_path / "out"
    sleeper = tmp_path / "sleeper.py"  # a cell that runs until it gets the signal
    sleeper.write_text("import time\ntime.sleep(60)\n")
    monkeypatch.setattr(sweep, "build_command",
                        lambda cell, *args, **kwargs: [sys.executable, str(sleeper)])

    def signalled() -> None:  # the signal arrives while a cell runs
        if list(out.rglob("stdout.log")):
            raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(interrupts, "check", signalled)
    crashed = []  # a worker thread that fails
    monkeypatch.setattr(threading, "excepthook", crashed.append)
    before = set(threading.enumerate())
    assert sweep.main(["ablation", "--only", "wo_gate", "--out_root", str(out),
                       "--runs", "1"]) == 143
    for thread in set(threading.enumerate()) - before:  # the workers end (and may fail)
        thread.join(timeout=30)
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("terminated: "), captured.err
    assert not crashed, [str(c.exc_value) for c in crashed]
    assert "terminated: waiting for the running cells" in captured.out
    assert not list(out.rglob(scheduler.CLAIM_FILE))  # claims released


def test_a_complete_record_without_its_seeds_metrics_is_not_a_complete_cell(tmp_path, capsys):
    """``complete`` with runs that hold no metrics (edited, or another program's file) is a
    partial cell: the sweep runs it again and the table does not show it as done."""
    root = tmp_path / "results"
    folder = root / "node" / "GCN_SBM_CLUSTER"
    path = fabricate(folder, values=[0.9] * 5)
    data = json.loads(path.read_text())
    for run in data["runs"]:
        run["final"] = {"train": None, "val": None, "test": None}
    path.write_text(json.dumps(data))
    assert sweep.main(["node", "--only", "GCN_SBM_CLUSTER", "--list",
                       "--out_root", str(root)]) == 0
    assert capsys.readouterr().out.split()[2] == "partial"
    res = table_results(sweep.load_table("node"), root / "node")["GCN_SBM_CLUSTER"]
    assert res.state == "partial" and res.mean is None


@pytest.mark.parametrize("content, damage", [
    ('{"status": "complete", "runs": [', "truncated or not JSON"),
    ('{"status": ["complete"], "runs": []}', "status ['complete']"),
    ('[1, 2]', "not a record with a list of runs"),
])
def test_list_names_the_damage_of_a_results_file(content, damage, tmp_path, capsys):
    """A cell whose only results.json is damaged is listed as damaged, with what is wrong,
    never as missing (which would hide a file that needs looking at)."""
    root = tmp_path / "results"
    run = root / "node" / "GCN_SBM_CLUSTER" / "run"
    run.mkdir(parents=True)
    (run / "results.json").write_text(content)
    assert sweep.main(["node", "--only", "GCN_SBM_CLUSTER", "--list",
                       "--out_root", str(root)]) == 0
    line = capsys.readouterr().out.strip()
    assert " damaged: " in line and damage in line, line

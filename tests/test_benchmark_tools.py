"""``python -m scripts.bench``: the subcommands ``autogcn``, ``models`` and ``layers`` (eager and
compiled side by side, the ratio lines they print, the fallback to eager, a quiet stderr), and
the command that dispatches to them.

Compiling for real costs tens of seconds on a cold CPU cache, so these tests replace
``compile_regions`` by a stand-in that only records which nets it was given: what is tested
here is the scripts' bookkeeping (which nets, which modes, which ratios); that compiled and
eager training agree is ``tests/test_compilation.py``'s and ``scripts/gpu_check.py``'s to show.
"""

from __future__ import annotations

import logging
import re

import pytest
import torch

from scripts.bench import __main__ as bench
from scripts.bench import autogcn, layers, models
from tests.data_writers import write_tiny_zinc
from train import compilation


@pytest.fixture(scope="module")
def zinc_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench") / "zinc"
    write_tiny_zinc(folder, {"train": 6, "val": 6})
    return folder


def bench_args(zinc_dir, *extra: str):
    return ["--datasets", "ZINC", "--zinc_dir", str(zinc_dir), "--graphs", "4", "--epochs", "1",
            *extra]


def test_both_modes_start_from_the_same_weights(zinc_dir, stand_in_compiler):
    args = autogcn.build_parser().parse_args(bench_args(zinc_dir))
    split, io, _ = autogcn.load_split("ZINC", 4, args)
    cands = autogcn.build_candidates("ZINC", split, io, args, torch.device("cpu"),
                                       (False, True))
    assert [c.name for c in cands] == ["AutoGCN-eager", "AutoGCN-compiled", "GCN-eager",
                                       "GCN-compiled"]
    compiled = [c.net for c in cands if c.compiled]
    assert len(stand_in_compiler) == 2 and all(
        any(net is c for c in compiled) for net in stand_in_compiler)
    for eager, comp in zip(cands[::2], cands[1::2], strict=True):
        assert eager.net is not comp.net and eager.optimizer is not comp.optimizer
        a, b = eager.net.state_dict(), comp.net.state_dict()
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        assert {id(p) for p in comp.optimizer.param_groups[0]["params"]} == \
            {id(p) for p in comp.net.parameters()}


def test_the_ratio_lines_are_computed_from_the_measured_epochs(zinc_dir, stand_in_compiler,
                                                                capsys):
    args = autogcn.build_parser().parse_args(bench_args(zinc_dir))
    out = autogcn.run_dataset("ZINC", args, torch.device("cpu"), (False, True))
    s = out["s_per_epoch"]
    assert set(s) == {"AutoGCN-eager", "AutoGCN-compiled", "GCN-eager", "GCN-compiled"}
    # the default of a full run (79,000 steps, compiling works) is compiled for both
    assert out["default"] == {"AUTOGCN": True, "GCN": True}
    assert out["ratio_gcn"] == pytest.approx(s["AutoGCN-compiled"] / s["GCN-compiled"])
    assert out["ratio_gcn_eager"] == pytest.approx(s["AutoGCN-eager"] / s["GCN-eager"])
    assert out["compiled_over_eager_AUTOGCN"] == pytest.approx(
        s["AutoGCN-compiled"] / s["AutoGCN-eager"])
    assert out["compiled_over_eager_GCN"] == pytest.approx(s["GCN-compiled"] / s["GCN-eager"])
    assert all(out["memory_mb"][name] > 0 for name in s)
    text = capsys.readouterr().out
    ratio = re.search(r"^AutoGCN/GCN epoch time ratio on ZINC: (\S+) +\(both compiled, the "
                      r"default here", text, re.M)
    assert ratio and float(ratio.group(1)) == pytest.approx(out["ratio_gcn"], abs=0.006)
    for label in ("AutoGCN", "GCN"):
        line = re.search(rf"^compiled/eager {label} epoch time on ZINC: (\S+) +\(speed-up "
                         r"eager/compiled (\S+)x", text, re.M)
        assert line, text
        r = out[f"compiled_over_eager_{label.upper()}"]
        assert float(line.group(1)) == pytest.approx(r, abs=0.006)
        assert float(line.group(2)) == pytest.approx(1 / r, rel=0.01, abs=0.006)
    for both in ("eager", "compiled"):
        assert f"AutoGCN/GCN epoch time ratio, both {both}, on ZINC: " in text
    assert text.count("warm-up") >= 6 and "compiler cache" in text


def test_compile_off_measures_eager_only_and_stderr_stays_empty(zinc_dir, capfd):
    """No compiling, no probing the compiler; the profiler behind the CPU peak memory writes
    nothing on stderr (its C++ logger included: ``capfd`` sees the file descriptor)."""
    assert autogcn.main(bench_args(zinc_dir, "--compile", "off")) == 0
    captured = capfd.readouterr()
    assert captured.err == ""
    assert "AutoGCN-eager" in captured.out and "-compiled" not in captured.out
    assert re.search(r"^AutoGCN/GCN epoch time ratio on ZINC: \S+ +\(both eager; the default "
                     r"mode was not probed \(--compile off\)", captured.out, re.M)
    assert "compiled/eager" not in captured.out


def test_where_compiling_cannot_work_one_line_says_so_and_eager_is_measured(
        zinc_dir, monkeypatch, capsys):
    monkeypatch.setattr(compilation, "unavailable", lambda device: "no working C++ compiler")
    monkeypatch.setattr(compilation, "compile_regions",
                        lambda net, device=None: pytest.fail("compile_regions called"))
    assert autogcn.main(bench_args(zinc_dir, "--compile", "on")) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "unavailable" in line]
    assert lines == ["compile: unavailable on cpu (no working C++ compiler); measuring eager "
                     "only"]
    assert "GCN-eager" in out and "-compiled" not in out
    # the default here is eager too: that is the ratio printed
    assert re.search(r"^AutoGCN/GCN epoch time ratio on ZINC: \S+ +\(both eager, the default "
                     r"here", out, re.M)


def test_the_compilers_cuda_home_warning_is_filtered():
    logger = logging.getLogger("torch.utils.cpp_extension")
    record = logger.makeRecord(logger.name, logging.WARNING, __file__, 1,
                               "No CUDA runtime is found, using CUDA_HOME='%s'", ("/x",), None)
    assert not logger.filter(record)
    other = logger.makeRecord(logger.name, logging.WARNING, __file__, 1, "another", (), None)
    assert logger.filter(other)


def test_baselines_prints_both_modes_per_model_and_the_two_ratio_lines(zinc_dir,
                                                                        stand_in_compiler,
                                                                        capsys):
    assert models.main(["--datasets", "ZINC", "--zinc_dir", str(zinc_dir),
                                     "--graphs", "4", "--epochs", "1",
                                     "--models", "GCN", "AUTOGCN"]) == 0
    out = capsys.readouterr().out
    assert len(stand_in_compiler) == 2  # one compiled copy per model
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if line.split()[:1] in (["GCN"], ["AUTOGCN"])}
    for model in ("GCN", "AUTOGCN"):
        eager, comp, ratio = (float(v) for v in rows[model][1:4])
        # s/epoch is printed to 1 ms, the ratio to 0.01
        assert ratio == pytest.approx(comp / eager,
                                      abs=0.0005 * (1 / eager + comp / eager**2) + 0.006)
        assert rows[model][7] == "compiled"  # the default mode of a full training run
    assert rows["GCN"][5:7] == ["1.00", "1.00"]
    assert re.search(r"^AutoGCN/GCN epoch time ratio on ZINC: \S+ +\(both compiled, the "
                     r"default here", out, re.M)
    assert re.search(r"^compiled/eager AutoGCN epoch time on ZINC: \S+ +\(speed-up "
                     r"eager/compiled \S+x", out, re.M)


def test_baselines_compile_off_has_no_compiled_column(zinc_dir, capsys, monkeypatch):
    monkeypatch.setattr(compilation, "compile_regions",
                        lambda net, device=None: pytest.fail("compile_regions called"))
    assert models.main(["--datasets", "ZINC", "--zinc_dir", str(zinc_dir),
                                     "--graphs", "4", "--epochs", "1", "--models", "GCN",
                                     "--compile", "off"]) == 0
    out = capsys.readouterr().out
    (row,) = [line.split() for line in out.splitlines() if line.startswith("GCN ")]
    assert row[2:5] == ["-", "-", "-"] and row[5:7] == ["1.00", "-"]
    assert "AutoGCN/GCN" not in out  # AutoGCN not asked for


def test_layer_table_times_every_row_and_relates_it_to_eager_gcn(stand_in_compiler, capsys):
    assert layers.main(["--graphs", "2", "--repeats", "2", "--clock", "cpu"]) == 0
    out = capsys.readouterr().out
    rows = dict(re.findall(r"^(\w+ (?:eager|compiled|floor))\s+([\d.]+)\s+[\d.]+$", out, re.M))
    assert set(rows) == {f"{m} {k}" for m in ("AutoGCN", "GCN")
                         for k in ("eager", "compiled", "floor")}
    ratio = re.search(r"^GCN eager\s+[\d.]+\s+([\d.]+)$", out, re.M).group(1)
    assert ratio == "1.00" and all(float(ms) > 0 for ms in rows.values())
    assert len(stand_in_compiler) == 2  # the AutoGCN and the GCN layer, each once


def test_the_command_runs_the_named_benchmark_and_refuses_others_in_one_line(capsys,
                                                                          monkeypatch):
    ran = []
    monkeypatch.setattr(layers, "main", lambda argv: ran.append(argv) or 0)
    assert bench.main(["layers", "--graphs", "2"]) == 0 and ran == [["--graphs", "2"]]
    assert bench.main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {name} " in listed for name in bench.SUBCOMMANDS)
    for argv, needle in (([], "no benchmark given"), (["benchmark"], "unknown benchmark")):
        assert bench.main(argv) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {needle}"), err
    assert ran == [["--graphs", "2"]]


def test_ctrl_c_while_a_benchmark_loads_is_one_line(capsys, monkeypatch):
    """The first seconds go to importing torch and the benchmark: a Ctrl-C then is one line and
    exit 130, as for every entry point."""
    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench.importlib, "import_module", interrupted)
    with pytest.raises(SystemExit) as stop:
        bench.main(["models"])
    assert stop.value.code == 130
    assert capsys.readouterr().err == "interrupted: nothing was measured\n"


def test_state_cost_times_every_saved_state(tmp_path, capsys):
    """``bench state`` follows the runner's state through to the run folder's write: one timed
    save per epoch, its size that of the state written (a refactor of either would leave it
    measuring nothing)."""
    from scripts.bench import state

    write_tiny_zinc(tmp_path / "zinc", {"train": 8, "val": 4, "test": 4})
    assert state.main(["--zinc_dir", str(tmp_path / "zinc"), "--max_graphs", "8",
                       "--sbm_graphs", "4", "--epochs", "2"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " % of the epoch" in line]
    assert [line.split(":")[0] for line in lines] == ["ZINC", "SBM_PATTERN"]
    for line in lines:
        size, ms = re.search(r"state ([\d.]+) MiB saved in ([\d.]+) ms", line).groups()
        assert float(size) > 0.1 and float(ms) > 0

"""``params.compile`` (``train/compilation.py``): compiled regions against eager execution for
every registered model at every task level, no recompiling per batch, the decision and its
fallbacks, the config key and the command line, and deep copies of a compiled net.

Dropout stays on (0.1 in the layers and on the embedded input; the successors' default
``dprate``) and inductor's ``fallback_random`` is set for this module (restored after), so the
compiled random ops draw what eager ones draw from the same seed.

That a region really ran compiled is checked on every call, not only that it was replaced:
compiled regions are shared between nets (one graph per region class and configuration), so a
net built after another one may compile nothing new. A training forward must hold one
``CompiledFunctionBackward`` node per module with regions in its autograd graph, an evaluation
forward one ``Torch-Compiled Region`` profiler event per such module; an eager fallback (a
region the compiler skipped or gave up on) has neither. Dynamo's own counters check the
recompiles.

One process compiles more configurations of ``MLPReadout.forward`` here than dynamo's default
``recompile_limit`` allows for one function (its configurations are guarded, one cache entry
each), after which it silently runs that region eagerly:
:func:`test_a_region_stays_compiled_past_dynamos_default_recompile_limit` checks that from
the default limit; the other tests raise the limit so that each of them checks its own subject
whatever ran before it.
"""

from __future__ import annotations

import copy
import json
import logging
from functools import partial

import pytest
import torch
from torch._dynamo.utils import counters
from torch.profiler import ProfilerActivity, profile

import train.runner as runner
from layers.mlp_readout_layer import MLPReadout
from nets.gnn_net import NetIO
from nets.registry import MODELS, build_net
from tests.data_writers import molecule, write_zinc
from tests.test_baselines import LEVELS as BASELINE_LEVELS
from tests.test_baselines import graph_batch, random_graph, small_params
from train import compilation
from train.config import ConfigError, validate
from train.tasks import NODE, ZINC

CPU = torch.device("cpu")
LEVELS = {"node": BASELINE_LEVELS["node"],  # SBM-like: batched graphs, a prediction per node
          "graph": BASELINE_LEVELS["graph_embedding"],  # ZINC-like: batched graphs, a readout
          # PubMed-like: one graph, full batch. Input as wide as the hidden layers, so that the
          # first layer shares the compiled code of the middle ones (each width is compiled
          # apart); the output layer (3 classes) keeps the path without residual.
          "single_graph": NetIO("single_graph", "linear", 8, 3)}
#: Two inputs per level with different node (and graph) counts: dynamic shapes.
SIZES = {"node": [(5, 1, 7), (4, 6, 3, 2)], "graph": [(5, 1, 7), (4, 6, 3, 2)],
         "single_graph": [(20,), (27,)]}
DROPOUT = 0.1
#: Dynamo's settings as this module found them (filled by the ``compiler`` fixture).
FOUND: dict[str, object] = {}


@pytest.fixture(scope="module", autouse=True)
def compiler():
    """Skips the module where compiling cannot work; sets ``fallback_random`` and a recompile
    limit above any test's needs for the module, starting and leaving dynamo's caches empty."""
    why_not = compilation.unavailable(CPU)
    if why_not is not None:
        pytest.skip(f"torch.compile cannot run on this CPU ({why_not})")
    inductor, dynamo = torch._inductor.config, torch._dynamo.config
    saved = inductor.fallback_random, dynamo.recompile_limit
    FOUND["recompile_limit"] = dynamo.recompile_limit
    torch._dynamo.reset()
    inductor.fallback_random, dynamo.recompile_limit = True, 64
    yield
    inductor.fallback_random, dynamo.recompile_limit = saved
    torch._dynamo.reset()
    # The compiler's worker pools and threads would stay for the rest of the session; a
    # process forked while they run (a later test's process pool) can then hang at start.
    from torch._inductor.async_compile import shutdown_compile_workers

    shutdown_compile_workers()


def net_params(model: str) -> dict:
    return small_params(model, dropout=DROPOUT, in_feat_dropout=DROPOUT)


def inputs(model: str, level: str, size: tuple[int, ...], seed: int = 0):
    """``(graph, features, snorm_n)`` for ``level``: a batch of graphs of ``size`` nodes, or one
    graph of ``size[0]`` nodes (self-loops added for the models that use them)."""
    io = LEVELS[level]
    if level == "single_graph":
        g = random_graph(size[0], 0.15, seed + 3)
        if NODE.adds_self_loops(model, {"self_loop": True}):
            g = g.add_self_loops()
        x = torch.rand(size[0], io.in_dim, generator=torch.Generator().manual_seed(seed))
        return g, x, None
    g, snorm_n = graph_batch(io, size, seed)
    return g, g.ndata["feat"], snorm_n


def loss_of(net: torch.nn.Module, out: torch.Tensor) -> torch.Tensor:
    aux = net.auxiliary_loss() if hasattr(net, "auxiliary_loss") else 0.0  # APGCN
    return out.square().mean() + aux


def region_modules(net: torch.nn.Module) -> int:
    """Modules with compiled regions: each makes one compiled call per forward (a region it
    calls from another of its regions is traced into that one)."""
    return sum(1 for m in net.modules() if getattr(type(m), "compiled_regions", ()))


def compiled_backward_nodes(out: torch.Tensor) -> int:
    """``CompiledFunctionBackward`` nodes in the autograd graph of ``out``: compiled calls that
    took part in computing it."""
    seen, todo, found = set(), [out.grad_fn], 0
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        found += type(fn).__name__ == "CompiledFunctionBackward"
        todo.extend(nxt for nxt, _ in fn.next_functions)
    return found


def run_profiled(fn):
    """``fn()`` and how many compiled frames ran during it."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        out = fn()
    return out, sum(e.name.startswith("Torch-Compiled Region") for e in prof.events())


def assert_same_state(eager_net, compiled_net, what: str) -> None:
    for (name, p), q in zip(eager_net.named_parameters(), compiled_net.parameters()):
        assert (p.grad is None) == (q.grad is None), f"{what}: gradient of {name}"
        if p.grad is not None:
            torch.testing.assert_close(q.grad, p.grad, msg=labelled(f"{what}: grad of {name}"))
    for (name, b), c in zip(eager_net.named_buffers(), compiled_net.buffers()):
        torch.testing.assert_close(c, b, msg=labelled(f"{what}: buffer {name}"))


def labelled(label: str):
    """An ``assert_close`` message: ``label`` before torch's own description."""
    return lambda message: f"{label}: {message}"


# ------------------------------------------------------------------ compiled = eager
@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize("model", list(MODELS))
def test_compiled_equals_eager(model, level):
    """Same weights, same batches, same seeds: outputs, every gradient and the batch-norm
    running statistics agree (float32 tolerance), training at two batch sizes and evaluating;
    every region-holding module ran compiled in each forward."""
    what = f"{model} at level {level}"
    torch.manual_seed(0)
    eager_net = build_net(model, LEVELS[level], net_params(model))
    compiled_net = copy.deepcopy(eager_net)
    if not compilation.compile_regions(compiled_net):
        # Nothing of this net is compiled (single-graph nets without AutoGCN layers): a run
        # with params.compile "on" must say so, and train eagerly.
        assert not compilation.is_compiled(compiled_net)
        compiled, why = compilation.prepare(compiled_net, model, "on", CPU, steps=10**6)
        assert not compiled and why.startswith(f"off: no part of {model} is compiled"), why
        return
    assert compilation.is_compiled(compiled_net)
    expected_calls = region_modules(compiled_net)
    for size in SIZES[level]:
        g, x, snorm_n = inputs(model, level, size)
        outs = []
        for net in (eager_net, compiled_net):
            net.train()
            net.zero_grad(set_to_none=True)
            torch.manual_seed(1)  # the same dropout masks
            out = net(g, x, snorm_n)
            loss_of(net, out).backward()
            outs.append(out)
        assert compiled_backward_nodes(outs[1]) == expected_calls, f"{what}: compiled calls"
        assert compiled_backward_nodes(outs[0]) == 0
        torch.testing.assert_close(outs[1], outs[0], msg=labelled(f"{what} {size}"))
        assert_same_state(eager_net, compiled_net, f"{what} {size}")
        for net in (eager_net, compiled_net):
            net.eval()
        with torch.no_grad():
            expected = eager_net(g, x, snorm_n)
            got, calls = run_profiled(partial(compiled_net, g, x, snorm_n))
        assert calls == expected_calls, f"{what} {size}: compiled calls in evaluation"
        torch.testing.assert_close(got, expected, msg=labelled(f"{what} {size}, eval"))


def test_a_region_stays_compiled_past_dynamos_default_recompile_limit():
    """Published configs give the prediction head many widths in one process
    (``python -m scripts.bench models`` builds every model): each width pair, trained and
    evaluated, is one cache entry of the one ``MLPReadout.forward`` function, more than
    dynamo's default limit of 8 per function, past which it would silently run eagerly.
    ``compile_regions`` raises the limit: started at the default, every head stays compiled."""
    torch._dynamo.reset()
    limit = torch._dynamo.config.recompile_limit
    torch._dynamo.config.recompile_limit = FOUND["recompile_limit"]  # dynamo's default: 8
    widths = [(w, c) for w in (8, 12, 16, 20, 24, 32) for c in (1, 2)]
    assert 2 * len(widths) > FOUND["recompile_limit"]
    try:
        eager_ones = []
        for width, classes in widths:
            head = MLPReadout(width, classes)
            compilation.compile_regions(head)
            h = torch.randn(13, width, requires_grad=True)
            out = head.train()(h)
            with torch.no_grad():
                _, calls = run_profiled(partial(head.eval(), h))
            if compiled_backward_nodes(out) != 1 or calls != 1:
                eager_ones.append(f"{width} -> {classes}")
        assert not eager_ones, ("MLPReadout.forward ran eagerly (recompile limit "
                                f"{torch._dynamo.config.recompile_limit} hit) in: "
                                + "; ".join(dict.fromkeys(eager_ones)))
    finally:
        torch._dynamo.config.recompile_limit = limit
        torch._dynamo.reset()


# ------------------------------------------------------------------ no recompiling per batch
@pytest.mark.parametrize("level", ["node", "graph"])
def test_no_recompile_per_batch(level):
    """After a warm-up over two batch sizes in training and evaluation, training steps and
    evaluations on batches of new sizes (new node and graph counts, at least two of each)
    compile nothing new."""
    torch.manual_seed(0)
    net = build_net("AUTOGCN", LEVELS[level], net_params("AUTOGCN"))
    compilation.compile_regions(net)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)

    def step(size, seed):
        g, x, snorm_n = inputs("AUTOGCN", level, size, seed)
        net.train()
        opt.zero_grad()
        loss_of(net, net(g, x, snorm_n)).backward()
        opt.step()
        net.eval()
        with torch.no_grad():
            net(g, x, snorm_n)

    for seed, size in enumerate(SIZES[level]):
        step(size, seed)
    counters.clear()
    for seed, size in enumerate([(3, 9), (8, 2, 2, 6), (2, 3, 4, 5, 6), (7, 7), (11, 2, 4)]):
        step(size, 10 + seed)
    assert counters["stats"]["unique_graphs"] == 0, dict(counters["stats"])
    assert counters["frames"]["total"] == 0, dict(counters["frames"])


def test_regions_compile_once_and_dynamo_counts_them():
    """From empty caches, the first forward compiles graphs (dynamo's counters move), and the
    compiled net then runs without dynamo compiling anything more."""
    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(0)
    net = build_net("GCN", LEVELS["graph"], net_params("GCN")).train()
    compilation.compile_regions(net)
    g, x, snorm_n = inputs("GCN", "graph", SIZES["graph"][0])
    loss_of(net, net(g, x, snorm_n)).backward()
    assert counters["stats"]["unique_graphs"] >= 1  # MLPReadout.forward
    assert counters["frames"]["ok"] >= 1
    counters.clear()
    g, x, snorm_n = inputs("GCN", "graph", SIZES["graph"][1], seed=5)
    out = net(g, x, snorm_n)
    assert compiled_backward_nodes(out) == region_modules(net)
    assert not counters["frames"]


# ------------------------------------------------------------------ decide()
def test_off_is_eager_with_a_reason():
    for setting in ("off", False):
        compiled, why = compilation.decide(setting, CPU, 10**6)
        assert compiled is False and "off" in why and "params.compile" in why


def test_auto_compiles_only_long_runs():
    compiled, why = compilation.decide("auto", CPU, compilation.MIN_STEPS - 1)
    assert compiled is False
    assert "auto" in why and str(compilation.MIN_STEPS - 1) in why
    assert compilation.decide("auto", CPU, compilation.MIN_STEPS) == (True, "on (auto)")


def test_on_compiles_even_a_short_run():
    for setting in ("on", True):
        compiled, why = compilation.decide(setting, CPU, 1)
        assert compiled is True and why.startswith("on")


def test_old_torch_falls_back_with_a_reason(monkeypatch):
    monkeypatch.setattr(compilation, "torch_version", lambda: (2, 2))
    why_not = compilation.unavailable(CPU)
    assert why_not is not None and "older than 2.5" in why_not
    for setting, steps in (("on", 1), ("auto", 10**6), (True, 1)):
        compiled, why = compilation.decide(setting, CPU, steps)
        assert compiled is False
        assert why.startswith("off, eager fallback") and "older than 2.5" in why


def test_broken_toolchain_falls_back_with_a_reason(monkeypatch):
    """A probe that cannot compile (no C++ compiler, say) turns every setting but "off" eager,
    naming the cause; the probe runs once per device type."""
    calls = []

    def no_compiler(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("no working C++ compiler found\nsecond line")

    monkeypatch.setattr(compilation, "_probed", {})
    monkeypatch.setattr(compilation.torch, "compile", no_compiler)
    for setting in ("on", "auto"):
        compiled, why = compilation.decide(setting, CPU, 10**6)
        assert compiled is False
        assert why == "off, eager fallback: RuntimeError: no working C++ compiler found"
    assert len(calls) == 1
    assert compilation.decide("off", CPU, 10**6) == (False, "off (params.compile)")


# ------------------------------------------------------------------ fallback on compiler errors
def compiled_readout() -> tuple[MLPReadout, compilation._Region]:
    torch.manual_seed(0)
    head = MLPReadout(8, 2)
    compilation.compile_regions(head)
    region = head.__dict__["forward"]
    assert isinstance(region, compilation._Region)
    return head, region


def compiler_error(kind: str) -> Exception:
    """An error of dynamo (any ``TorchDynamoException``) or of inductor (a failed C++ build)."""
    from torch._dynamo.exc import TorchDynamoException
    from torch._inductor.exc import CppCompileError

    if kind == "dynamo":
        return type("BackendBroke", (TorchDynamoException,), {})("backend rejected it\nmore")
    return CppCompileError(["g++", "kernel.cpp"], "g++: not found")


@pytest.mark.parametrize("kind", ["dynamo", "inductor"])
def test_compiler_error_falls_back_with_one_warning(kind, caplog):
    error = compiler_error(kind)
    head, region = compiled_readout()
    calls = []

    def broken(*args, **kwargs):
        calls.append(args)
        raise error

    region.compiled = broken
    x = torch.randn(5, 8)
    with caplog.at_level(logging.INFO, logger="autogcn"):
        first = head(x)
        second = head(torch.randn(4, 8))
    torch.testing.assert_close(first, MLPReadout.forward(head, x))
    assert second.shape == (4, 2)
    assert len(calls) == 1  # given up after the first failure
    warnings = [r for r in caplog.records if r.name == "autogcn"]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    line = warnings[0].getMessage()
    assert "\n" not in line and "MLPReadout.forward" in line and type(error).__name__ in line
    assert region.compiled is None


def test_other_errors_propagate(caplog):
    head, region = compiled_readout()

    def buggy(*args, **kwargs):
        raise ValueError("a bug in the region")

    region.compiled = buggy
    with caplog.at_level(logging.INFO, logger="autogcn"), pytest.raises(ValueError, match="bug"):
        head(torch.randn(5, 8))
    assert region.compiled is buggy and not caplog.records


def test_bad_input_raises_and_keeps_the_region_compiled(caplog):
    """A shape error in the inputs is the caller's error, not the compiler's: it propagates as
    eager would raise it, no "compile: ... failed" line is logged and the region stays
    compiled for the next (good) input."""
    head, region = compiled_readout()
    head(torch.randn(5, 8))
    with caplog.at_level(logging.INFO, logger="autogcn"), pytest.raises(RuntimeError):
        head(torch.randn(5, 7))
    assert not [r for r in caplog.records if r.name == "autogcn"], caplog.text
    assert region.compiled is not None and compilation.is_compiled(head)


def test_eager_undoes_compile_regions():
    torch.manual_seed(0)
    net = build_net("AUTOGCN", LEVELS["node"], net_params("AUTOGCN"))
    assert not compilation.is_compiled(net)
    assert compilation.compile_regions(net) == sum(
        len(type(m).compiled_regions) for m in net.modules()
        if getattr(type(m), "compiled_regions", ()))
    assert compilation.is_compiled(net)
    compilation.eager(net)
    assert not compilation.is_compiled(net)
    g, x, snorm_n = inputs("AUTOGCN", "node", SIZES["node"][0])
    assert compiled_backward_nodes(net.train()(g, x, snorm_n)) == 0


# ------------------------------------------------------------------ config and command line
@pytest.mark.parametrize("value, expected", [("auto", "auto"), ("on", "on"), ("off", "off"),
                                             (True, "on"), (False, "off")])
def test_config_accepts(value, expected):
    assert validate({"model": "GCN", "params": {"compile": value}})["params"]["compile"] == expected


def test_config_default_is_auto():
    assert validate({"model": "GCN"})["params"]["compile"] == "auto"


@pytest.mark.parametrize("value", ["sometimes", "ON", "", None, 2, ["on"]])
def test_config_rejects(value):
    with pytest.raises(ConfigError, match="compile"):
        validate({"model": "GCN", "params": {"compile": value}})


def tiny_zinc(tmp_path):
    gen = torch.Generator().manual_seed(0)
    for split, n in (("train", 8), ("val", 4), ("test", 4)):
        write_zinc(tmp_path / "zinc", split, [molecule(gen, 5 + i % 4) for i in range(n)])
    return tmp_path / "zinc"


#: The GCN ZINC config shrunk to the nets of the tests above (same compiled regions).
ZINC_ARGS = ["--config", "configs/molecules_graph_regression_GCN_ZINC.json", "--epochs", "2",
             "--L", "2", "--hidden_dim", "8", "--out_dim", "8", "--dropout", str(DROPOUT),
             "--in_feat_dropout", str(DROPOUT), "--batch_size", "4", "--use_gpu", "False"]


def run_zinc(tmp_path, caplog, *extra: str) -> tuple[int, dict | None]:
    out = tmp_path / "out"
    args = [*ZINC_ARGS, "--data_dir", str(tiny_zinc(tmp_path)), "--out_dir", str(out), *extra]
    with caplog.at_level(logging.INFO, logger="autogcn"):
        code = runner.main(ZINC, args)
    folders = [p for p in out.iterdir() if p.is_dir()] if out.exists() else []
    res = json.loads((folders[0] / "results.json").read_text()) if len(folders) == 1 else None
    return code, res


def test_cli_compile_on_trains_compiled(tmp_path, caplog):
    code, res = run_zinc(tmp_path, caplog, "--compile", "True")
    assert code == 0 and res is not None and res["status"] == "complete"
    assert [m for m in caplog.messages if m.startswith("compile: ")][0] == "compile: on (on)"
    assert res["config"]["params"]["compile"] == "on"
    (run,) = res["runs"]
    assert run["compiled"] is True
    assert isinstance(run["compile_warmup_s"], float) and run["compile_warmup_s"] >= 0
    assert sum(m.startswith("compile: warm-up") for m in caplog.messages) == 1


def test_cli_default_on_tiny_data_stays_eager(tmp_path, caplog):
    code, res = run_zinc(tmp_path, caplog)
    assert code == 0 and res is not None and res["status"] == "complete"
    lines = [m for m in caplog.messages if m.startswith("compile: ")]
    assert len(lines) == 1 and lines[0].startswith("compile: off (auto: 4 optimiser steps")
    (run,) = res["runs"]
    assert run["compiled"] is False and run["compile_warmup_s"] is None


def test_cli_rejects_a_bad_compile_value(tmp_path, capsys):
    out = tmp_path / "out"
    args = [*ZINC_ARGS, "--data_dir", str(tiny_zinc(tmp_path)), "--out_dir", str(out),
            "--compile", "sometimes"]
    assert runner.main(ZINC, args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "compile" in err[0]
    assert "sometimes" in err[0]
    assert not out.exists()


# ------------------------------------------------------------------ deep copies
def test_deepcopy_of_a_compiled_net_uses_its_own_parameters():
    torch.manual_seed(0)
    net = build_net("AUTOGCN", LEVELS["graph"], net_params("AUTOGCN")).eval()
    compilation.compile_regions(net)
    g, x, snorm_n = inputs("AUTOGCN", "graph", SIZES["graph"][0])
    with torch.no_grad():
        before = net(g, x, snorm_n)
    twin = copy.deepcopy(net)
    assert compilation.is_compiled(twin)
    twin_regions = [m.__dict__[name] for m in twin.modules()
                    for name in getattr(type(m), "compiled_regions", ())]
    assert twin_regions and all(r.module in set(twin.modules()) for r in twin_regions)
    with torch.no_grad():
        torch.testing.assert_close(twin(g, x, snorm_n), before)
        # parameters only compiled regions read: the readout's last bias and a gate's bias
        twin.head.out.bias.add_(1.0)
        twin.stack.layers[0].bias.add_(0.5)
        after = twin(g, x, snorm_n)
        reference = copy.deepcopy(twin)
        compilation.eager(reference)
        expected = reference(g, x, snorm_n)
        again = net(g, x, snorm_n)
    torch.testing.assert_close(after, expected)
    assert not torch.allclose(after, before)
    torch.testing.assert_close(again, before, rtol=0, atol=0)
    twin.train()
    loss_of(twin, twin(g, x, snorm_n)).backward()
    assert all(p.grad is None for p in net.parameters())
    assert twin.head.out.bias.grad is not None


def test_cli_compile_on_with_nothing_to_compile_says_so(tmp_path, caplog, monkeypatch):
    """A net with no compiled region (here GCN with its readout's region taken away) trains
    eagerly under ``--compile on``, and the log and the record say so, not ``on``."""
    monkeypatch.setattr(MLPReadout, "compiled_regions", ())
    code, res = run_zinc(tmp_path, caplog, "--compile", "True")
    assert code == 0 and res is not None and res["status"] == "complete"
    lines = [m for m in caplog.messages if m.startswith("compile: ")]
    assert lines == ["compile: off: no part of GCN is compiled (docs/performance.md)"]
    assert [run["compiled"] for run in res["runs"]] == [False]

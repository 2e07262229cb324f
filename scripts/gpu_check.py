"""Prove the GPU path on this machine: ``python -m scripts.gpu_check [--quick]`` prints one
``PASS|FAIL|SKIP <check> <detail>`` line per check and a summary; exit 1 when a check fails.
Without a GPU it says so in one line and exits 0. The checks, and what they found on an H200:
docs/performance.md, "The GPU check"; ``tests/test_gpu.py`` runs the in-process ones on the CPU."""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json
import math
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path

from train.interrupts import startup

with startup():
    import torch

    from autogcn.graph import Graph
    from autogcn.propagation import propagate
    from autogcn.sparse import csr_matrix, csr_parts, sparse_mm, sparse_product
    from data.common import graph_size_norm
    from data.sbm import generate_sbm_split, sbm_config
    from layers import propagation as P
    from layers.autogcn_layer import GATES, MODES, AutoGCNLayer
    from nets.gnn_net import NetIO
    from nets.registry import MODELS, build_net, optimizer_groups
    from scripts.bench.autogcn import make_batches
    from scripts.bench.timing import interleave, published, timed, twins
    from scripts.cli import ArgumentParser
    from tests import data_writers as W
    from train import compilation
    from train.config import apply_overrides, validate
    from train.errors import run_tool
    from train.runner import load_data
    from train.tasks import NODE, SBM, SUPERPIXELS, ZINC, task_for_dataset

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = {"torch": "torch", "numpy": "numpy", "scipy": "scipy", "yaml": "pyyaml",
            "tqdm": "tqdm", "skimage": "scikit-image"}


class Skip(Exception):
    """A check that cannot run here (its message says why)."""


# ----------------------------------------------------------------------------------- checks
def check_env() -> str:
    missing = [pkg for mod, pkg in REQUIRED.items() if importlib.util.find_spec(mod) is None]
    if not any(importlib.util.find_spec(m) for m in ("tensorboardX", "tensorboard")):
        missing.append("tensorboardX (or tensorboard)")
    name = torch.cuda.get_device_name(0)
    cap = ".".join(map(str, torch.cuda.get_device_capability(0)))
    detail = (f"{name} (sm {cap}, {torch.cuda.device_count()} visible), torch "
              f"{torch.__version__}, CUDA {torch.version.cuda}, Python {platform.python_version()}")
    if missing:
        raise AssertionError(f"{detail}; missing packages: {', '.join(missing)} "
                             "(pip install -r requirements.txt)")
    return detail


def check_csr_product(device: str = "cuda") -> str:
    gen = torch.Generator().manual_seed(0)
    cases = 0
    reads_out = False
    for dtype, index_dtype, n, nnz in itertools.product(
            (torch.float32, torch.float64), (torch.int32, torch.int64), (1, 37), (0, 5, 200)):
        rows = torch.randint(0, n, (nnz,), generator=gen).sort().values
        cols = torch.randint(0, n, (nnz,), generator=gen)  # unsorted within rows, repeats likely
        counts = torch.bincount(rows, minlength=n)
        indptr = torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)])
        values = torch.randn(nnz, generator=gen, dtype=dtype)
        dense = torch.zeros(n, n, dtype=dtype).index_put_((rows, cols), values, accumulate=True)
        x = torch.randn(n, 6, generator=gen, dtype=dtype)
        m = torch.sparse_csr_tensor(indptr.to(index_dtype), cols.to(index_dtype), values, (n, n),
                                    device=device, check_invariants=False)
        xd = x.to(device)
        tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float32 else {}
        expected = dense @ x
        nan_out = torch.full((n, 6), float("nan"), dtype=dtype, device=device)
        if 0 < nnz <= n * n:  # cuSPARSE takes no more entries than cells (sparse_mm goes dense)
            raw = torch.addmm(nan_out.clone(), m, xd, beta=0, out=nan_out.clone())
            reads_out |= bool(torch.isnan(raw).any())
        torch.testing.assert_close(sparse_mm(m, xd, out=nan_out.clone()).cpu(), expected, **tol)
        torch.testing.assert_close(sparse_mm(m, xd).cpu(), expected, **tol)
        base = torch.randn(n, 6, generator=gen, dtype=dtype)
        acc = sparse_mm(m, xd, out=base.clone().to(device), accumulate=True)  # beta = 1
        torch.testing.assert_close(acc.cpu(), base + expected, **tol)
        cases += 1
    # the backward through the stored transpose, in float64
    n = 12
    ptr = torch.tensor([0, 2, 2, 5, 6, 6, 8, 9, 9, 11, 12, 12, 14])
    idx = torch.tensor([3, 1, 0, 7, 7, 2, 11, 4, 9, 0, 5, 6, 10, 1])
    vals = torch.randn(idx.numel(), generator=gen, dtype=torch.float64)
    m = csr_matrix(ptr, idx, vals, n).to(device)
    dense = m.to_dense()
    mt = dense.t().contiguous().to_sparse_csr()
    x = torch.randn(n, 3, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: sparse_product(t, csr_parts(m), csr_parts(mt)), (x,))
    note = ("raw addmm reads a NaN out with beta=0: the project's zero-fill is needed"
            if reads_out else "raw addmm ignores out with beta=0")
    return f"{cases} products + gradcheck; {note}"


def _graphs(device: str):
    """A directed batch with zero-in-degree nodes, isolated nodes, repeated edges, a 1-node
    graph and an empty graph, on ``device`` and on the CPU."""
    gen = torch.Generator().manual_seed(1)
    parts = []
    for n, m in ((9, 25), (1, 0), (14, 40), (0, 0), (6, 4)):
        src = torch.randint(0, max(n - 2, 1), (m,), generator=gen)
        dst = torch.randint(0, max(n - 1, 1), (m,), generator=gen)
        if m:
            src, dst = torch.cat([src, src[:2]]), torch.cat([dst, dst[:2]])  # repeated edges
        parts.append(Graph(src, dst, n))
    cpu = Graph.batch(parts).build_structure()
    return cpu, cpu.to(device)


def _close(a, b, what: str, **tol) -> None:
    torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), msg=lambda m: f"{what}: {m}",
                               **tol)


def _same_state(module, twin, what: str) -> None:
    """The device ``twin``'s parameters, gradients and buffers equal the CPU ``module``'s."""
    for (name, p), q in zip(module.named_parameters(), twin.parameters(), strict=True):
        assert (p.grad is None) == (q.grad is None), f"{what} grad {name}: only one is None"
        _close(q, p, f"{what} {name}")
        if p.grad is not None:
            _close(q.grad, p.grad, f"{what} grad {name}")
    buffers = dict(twin.named_buffers())
    for name, buf in module.named_buffers():
        _close(buffers[name], buf, f"{what} buffer {name}")


def check_primitives(device: str = "cuda") -> str:
    cpu, gpu = _graphs(device)
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(cpu.num_nodes(), 2, 3, generator=gen, dtype=torch.float64)
    w = torch.rand(cpu.num_edges(), 2, generator=gen, dtype=torch.float64)
    ops: dict[str, Callable] = {
        "propagate_in": lambda g, a, b: propagate(g, a, "in"),
        "propagate_out": lambda g, a, b: propagate(g, a, "out"),
        "aggregate_sum": lambda g, a, b: P.aggregate(g, a, "sum"),
        "aggregate_mean": lambda g, a, b: P.aggregate(g, a, "mean"),
        "aggregate_max": lambda g, a, b: P.aggregate(g, a, "max"),
        "weighted_aggregate": lambda g, a, b: P.weighted_aggregate(g, a, b),
        "edge_softmax": lambda g, a, b: P.edge_softmax(g, b),
        "readout_mean": lambda g, a, b: P.readout(g, a, "mean"),
        "readout_max": lambda g, a, b: P.readout(g, a, "max"),
    }
    for name, op in ops.items():
        grads = []
        for g, dev in ((cpu, "cpu"), (gpu, device)):
            a = x.detach().to(dev).requires_grad_()  # a fresh leaf on each side
            b = w.detach().to(dev).requires_grad_()
            out = op(g, a, b)
            out.backward(torch.ones_like(out))
            grads.append((out, a.grad, b.grad))
        for i, label in enumerate(("output", "grad x", "grad w")):
            if grads[0][i] is not None:
                _close(grads[1][i], grads[0][i], f"{name} {label}")
    return f"{len(ops)} primitives, outputs and gradients equal"


def check_autogcn_layer(device: str = "cuda") -> str:
    cpu, gpu = _graphs(device)
    n = cpu.num_nodes()
    count = 0
    for mode, gate, filters, order in itertools.product(
            MODES, GATES, (("low", "mid", "high"), ("low", "high"), ("mid",)),
            ("propagate", "project")):
        torch.manual_seed(count)
        layer = AutoGCNLayer(6, 5, mode=mode, gate=gate, filters=filters, num_banks=2,
                             residual=False, single_a_init=0.3).double()
        with torch.no_grad():
            for p in layer.parameters():
                p.add_(0.1 * torch.randn_like(p))
        layer.order = order
        twin = copy.deepcopy(layer).to(device)
        x = torch.randn(n, 6, dtype=torch.float64)
        snorm = torch.rand(n, 1, dtype=torch.float64)
        grad = torch.randn(n, 5, dtype=torch.float64)
        xs = [x.clone().requires_grad_(), x.to(device).requires_grad_()]
        outs = [layer(cpu, xs[0], snorm), twin(gpu, xs[1], snorm.to(device))]
        for out, g in zip(outs, (grad, grad.to(device)), strict=True):
            out.backward(g)
        what = f"{mode}/{gate}/{','.join(filters)}/{order}"
        _close(outs[1], outs[0], f"{what} output")
        _close(xs[1].grad, xs[0].grad, f"{what} grad x")
        _same_state(layer, twin, what)
        count += 1
    return f"{count} variants (mode x gate x filters x order, 2 banks), float64"


# a task of each level and input kind, with small input and output sizes
LEVELS = {"node": (SBM, 3, 2), "graph_embedding": (ZINC, 28, 1),
          "graph_linear": (SUPERPIXELS, 3, 10), "single_graph": (NODE, 7, 3)}


def check_models(device: str = "cuda") -> str:
    count = 0
    for model, (level, (task, *sizes)) in itertools.product(sorted(MODELS), LEVELS.items()):
        io = NetIO(task.level, task.input_kind, *sizes)
        net_params = {"L": 2, "hidden_dim": 4 if model == "GAT" else 8, "out_dim": 8,
                      "n_heads": 2, "dropout": 0.0, "in_feat_dropout": 0.0}
        if model == "OPTBASIS":
            # On these small graphs a Krylov space of order 10 is exhausted: norms of 1e-6 to
            # 3e-3, above the floor, turn rounding (the float32 operator differs by an ulp
            # between devices) into unit basis vectors that differ by device (an H200 run:
            # alpha off by 3e-4). Up to order 3 every norm is 0.05 or more, or exactly floored.
            net_params["poly_order"] = 3
        params = validate({"model": model, "net_params": net_params})["net_params"]
        cpu, gpu = _graphs(device)
        if task.adds_self_loops(model, params):
            cpu = cpu.add_self_loops().build_structure()
            gpu = cpu.to(device)
        n = cpu.num_nodes()
        gen = torch.Generator().manual_seed(count)
        if io.input_kind == "embedding" and io.level != "single_graph":
            feat = torch.randint(0, io.in_dim, (n,), generator=gen)
        else:
            feat = torch.rand(n, io.in_dim, generator=gen, dtype=torch.float64)
        torch.manual_seed(count)
        net = build_net(model, io, params).double()
        for module in net.modules():  # random masks differ between devices: no dropout
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        twin = copy.deepcopy(net).to(device)
        losses = []
        for g, m, dev in ((cpu, net, "cpu"), (gpu, twin, device)):
            m.train()
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            # from the CPU graph on both sides: CUDA's float32 rsqrt differs from the CPU's by
            # an ulp, and graph norm carries that into every gradient
            snorm = graph_size_norm(cpu).double().to(dev) if io.level != "single_graph" else None
            out = m(g, feat.to(dev), snorm) if snorm is not None else m(g, feat.to(dev))
            loss = (out.double() ** 2).mean()
            aux = getattr(m, "auxiliary_loss", None)
            if callable(aux):
                loss = loss + aux()
            loss.backward()
            opt.step()
            losses.append(loss)
        _close(losses[1], losses[0], f"{model} {level} loss")
        _same_state(net, twin, f"{model} {level} after the step:")
        count += 1
    return f"{count} model x task-level pairs, one SGD step each, float64"


#: Largest difference allowed between compiled and eager, relative to the largest magnitude of
#: the tensor compared (of all gradients, for a gradient): float32 sums over thousands of nodes
#: and eight layers, in another order in the fused kernels, differ by far more than a rounding.
F32_SCALED = 1e-3


def check_compiled(device: str = "cuda", graphs: int = 256, epochs: int = 3,
                   models: tuple[str, ...] = ("AUTOGCN", "GCN")) -> str:
    """Compiled against eager on ``device`` (docs/performance.md, "The GPU check"), per model
    at its node-level (SBM_CLUSTER) and graph-level (ZINC) config, on SBM_CLUSTER graphs: one
    step compared (:func:`_same_step`), then ``epochs`` timed epochs over two batch sizes that
    must compile nothing; reports compiled/eager epoch time and the warm-up."""
    import torch._inductor.config  # the compiler, loaded only where it is used

    dev = torch.device(device)
    why_not = compilation.unavailable(dev)
    if why_not is not None:
        raise Skip(f"compiling is unavailable on {device} ({why_not}): runs train eagerly")
    sbm = sbm_config("SBM_CLUSTER")
    split = generate_sbm_split("SBM_CLUSTER", "train", n=max(graphs, 2))
    sizes = max(graphs * 2 // 3, 1)  # two batches of different sizes (dynamic shapes)
    notes, worst = [], 0.0

    def epoch(net: torch.nn.Module, opt: torch.optim.Optimizer, batches: list) -> None:
        for g, _, snorm in batches:
            opt.zero_grad()
            (net(g, g.ndata["feat"], snorm).float() ** 2).mean().backward()
            opt.step()

    # dropout masks drawn as eager draws them, should a config use dropout
    with torch._inductor.config.patch(fallback_random=True):
        for (level, dataset), model in itertools.product(
                (("node", "SBM_CLUSTER"), ("graph", "ZINC")), models):
            cfg = published(dataset, model)
            loops = task_for_dataset(dataset).adds_self_loops(model, cfg["net_params"])
            batches = make_batches(split.with_self_loops() if loops else split, sizes, dev)
            io = NetIO(level, "embedding", sbm.vocab_size, sbm.num_classes if level == "node"
                       else 1)
            nets = twins(model, cfg, io, dev, (False, True))
            what = f"{model} {level}"
            first, diff = _same_step(nets[False], nets[True], batches[0], dev, what)
            worst = max(worst, diff)
            # the first epoch is untimed: the second batch size may compile there
            t = interleave({m: partial(epoch, net, torch.optim.Adam(net.parameters(), lr=1e-3),
                                       batches) for m, net in nets.items()}, epochs, dev)
            grown = sum(t.recompiled.values())
            assert grown == 0, f"{what}: {grown} graph(s) compiled during the timed epochs " \
                "(a recompilation per batch shape)"
            eager, comp = t.median(False), t.median(True)
            warm = max(first - comp / len(batches), 0.0)
            notes.append(f"{what} compiled/eager {comp / eager:.2f} ({eager / comp:.2f}x), "
                         f"warm-up {warm:.1f} s")
    return (f"outputs, gradients and BatchNorm statistics equal (largest difference "
            f"{worst:.1e} of scale); {'; '.join(notes)}")


def _same_step(net, twin, batch, dev, what: str) -> tuple[float, float]:
    """One forward and backward of ``net`` and of its compiled ``twin`` on ``batch``, in train
    mode, compared: outputs, loss, every gradient and the BatchNorm statistics within
    :data:`F32_SCALED`. Returns the compiled step's seconds (its first call compiles) and the
    largest difference relative to the tensor's scale."""
    g, _, snorm = batch
    results, seconds = [], 0.0

    def step(m) -> None:
        out = m(g, g.ndata["feat"], snorm)
        loss = (out.float() ** 2).mean()
        loss.backward()
        results.append((out, loss))

    for m in (net, twin):
        m.train()
        m.zero_grad(set_to_none=True)
        torch.manual_seed(1)
        seconds = timed(lambda m=m: step(m), dev)
    (out_e, loss_e), (out_c, loss_c) = results
    grads = [(f"grad {name}", q.grad, p.grad) for (name, p), q in
             zip(net.named_parameters(), twin.parameters(), strict=True)]
    # a gradient is measured against the largest gradient of the net, as a bias before
    # BatchNorm has a gradient that is all cancellation
    grad_scale = max((float(want.abs().max()) for _, _, want in grads
                      if want is not None and want.numel()), default=0.0)
    twin_buffers = dict(twin.named_buffers())
    buffers = [(f"buffer {name}", twin_buffers[name], buf) for name, buf in net.named_buffers()]
    worst = 0.0
    for name, got, want in [("output", out_c, out_e), ("loss", loss_c, loss_e), *grads, *buffers]:
        assert (got is None) == (want is None), f"{what} {name}: only one is None"
        if want is None or not want.numel():
            continue
        got, want = got.detach(), want.detach()
        scale = max(grad_scale if name.startswith("grad") else float(want.abs().max()), 1e-12)
        # within F32_SCALED of the scale; BatchNorm's batch count, an integer, exactly
        _close(got, want, f"{what} {name}", rtol=0.0,
               atol=F32_SCALED * scale if want.is_floating_point() else 0.0)
        diff = float((got.float() - want.float()).abs().max())
        assert math.isfinite(diff), f"{what} {name}: not finite"
        worst = max(worst, diff / scale)
    return seconds, worst


def check_sync_free_step(device: str = "cuda", tmp: Path | None = None,
                         modes: tuple[bool, ...] = (False, True)) -> str:
    """AutoGCN and GCN at their published ZINC configs, eager and compiled (``modes``), train
    through the runner's loop (``GraphBatches.train_step``) under
    ``torch.cuda.set_sync_debug_mode("error")`` after a warm-up epoch: no step waits for the
    GPU. On the CPU the same steps run without the sync check (``tests/test_sync_free_step.py``)."""
    with tempfile.TemporaryDirectory(prefix="sync_", dir=tmp) as name:
        W.write_tiny_zinc(Path(name), {"train": 48, "val": 8, "test": 8})
        dev, steps = torch.device(device), 0
        for model, compiled in itertools.product(("AUTOGCN", "GCN"), modes):
            cfg = apply_overrides(published("ZINC", model), {
                "data_dir": name, "batch_size": "16", "loader_workers": "0"})
            _, io, make_loop = load_data(ZINC, cfg)
            loop = make_loop(0, 1, dev)
            net = build_net(model, io, cfg["net_params"]).to(dev)
            if compiled and (compilation.unavailable(dev) or not compilation.compile_regions(net)):
                continue
            opt = torch.optim.Adam(optimizer_groups(net, cfg["params"], cfg["net_params"]),
                                   lr=1e-3)
            batches = list(loop.loaders["train"])
            for batch in batches:  # warm-up: lazy initialisation and compiling may sync
                loop.train_step(net, opt, batch)
            if dev.type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.set_sync_debug_mode("error")
            try:
                for batch in batches:
                    loop.train_step(net, opt, batch)
                    steps += 1
            finally:
                if dev.type == "cuda":
                    torch.cuda.set_sync_debug_mode(0)
            loop.close()
    return f"{steps} training steps (AutoGCN, GCN; eager, compiled) without a host sync"


def _run(cmd: list[str], timeout: int = 240) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise AssertionError(f"exit {proc.returncode}: {' | '.join(tail)}")
    return proc


def _finished_on_gpu(out: Path) -> tuple[Path, dict]:
    """The one run folder under ``out`` and its results, complete and trained on CUDA."""
    (results,) = out.rglob("results.json")
    res = json.loads(results.read_text())
    assert res["status"] == "complete", f"status {res['status']}"
    assert res["device"].startswith("cuda"), f"trained on {res['device']}"
    return results.parent, res


#: Per main script (``main_<task>.py``): its config, the tiny data written for it (a writer
#: of tests/data_writers.py and its arguments, or None: generated by the script) and the
#: options that keep it small; ``{tmp}`` is the check's folder.
MAIN_RUNS = {
    "SBMs_node_classification": ("SBMs_node_clustering_AUTOGCN_PATTERN", "sbm", None,
                                 ["--max_graphs", "16", "--batch_size", "8"]),
    "molecules_graph_regression": ("molecules_graph_regression_AUTOGCN_ZINC", "zinc",
                                   ("write_tiny_zinc", {"train": 24, "val": 8, "test": 8}),
                                   ["--batch_size", "8"]),
    # validation = the first 5000 training images
    "superpixels_graph_classification": (
        "superpixels_graph_classification_AUTOGCN_MNIST", "mnist", ("write_mnist", 5012, 12),
        ["--cache_dir", "{tmp}/cache", "--max_graphs", "12", "--batch_size", "4"]),
    "node_classification": ("node_classification_AUTOGCN_SQUIRREL", "squirrel",
                            ("write_squirrel",), []),
}


def _main_script(task: str, tmp: Path) -> str:
    """Train 2 epochs on tiny data with --gpu_id 0, then evaluate the checkpoint on the GPU."""
    config, data, writer, options = MAIN_RUNS[task]
    if writer:
        getattr(W, writer[0])(tmp / data, *writer[1:])
    out = tmp / f"out_{task}"
    _run([sys.executable, f"main_{task}.py", "--config", f"configs/{config}.json", "--gpu_id",
          "0", "--out_dir", str(out), "--epochs", "2", "--L", "2", "--hidden_dim", "16",
          "--runs", "1", "--data_dir", str(tmp / data),
          *(option.format(tmp=tmp) for option in options)])
    folder, res = _finished_on_gpu(out)
    ckpt = folder / "checkpoints" / res["runs"][0]["checkpoint"]
    proc = _run([sys.executable, "evaluate_checkpoint.py", str(ckpt), "--use_gpu"])
    evaluated = json.loads(proc.stdout)["metrics"]
    worst = 0.0
    for split, metrics in res["runs"][0]["final"].items():
        for name, value in (metrics or {}).items():
            diff = abs(evaluated[split][name] - value)
            worst = max(worst, diff)
            assert diff <= 1e-4 * max(1.0, abs(value)), f"{split} {name}: {value} vs re-evaluated "\
                                                       f"{evaluated[split][name]}"
    return (f"{res['device']}, {res['runs'][0]['s_per_epoch']:.2f} s/epoch, checkpoint "
            f"re-evaluated on the GPU (largest difference {worst:.1e})")


def check_sweep(tmp: Path) -> str:
    W.write_tiny_zinc(tmp / "sweep_zinc", {"train": 16, "val": 8})
    _run([sys.executable, "-m", "scripts.sweep", "ablation", "--gpus", "0", "--only",
          "full_ZINC", "--runs", "1", "--out_root", str(tmp / "sweep"), "--data_dir",
          f"ZINC={tmp / 'sweep_zinc'}", "--", "--epochs", "1", "--L", "2"], timeout=300)
    _, res = _finished_on_gpu(tmp / "sweep")
    return f"cell full_ZINC complete on {res['device']}"


def check_benchmark(tmp: Path) -> str:
    W.write_tiny_zinc(tmp / "bench_zinc", {"train": 128})
    proc = _run([sys.executable, "-m", "scripts.bench", "autogcn", "--device", "cuda",
                 "--datasets", "SBM_CLUSTER,ZINC", "--graphs", "128", "--epochs", "3",
                 "--zinc_dir", str(tmp / "bench_zinc")], timeout=600)
    lines = [line.split("(")[0].strip() for line in proc.stdout.splitlines()
             if line.startswith(("AutoGCN/GCN epoch time ratio on", "compiled/eager"))]
    assert lines, "no ratio printed"
    return "; ".join(lines)


# ----------------------------------------------------------------------------------- driver
def _main(argv: list[str] | None) -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="only the in-process checks, compiled included (no main scripts, "
                             "sweep, benchmark)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print(f"SKIP gpu_check no CUDA device here (torch {torch.__version__}, CUDA build "
              f"{torch.version.cuda}): nothing to check")
        return 0
    t0 = time.time()
    results = []
    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp_name:
        tmp = Path(tmp_name)
        checks: dict[str, Callable[[], str]] = {
            "env": check_env, "csr_product": check_csr_product, "primitives": check_primitives,
            "autogcn_layer": check_autogcn_layer, "models": check_models,
            "compiled": check_compiled,
            "sync_free_step": partial(check_sync_free_step, "cuda", tmp)}
        if not args.quick:
            checks |= {f"main_{task}": partial(_main_script, task, tmp) for task in MAIN_RUNS}
            checks |= {"sweep": partial(check_sweep, tmp),
                       "benchmark": partial(check_benchmark, tmp)}
        for name, fn in checks.items():
            start = time.time()
            try:
                detail, state = fn(), "PASS"
            except Skip as why:
                detail, state = str(why), "SKIP"
            except Exception as err:  # every failure is reported on its line; go on
                last = traceback.extract_tb(err.__traceback__)[-1]
                detail = (f"{type(err).__name__}: {' '.join(str(err).split())[:300]} "
                          f"({Path(last.filename).name}:{last.lineno})")
                state = "FAIL"
            results.append(state)
            print(f"{state} {name} {detail} [{time.time() - start:.0f}s]", flush=True)
    summary = {s: results.count(s) for s in ("PASS", "FAIL", "SKIP")}
    print(f"summary: {summary['PASS']} passed, {summary['FAIL']} failed, {summary['SKIP']} "
          f"skipped in {time.time() - t0:.0f}s")
    return 1 if summary["FAIL"] else 0


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit code: 0 all passed (or no GPU), 1 a check failed,
    2 a bad option, 130/143 interrupted (as every tool, ``scripts/cli.py``)."""
    return run_tool(_main, argv)


if __name__ == "__main__":
    sys.exit(main())

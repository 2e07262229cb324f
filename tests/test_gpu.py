"""The GPU checks of ``scripts/gpu_check.py`` and the device behaviour of the graph core: on CUDA
where a GPU exists (skipped elsewhere), each with a CPU twin run everywhere.

The in-process checks compare a computation on the CPU with the same computation on the device.
Run with ``"cpu"`` as the device, ``Graph.to("cpu")`` would hand back the very same graph and the
checks would compare a graph with itself; the CPU twins therefore move graphs with a rebuilt copy
(new tensors, index structure built anew, nothing cached shared), so each side is computed on its
own. What only CUDA can show (kernels, atomics, cuSPARSE) is left to the CUDA tests.
"""

from __future__ import annotations

import copy
import re

import pytest
import torch

from autogcn.graph import Graph
from autogcn.propagation import propagate
from layers.autogcn_layer import AutoGCNConv, AutoGCNLayer
from scripts import gpu_check
from tests.helpers import rand_graph

IN_PROCESS = [gpu_check.check_csr_product, gpu_check.check_primitives,
              gpu_check.check_autogcn_layer, gpu_check.check_models]
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda)]


def rebuilt(g: Graph) -> Graph:
    """An independent copy of ``g``: fresh tensors, no cached structure or derived objects."""
    return Graph(g.src.clone(), g.dst.clone(), g.num_nodes(),
                 ndata={k: v.clone() for k, v in g.ndata.items()},
                 edata={k: v.clone() for k, v in g.edata.items()},
                 batch_num_nodes=g.batch_num_nodes().clone(),
                 batch_num_edges=g.batch_num_edges().clone())


@pytest.fixture
def independent_cpu_copies(monkeypatch):
    """``Graph.to("cpu")`` returns a rebuilt copy instead of the graph itself (see above)."""
    built = []

    def to(self, device, non_blocking=False):
        assert torch.device(device).type == "cpu"
        built.append(rebuilt(self))
        return built[-1]

    monkeypatch.setattr(Graph, "to", to)
    return built


@pytest.mark.parametrize("check", IN_PROCESS, ids=lambda f: f.__name__)
def test_checks_cpu_twin(check, independent_cpu_copies):
    assert check("cpu")
    if check is not gpu_check.check_csr_product:  # that one compares with dense matrices
        assert independent_cpu_copies, "the check compared a graph with itself"


@needs_cuda
@pytest.mark.parametrize("check", IN_PROCESS, ids=lambda f: f.__name__)
def test_checks_on_cuda(check):
    assert check("cuda")


@needs_cuda
def test_environment_on_cuda():
    assert gpu_check.check_env()


# ------------------------------------------------------------- the compiled-against-eager check
# Compiling for real costs tens of seconds on a cold CPU cache: the CPU tests run the check's
# own code (build, copy, compare, time, count recompilations) with compile_regions replaced by a
# stand-in; compiled and eager agreeing on a CPU is tests/test_compilation.py's to show.
@needs_cuda
def test_compiled_check_on_cuda():
    assert "equal" in gpu_check.check_compiled("cuda")


def test_compiled_check_cpu_twin(stand_in_compiler):
    detail = gpu_check.check_compiled("cpu", graphs=6, epochs=1)
    assert len(stand_in_compiler) == 4  # AutoGCN and GCN, node and graph level
    for what in ("AUTOGCN node", "GCN node", "AUTOGCN graph", "GCN graph"):
        assert re.search(rf"{what} compiled/eager \d+\.\d+ \(\d+\.\d+x\), warm-up", detail)
    assert "largest difference 0.0e+00" in detail  # the stand-in compiles nothing


def test_compiled_check_fails_when_the_compiled_copy_differs(monkeypatch, stand_in_compiler):
    from train import compilation

    def perturbed(net, device=None):
        with torch.no_grad():
            for p in net.parameters():  # every weight 1 % larger
                p.mul_(1.01)
        return 1

    monkeypatch.setattr(compilation, "compile_regions", perturbed)
    with pytest.raises(AssertionError, match=r"AUTOGCN node (output|loss|grad)"):
        gpu_check.check_compiled("cpu", graphs=6, epochs=1)


def test_compiled_check_fails_on_a_recompilation_per_batch(monkeypatch, stand_in_compiler):
    from scripts.bench import timing

    compiled = iter(range(1000))  # every look at the counters finds one more graph
    monkeypatch.setattr(timing, "compile_counters", lambda: (next(compiled), 0, 0))
    with pytest.raises(AssertionError, match="compiled during the timed epochs"):
        gpu_check.check_compiled("cpu", graphs=6, epochs=1, models=("GCN",))


def test_compiled_check_skips_where_compiling_cannot_work(monkeypatch):
    from train import compilation

    monkeypatch.setattr(compilation, "unavailable", lambda device: "no Triton")
    with pytest.raises(gpu_check.Skip, match="no Triton"):
        gpu_check.check_compiled("cpu")


def test_without_a_gpu_the_script_says_so_in_one_line(capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_check.main([]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("SKIP gpu_check no CUDA device")


# ------------------------------------------------------------------ the graph core on a device
def move(g: Graph, device: str) -> Graph:
    return rebuilt(g) if device == "cpu" else g.to(device)


@pytest.mark.parametrize("device", DEVICES)
def test_conv_with_edge_index_and_weights_on_the_device_equals_the_cpu(device):
    """AutoGCNConv from a PyG-style edge index with edge weights, cached, float64: outputs and
    gradients on ``device`` equal the CPU's (on the CPU: an independently built twin)."""
    g = rand_graph(30, 100, seed=3)
    w = torch.rand(100, dtype=torch.float64)
    torch.manual_seed(0)
    conv = AutoGCNConv(6, 4, num_banks=2, cached=True).double()
    twin = copy.deepcopy(conv).to(device)
    x = torch.randn(30, 6, dtype=torch.float64)
    outs, grads = [], []
    for module, dev, edge_index in ((conv, "cpu", g.edge_index),
                                    (twin, device, move(g, device).edge_index)):
        xs = x.to(dev).requires_grad_()
        for _ in range(2):  # the second call is served from the cache
            out = module(xs, edge_index, w.to(dev))
        out.sum().backward()
        outs.append(out.detach().cpu())
        grads.append((xs.grad.cpu(), module.weight.grad.cpu(), module.gamma.grad.cpu()))
    torch.testing.assert_close(outs[1], outs[0])
    for a, b in zip(grads[1], grads[0], strict=True):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_float64_propagation_on_the_device_is_float64(device):
    g = rand_graph(25, 80, seed=1)
    x = torch.randn(25, 3, dtype=torch.float64)
    counts = torch.zeros(25, 25, dtype=torch.float64).index_put_(
        (g.dst, g.src), torch.ones(80, dtype=torch.float64), accumulate=True)
    s = counts.sum(1).clamp(min=1).rsqrt()
    expected = (s[:, None] * counts * s[None, :]) @ x
    out = propagate(move(g, device), x.to(device))
    assert out.dtype == torch.float64
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_sparse_input_with_the_residual_on_the_device(device):
    g = move(rand_graph(12, 40, seed=2), device)
    layer = AutoGCNLayer(5, 5, residual=True).eval().to(device)
    dense = (torch.rand(12, 5) < 0.4).float().to(device)
    torch.testing.assert_close(layer(g, dense.to_sparse()), layer(g, dense), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_to_cuda_copies_a_graph_on_another_cuda_device():
    g = rand_graph(5, 8).to("cuda:1")
    with torch.cuda.device(0):
        moved = g.to("cuda")
        assert moved is not g and moved.device == torch.device("cuda", 0)
    with torch.cuda.device(1):
        assert g.to("cuda") is g

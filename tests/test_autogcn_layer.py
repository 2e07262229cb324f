"""The AutoGCN layer against an independent spectral computation and the paper's definitions."""

import copy
import itertools

import numpy as np
import pytest
import torch

from data.graph import Graph
from layers.autogcn_layer import GATES, MODES, AutoGCNLayer
from tests.helpers import rand_graph


def random_symmetric_graph(n: int, p: float, seed: int) -> tuple[Graph, np.ndarray]:
    """A connected-enough random undirected graph (no isolated nodes) and its dense adjacency."""
    rng = np.random.default_rng(seed)
    while True:
        upper = np.triu(rng.random((n, n)) < p, 1)
        adj = (upper | upper.T).astype(float)
        if adj.sum(1).min() > 0:
            break
    src, dst = np.nonzero(adj)
    return Graph(torch.tensor(src), torch.tensor(dst), n), adj


def spectrum(adj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of the normalised Laplacian I - D^-1/2 A D^-1/2, computed with numpy."""
    d = adj.sum(1) ** -0.5
    lap = np.eye(len(adj)) - d[:, None] * adj * d[None, :]
    return np.linalg.eigh(lap)


def paper_response(kind: str, lam: np.ndarray, p: float, a: float) -> np.ndarray:
    return {
        "low": p * (1 - a * lam),
        "high": p * (a * lam + 1 - 2 * a),
        "mid": p * ((lam - 1) ** 2 - a),
    }[kind]


def kernels(layer: AutoGCNLayer, g: Graph) -> dict[str, np.ndarray]:
    """Each filter's kernel matrix, from the layer's own propagation applied to the identity."""
    eye = torch.eye(g.num_nodes())
    with torch.no_grad():
        out = layer.filtered_inputs(g, eye)[0]  # bank 0: (filters, N, N)
    return {f: out[i].double().numpy().T for i, f in enumerate(layer.filters)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_over_filters_match_paper_frequency_response(seed):
    g, adj = random_symmetric_graph(14, 0.3, seed)
    lam, U = spectrum(adj)
    layer = AutoGCNLayer(14, 3, K=16)
    torch.manual_seed(seed)
    with torch.no_grad():  # random weights, some negative so relu matters
        layer.gamma.uniform_(-0.3, 1.0)
    grid = np.linspace(-1e-9, 1 + 1e-9, 16).astype(np.float32).astype(float)
    for i, kind in enumerate(layer.filters):
        gamma = np.maximum(layer.gamma[0, i].detach().double().numpy(), 0)
        p, a = gamma.sum(), (gamma * grid).sum() / gamma.sum()
        C = kernels(layer, g)[kind]
        spectral = U.T @ C @ U
        np.testing.assert_allclose(np.diag(spectral), paper_response(kind, lam, p, a), atol=1e-5)
        off_diag = spectral - np.diag(np.diag(spectral))
        assert np.abs(off_diag).max() < 1e-5  # the kernel is a polynomial of the Laplacian
        # the layer's own closed-form response agrees too (used for the filter plots)
        lam_t = torch.tensor(lam, dtype=torch.float32)
        np.testing.assert_allclose(layer.frequency_response(lam_t)[kind][0].numpy(),
                                   paper_response(kind, lam, p, a), atol=1e-5)


def test_over_parameterised_equals_single_filter():
    """Theorem: K filters with weights p_i on the grid = one filter with p=Σp, a=Σpα/Σp."""
    g, _ = random_symmetric_graph(12, 0.35, 5)
    torch.manual_seed(3)
    over = AutoGCNLayer(6, 4, mode="over", K=8)
    single = AutoGCNLayer(6, 4, mode="single")
    with torch.no_grad():
        over.gamma.uniform_(0.05, 1.0)
        p = torch.relu(over.gamma)
        single.p.copy_(p.sum(-1))
        single.a.copy_((p @ over.alpha) / p.sum(-1))
    x = torch.randn(12, 6)
    torch.testing.assert_close(over.filtered_inputs(g, x), single.filtered_inputs(g, x))


def test_low_decreasing_high_increasing_mid_centred_at_one():
    layer = AutoGCNLayer(4, 4, K=16)
    lam = torch.linspace(0, 2, 201)
    with torch.no_grad():
        layer.gamma.uniform_(0.1, 1.0)
    resp = layer.frequency_response(lam)
    assert torch.all(resp["low"][0][1:] <= resp["low"][0][:-1] + 1e-7)  # decreasing
    assert torch.all(resp["high"][0][1:] >= resp["high"][0][:-1] - 1e-7)  # increasing
    assert abs(lam[resp["mid"][0].argmin()].item() - 1.0) < 1e-6  # extreme at λ = 1
    # p((λ-1)² - a) is symmetric about λ = 1
    assert float(resp["mid"][0][0]) == pytest.approx(float(resp["mid"][0][-1]), abs=1e-5)


@pytest.mark.parametrize("mode", ["over", "single", "fix"])
@pytest.mark.parametrize("filters", [("low", "mid", "high"), ("low", "high"), ("mid",)])
def test_propagate_first_equals_project_first(mode, filters):
    torch.manual_seed(0)
    g = rand_graph(25, 90)  # directed, with zero-in-degree nodes
    layer = AutoGCNLayer(7, 5, mode=mode, filters=filters, num_filters=2, batch_norm=False)
    with torch.no_grad():
        if mode == "over":
            layer.gamma.uniform_(-0.2, 1.0)
    x = torch.randn(25, 7)
    layer.order = "propagate"
    a = layer(g, x)
    layer.order = "project"
    b = layer(g, x)
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def _filter_outputs(layer, g, x):
    """Gate inputs computed directly from the definitions (no gating), by filter name."""
    inputs = layer.filtered_inputs(g, x)[0]
    return {f: inputs[i] @ layer.weight[0, i] for i, f in enumerate(layer.filters)}


def test_gate_variants():
    torch.manual_seed(1)
    g, _ = random_symmetric_graph(10, 0.4, 1)
    x = torch.randn(10, 5)
    kw = dict(batch_norm=False, graph_norm=False, activation=None, residual=False)
    gates = ("sequential", "parallel", "none")
    layers = {gate: AutoGCNLayer(5, 5, gate=gate, **kw) for gate in gates}
    for layer in layers.values():
        layer.load_state_dict(layers["none"].state_dict())
    with torch.no_grad():
        o = _filter_outputs(layers["none"], g, x)
        L, M, H = o["low"], o["mid"], o["high"]
        none = layers["none"](g, x)
        torch.testing.assert_close(none, L + M + H)  # w/o gate: the plain sum
        sig = torch.sigmoid
        paper = L * sig(M + H) + M * sig(L + H) + H * sig(L + M)
        torch.testing.assert_close(layers["parallel"](g, x), paper)
        L2 = L * sig(H + M)
        M2 = M * sig(L2 + H)
        H2 = H * sig(M2 + L2)
        torch.testing.assert_close(layers["sequential"](g, x), L2 + M2 + H2)
        assert not torch.allclose(layers["sequential"](g, x), paper)


@pytest.mark.parametrize("old,new", [("release", "sequential"), ("paper", "parallel"),
                                     (True, "sequential"), (False, "none")])
def test_older_gate_names_are_aliases(old, new):
    assert AutoGCNLayer(2, 2, gate=old).gate == new


def test_single_and_fix_swap_mid_and_high_slots_like_the_release():
    torch.manual_seed(2)
    g, _ = random_symmetric_graph(10, 0.4, 2)
    x = torch.randn(10, 5)
    layer = AutoGCNLayer(5, 5, mode="fix", batch_norm=False, graph_norm=False, activation=None,
                         residual=False)
    with torch.no_grad():
        o = _filter_outputs(layer, g, x)
        L, M, H = o["low"], o["high"], o["mid"]  # release slot order in fix/single mode
        sig = torch.sigmoid
        L2 = L * sig(H + M)
        M2 = M * sig(L2 + H)
        H2 = H * sig(M2 + L2)
        torch.testing.assert_close(layer(g, x), L2 + M2 + H2)


def test_fix_mode_kernels():
    g, adj = random_symmetric_graph(9, 0.4, 4)
    d = adj.sum(1) ** -0.5
    A = d[:, None] * adj * d[None, :]
    k = kernels(AutoGCNLayer(9, 2, mode="fix"), g)
    I = np.eye(9)
    np.testing.assert_allclose(k["low"], 0.5 * A + 0.5 * I, atol=1e-6)
    np.testing.assert_allclose(k["high"], -0.5 * A + 0.5 * I, atol=1e-6)
    np.testing.assert_allclose(k["mid"], A @ A - 0.5 * I, atol=1e-6)


def test_single_mode_a_is_stuck_at_release_init_but_learns_from_half():
    g, _ = random_symmetric_graph(10, 0.4, 3)
    x = torch.randn(10, 4)
    for init, moves in ((0.0, False), (0.5, True)):
        layer = AutoGCNLayer(4, 4, mode="single", single_a_init=init)
        layer(g, x).pow(2).sum().backward()
        assert (layer.a.grad.abs().sum() > 0) == moves


def test_dropping_a_filter_removes_its_weights():
    full = AutoGCNLayer(10, 6, K=16)
    no_low = AutoGCNLayer(10, 6, K=16, filters=("mid", "high"))
    assert no_low.filters == ("mid", "high")
    n = sum(p.numel() for p in full.parameters())
    m = sum(p.numel() for p in no_low.parameters())
    assert n - m == 10 * 6 + 16
    g = rand_graph(8, 20)
    assert no_low(g, torch.randn(8, 10)).shape == (8, 6)


def test_parameter_count_formula():
    for nf in (1, 2):
        layer = AutoGCNLayer(12, 7, K=5, num_filters=nf)
        assert sum(p.numel() for p in layer.parameters()) == 3 * nf * 12 * 7 + 3 * nf * 5 + 7 + 14


def test_single_node_graph_and_zero_in_degree():
    layer = AutoGCNLayer(3, 3, batch_norm=False)
    g = Graph([], [], 1)
    out = layer(g, torch.randn(1, 3), torch.ones(1, 1))
    assert out.shape == (1, 3) and torch.isfinite(out).all()
    g = Graph([0, 0], [1, 2], 4)  # nodes 0 and 3 have no incoming edge
    assert torch.isfinite(layer(g, torch.randn(4, 3))).all()


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="mode"):
        AutoGCNLayer(2, 2, mode="double")
    with pytest.raises(ValueError, match="gate"):
        AutoGCNLayer(2, 2, gate="maybe")
    with pytest.raises(ValueError, match="filters"):
        AutoGCNLayer(2, 2, filters=("band",))


# --------------------------------------------------------------------------- dense twin
def dense_twin(layer: AutoGCNLayer, g: Graph, x: torch.Tensor, snorm: torch.Tensor,
               params: dict[str, torch.Tensor]) -> torch.Tensor:
    """The layer's output spelled out with dense matrices, from the paper's formulas.

    ``params`` are leaf copies of the layer's parameters (so gradients can be compared).
    Kernels: low (P-c)I + cÃ, high (P-c)I - cÃ, mid PÃ² - cI, with P, c from the mode's own
    parameterisation; slot order (low, mid, high), swapped mid/high outside "over"; the gate
    written out per kind; then bias and the layer's post-processing.
    """
    n = g.num_nodes()
    counts = torch.zeros(n, n, dtype=x.dtype)
    counts.index_put_((g.dst, g.src), torch.ones(g.num_edges(), dtype=x.dtype), accumulate=True)
    s = counts.sum(1).float().clamp(min=1).rsqrt().to(x.dtype)  # float32 factors, as the layers
    A = s[:, None] * counts * s[None, :]
    eye = torch.eye(n, dtype=x.dtype)
    grid = torch.linspace(-1e-9, 1 + 1e-9, layer.K, dtype=torch.float64).float().to(x.dtype)
    out = params["bias"]
    for b in range(layer.num_filters):
        outputs = {}
        for i, f in enumerate(layer.filters):
            if layer.mode == "over":
                w = torch.relu(params["gamma"][b, i])
                P, c = w.sum(), (w * grid).sum()
            elif layer.mode == "single":
                P = torch.relu(params["p"][b, i])
                c = P * torch.nn.functional.hardtanh(params["a"][b, i], 0.0, 1.0)
            else:
                P, c = torch.ones((), dtype=x.dtype), torch.full((), 0.5, dtype=x.dtype)
            kernel = {"low": (P - c) * eye + c * A, "high": (P - c) * eye - c * A,
                      "mid": P * (A @ A) - c * eye}[f]
            outputs[f] = kernel @ x @ params["weight"][b, i]
        order = ("low", "mid", "high") if layer.mode == "over" else ("low", "high", "mid")
        slots = [outputs[f] for f in order if f in outputs]
        sig = torch.sigmoid
        if layer.gate == "none" or len(slots) == 1:
            gated = slots
        elif layer.gate == "parallel":
            gated = [y * sig(sum(z for j, z in enumerate(slots) if j != i))
                     for i, y in enumerate(slots)]
        else:  # sequential, in place
            gated = list(slots)
            for i in range(len(gated)):
                gated[i] = gated[i] * sig(sum(z for j, z in enumerate(gated) if j != i))
        for y in gated:
            out = out + y
    return layer.post(x, out, snorm)


FILTER_SETS = [("low", "mid", "high"), ("mid", "high"), ("low", "mid"), ("low", "high"),
               ("mid",)]


@pytest.mark.parametrize("mode,gate,filters,order", list(itertools.product(
    MODES, GATES, FILTER_SETS, ["propagate", "project"])))
def test_layer_matches_dense_twin_forward_and_gradients(mode, gate, filters, order):
    """Every mode × gate × filter set × computation order, two banks, float64, on a directed
    graph with nodes that receive nothing: outputs, every gradient, BatchNorm statistics."""
    torch.manual_seed(0)
    g = rand_graph(30, 120)
    layer = AutoGCNLayer(7, 5, mode=mode, gate=gate, filters=filters, num_filters=2,
                         residual=False, single_a_init=0.3).double()
    with torch.no_grad():  # off the initial values; some gamma negative, so relu matters
        if mode == "over":
            layer.gamma.uniform_(-0.2, 1.0)
        elif mode == "single":
            layer.p.uniform_(0.2, 1.5)
            layer.a.uniform_(0.1, 0.9)
        layer.bias.uniform_(-1, 1)
    layer.order = order
    twin_post = copy.deepcopy(layer.post)
    params = {k: v.detach().clone().requires_grad_() for k, v in layer.named_parameters()
              if not k.startswith("post.")}
    x = torch.randn(30, 7, dtype=torch.float64, requires_grad=True)
    x_twin = x.detach().clone().requires_grad_()
    snorm = torch.rand(30, 1, dtype=torch.float64)
    grad_out = torch.randn(30, 5, dtype=torch.float64)
    out = layer(g, x, snorm)
    twin = copy.copy(layer)
    twin.post = twin_post
    expected = dense_twin(twin, g, x_twin, snorm, params)
    torch.testing.assert_close(out, expected)
    out.backward(grad_out)
    expected.backward(grad_out)
    torch.testing.assert_close(x.grad, x_twin.grad)
    for name, value in params.items():
        torch.testing.assert_close(dict(layer.named_parameters())[name].grad, value.grad)
    for a, b in zip(layer.post.parameters(), twin_post.parameters(), strict=True):
        torch.testing.assert_close(a.grad, b.grad)
    torch.testing.assert_close(layer.post.batchnorm_h.running_mean,
                               twin_post.batchnorm_h.running_mean)
    torch.testing.assert_close(layer.post.batchnorm_h.running_var,
                               twin_post.batchnorm_h.running_var)


def test_sparse_input_projects_first_and_equals_dense_input():
    torch.manual_seed(1)
    g = rand_graph(40, 200)
    layer = AutoGCNLayer(12, 6, batch_norm=False)
    dense = (torch.rand(40, 12) < 0.3).float()
    a, b = layer(g, dense.to_sparse()), layer(g, dense)
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)

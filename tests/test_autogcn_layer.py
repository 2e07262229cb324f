"""The AutoGCN layer against an independent spectral computation and the paper's definitions."""

import dgl
import numpy as np
import pytest
import torch

from layers.autogcn_layer import AutoGCNLayer


def random_symmetric_graph(n: int, p: float, seed: int) -> tuple[dgl.DGLGraph, np.ndarray]:
    """A connected-enough random undirected graph (no isolated nodes) and its dense adjacency."""
    rng = np.random.default_rng(seed)
    while True:
        upper = np.triu(rng.random((n, n)) < p, 1)
        adj = (upper | upper.T).astype(float)
        if adj.sum(1).min() > 0:
            break
    src, dst = np.nonzero(adj)
    return dgl.graph((torch.tensor(src), torch.tensor(dst)), num_nodes=n), adj


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


def kernels(layer: AutoGCNLayer, g: dgl.DGLGraph) -> dict[str, np.ndarray]:
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
    g = dgl.rand_graph(25, 90)  # directed, with zero-in-degree nodes
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
    layers = {gate: AutoGCNLayer(5, 5, gate=gate, **kw) for gate in ("release", "paper", "none")}
    for layer in layers.values():
        layer.load_state_dict(layers["none"].state_dict())
    with torch.no_grad():
        o = _filter_outputs(layers["none"], g, x)
        L, M, H = o["low"], o["mid"], o["high"]
        none = layers["none"](g, x)
        torch.testing.assert_close(none, L + M + H)  # w/o gate: the plain sum
        sig = torch.sigmoid
        paper = L * sig(M + H) + M * sig(L + H) + H * sig(L + M)
        torch.testing.assert_close(layers["paper"](g, x), paper)
        L2 = L * sig(H + M)
        M2 = M * sig(L2 + H)
        H2 = H * sig(M2 + L2)
        torch.testing.assert_close(layers["release"](g, x), L2 + M2 + H2)
        assert not torch.allclose(layers["release"](g, x), paper)


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
    g = dgl.rand_graph(8, 20)
    assert no_low(g, torch.randn(8, 10)).shape == (8, 6)


def test_parameter_count_formula():
    for nf in (1, 2):
        layer = AutoGCNLayer(12, 7, K=5, num_filters=nf)
        assert sum(p.numel() for p in layer.parameters()) == 3 * nf * 12 * 7 + 3 * nf * 5 + 7 + 14


def test_single_node_graph_and_zero_in_degree():
    layer = AutoGCNLayer(3, 3, batch_norm=False)
    g = dgl.graph(([], []), num_nodes=1)
    out = layer(g, torch.randn(1, 3), torch.ones(1, 1))
    assert out.shape == (1, 3) and torch.isfinite(out).all()
    g = dgl.graph(([0, 0], [1, 2]), num_nodes=4)  # nodes 0 and 3 have no incoming edge
    assert torch.isfinite(layer(g, torch.randn(4, 3))).all()


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="mode"):
        AutoGCNLayer(2, 2, mode="double")
    with pytest.raises(ValueError, match="gate"):
        AutoGCNLayer(2, 2, gate="maybe")
    with pytest.raises(ValueError, match="filters"):
        AutoGCNLayer(2, 2, filters=("band",))

"""The AutoGCN layer against an independent spectral computation and the paper's definitions."""

import copy
import itertools
import os

import numpy as np
import pytest
import torch

from autogcn.graph import Graph
from layers.autogcn_layer import GATES, MODES, AutoGCNConv, AutoGCNLayer
from layers.cheb_layer import ChebLayer
from layers.gat_layer import GATLayer
from layers.gcn_layer import GCNLayer
from layers.gin_layer import GINLayer
from layers.gmm_layer import GMMLayer
from layers.graphsage_layer import GraphSageLayer
from layers.post_processing import PostProcess
from nets.gnn_net import NetIO
from nets.registry import build_net
from tests.helpers import rand_graph
from train.config import load_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    layer = AutoGCNLayer(7, 5, mode=mode, filters=filters, num_banks=2, batch_norm=False)
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


@pytest.mark.parametrize("alias,name", [("release", "sequential"), ("paper", "parallel"),
                                        (True, "sequential"), (False, "none")])
def test_other_gate_spellings_are_aliases(alias, name):
    assert AutoGCNLayer(2, 2, gate=alias).gate == name


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
    for banks in (1, 2):
        layer = AutoGCNLayer(12, 7, K=5, num_banks=banks)
        assert (sum(p.numel() for p in layer.parameters())
                == 3 * banks * 12 * 7 + 3 * banks * 5 + 7 + 14)


def test_config_key_K_is_the_grid_size_and_old_checkpoints_load():
    layer = AutoGCNLayer(12, 7, K=5)
    assert layer.grid_size == 5 and layer.gamma.shape == (1, 3, 5)
    assert "K=5" in repr(layer)  # the benchmark layer prints the config's name
    conv = AutoGCNConv(12, 7, grid_size=5)
    conv.load_state_dict({k: v for k, v in layer.state_dict().items()
                          if not k.startswith("post.")})  # same names: weight, gamma, bias
    x, g = torch.randn(6, 12), Graph([0, 1, 2, 3, 4], [1, 2, 3, 4, 5], 6)
    torch.testing.assert_close(conv(x, g), bare(layer)(g, x))


def test_config_key_num_filters_sets_the_number_of_banks():
    """The configs keep the authors' key ``num_filters``; the registry passes it as num_banks."""
    cfg = load_config(os.path.join(ROOT, "configs", "molecules_graph_regression_AUTOGCN_ZINC.json"))
    net_params = {**cfg["net_params"], "num_filters": 3, "L": 2}
    net = build_net("AUTOGCN", NetIO("graph", "embedding", 28, 1), net_params)
    convs = [m for m in net.modules() if isinstance(m, AutoGCNConv)]
    assert len(convs) == 2
    for conv in convs:
        assert conv.num_banks == 3 and conv.weight.shape[0] == 3


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
    s = counts.sum(1).clamp(min=1).rsqrt()  # degree factors in the feature dtype, as the layer
    A = s[:, None] * counts * s[None, :]
    eye = torch.eye(n, dtype=x.dtype)
    grid = torch.linspace(-1e-9, 1 + 1e-9, layer.grid_size, dtype=torch.float64).float().to(x.dtype)
    out = params["bias"]
    for b in range(layer.num_banks):
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
    layer = AutoGCNLayer(7, 5, mode=mode, gate=gate, filters=filters, num_banks=2,
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


# --------------------------------------------------------------------------- AutoGCNConv
def bare(layer: AutoGCNLayer) -> AutoGCNLayer:
    """``layer`` with every post-processing step switched off."""
    layer.post = PostProcess(layer.in_dim, layer.out_dim, None, 0.0, False, False, False)
    return layer


@pytest.mark.parametrize("mode", MODES)
def test_conv_is_the_layer_without_post_processing(mode):
    torch.manual_seed(4)
    g = rand_graph(20, 70)
    conv = AutoGCNConv(6, 4, mode=mode, num_banks=2, single_a_init=0.4)
    layer = bare(AutoGCNLayer(6, 4, mode=mode, num_banks=2))
    with torch.no_grad():
        for p in conv.parameters():
            p.add_(0.2 * torch.randn_like(p))
    layer.load_state_dict(conv.state_dict(), strict=False)
    x = torch.randn(20, 6)
    expected = layer(g, x)
    torch.testing.assert_close(conv(x, g.edge_index), expected)
    torch.testing.assert_close(conv(x, g), expected)
    per_filter = {"over": 16, "single": 2, "fix": 0}[mode]  # gamma, or p and a
    assert sum(p.numel() for p in conv.parameters()) == 2 * 3 * (6 * 4 + per_filter) + 4


def test_state_dict_with_the_checkpoint_names_loads():
    """An AutoGCNLayer state dict written out by hand with the names checkpoints store
    (AutoGCNConv's, then PostProcess's under ``post.``) loads strictly."""
    gen = torch.Generator().manual_seed(0)
    stored = {"weight": torch.randn(2, 3, 5, 4, generator=gen),
              "gamma": torch.rand(2, 3, 16, generator=gen),
              "bias": torch.randn(4, generator=gen),
              "post.batchnorm_h.weight": torch.rand(4, generator=gen),
              "post.batchnorm_h.bias": torch.randn(4, generator=gen),
              "post.batchnorm_h.running_mean": torch.randn(4, generator=gen),
              "post.batchnorm_h.running_var": torch.rand(4, generator=gen) + 0.5,
              "post.batchnorm_h.num_batches_tracked": torch.tensor(7)}
    layer = AutoGCNLayer(5, 4, num_banks=2)
    assert list(layer.state_dict()) == list(stored)
    layer.load_state_dict(stored)  # strict: no name missing, none unexpected
    for name, value in stored.items():
        assert torch.equal(layer.state_dict()[name], value)
    single = AutoGCNLayer(5, 4, mode="single")
    assert list(single.state_dict())[:4] == ["weight", "p", "a", "bias"]


def dense_filters(conv: AutoGCNConv, edge_index: torch.Tensor, n: int, x: torch.Tensor,
                  weight: torch.Tensor | None = None) -> torch.Tensor:
    """The convolution from an eigendecomposition of the (weighted) normalised Laplacian: each
    filter is U diag(F(λ)) Uᵀ with the paper's responses; sequential gate, one bank, "over"."""
    adj = torch.zeros(n, n, dtype=torch.float64)
    w = torch.ones(edge_index.shape[1], dtype=torch.float64) if weight is None else weight
    adj.index_put_((edge_index[1], edge_index[0]), w.double(), accumulate=True)
    deg = adj.sum(1)
    s = torch.where(deg > 0, deg, torch.ones_like(deg)).rsqrt()
    lam, U = torch.linalg.eigh(torch.eye(n, dtype=torch.float64) - s[:, None] * adj * s)
    p = torch.relu(conv.gamma[0].detach().double())
    total, a = p.sum(-1), (p @ conv.alpha.double()) / p.sum(-1)
    resp = {"low": lambda i: total[i] * (1 - a[i] * lam),
            "high": lambda i: total[i] * (a[i] * lam + 1 - 2 * a[i]),
            "mid": lambda i: total[i] * ((lam - 1) ** 2 - a[i])}
    out = {f: U @ torch.diag(resp[f](i)) @ U.T @ x @ conv.weight[0, i].detach().double()
           for i, f in enumerate(conv.filters)}
    L, M, H = out["low"], out["mid"], out["high"]
    L = L * torch.sigmoid(M + H)
    M = M * torch.sigmoid(L + H)
    H = H * torch.sigmoid(L + M)
    return L + M + H + conv.bias.detach().double()


@pytest.mark.parametrize("weighted", [False, True])
def test_conv_in_float64_equals_the_eigendecomposition_to_1e10(weighted):
    """A symmetric graph (so the operator is symmetric and eigh applies), float64 throughout:
    the degree factors are float64 too, so the two agree to rounding."""
    g, _ = random_symmetric_graph(16, 0.3, 7)
    torch.manual_seed(7)
    conv = AutoGCNConv(5, 3).double()
    with torch.no_grad():
        conv.gamma.uniform_(-0.2, 1.0)
        conv.bias.uniform_(-1, 1)
    x = torch.randn(16, 5, dtype=torch.float64)
    weight = None
    if weighted:  # one weight per undirected edge, the same both ways
        key = torch.minimum(g.src, g.dst) * 16 + torch.maximum(g.src, g.dst)
        weight = torch.rand(256, generator=torch.Generator().manual_seed(1),
                            dtype=torch.float64)[key] + 0.1
    out = conv(x, g.edge_index, weight)
    torch.testing.assert_close(out, dense_filters(conv, g.edge_index, 16, x, weight),
                               rtol=1e-10, atol=1e-10)


def test_edge_weight_on_a_directed_graph_matches_the_dense_kernels():
    """Directed, with zero-in-degree nodes and zero weights: the kernels written with the dense
    weighted operator Ã = S W S (S from weighted in-degrees, 1 where 0)."""
    torch.manual_seed(2)
    g = rand_graph(18, 60, seed=3)
    w = torch.rand(60, dtype=torch.float64)
    w[:4] = 0
    conv = AutoGCNConv(4, 3, gate="none").double()
    x = torch.randn(18, 4, dtype=torch.float64)
    adj = torch.zeros(18, 18, dtype=torch.float64).index_put_((g.dst, g.src), w, accumulate=True)
    deg = adj.sum(1)
    s = torch.where(deg > 0, deg, torch.ones_like(deg)).rsqrt()
    A = s[:, None] * adj * s[None, :]
    coef = conv.coefficients().detach()[0]
    hops = torch.stack([x, A @ x, A @ A @ x])
    expected = sum(torch.einsum("k,knd->nd", coef[i], hops) @ conv.weight[0, i].detach()
                   for i in range(3)) + conv.bias.detach()
    for order in ("propagate", "project"):
        conv.order = order
        torch.testing.assert_close(conv(x, g.edge_index, w), expected, rtol=1e-10, atol=1e-12)


def test_cache_serves_the_same_graph_and_rebuilds_for_another():
    g = rand_graph(12, 40)
    edge_index = g.edge_index
    conv = AutoGCNConv(3, 2, cached=True)
    op = conv.operator(edge_index, 12)
    assert conv.operator(edge_index, 12) is op  # same tensor: served from the cache
    assert conv.operator(edge_index.clone(), 12) is not op  # another tensor: rebuilt
    other = rand_graph(12, 40, seed=9).edge_index
    x = torch.randn(12, 3)
    torch.testing.assert_close(conv(x, other), AutoGCNConv.forward(
        _uncached(conv), x, other))  # a different graph is never served a stale operator
    op = conv.operator(edge_index, 12)
    edge_index[0, 0] = (edge_index[0, 0] + 1) % 12  # modified in place: version changes
    assert conv.operator(edge_index, 12) is not op
    w = torch.rand(40)
    op_w = conv.operator(edge_index, 12, w)
    assert conv.operator(edge_index, 12, w) is op_w and conv.operator(edge_index, 12) is not op_w
    assert copy.deepcopy(conv)._cache is None  # a copy rebuilds its own operator
    conv.reset_parameters()
    assert conv._cache is None
    plain = AutoGCNConv(3, 2)  # cached=False: every call builds its own
    assert plain.operator(edge_index, 12) is not plain.operator(edge_index, 12)


def _uncached(conv: AutoGCNConv) -> AutoGCNConv:
    twin = copy.deepcopy(conv)
    twin.cached, twin._cache = False, None
    return twin


def test_conv_rejects_mismatched_inputs():
    conv = AutoGCNConv(3, 2)
    g = Graph([0, 1], [1, 2], 3)
    with pytest.raises(ValueError, match="the graph has 3 nodes but the features have 4 rows"):
        conv(torch.randn(4, 3), g)
    with pytest.raises(ValueError,
                       match=r"edge_index\[1\] \(targets\) holds node id 5, outside \[0, 3\)"):
        conv(torch.randn(3, 3), torch.tensor([[0, 1], [1, 5]]))
    with pytest.raises(ValueError, match="edge_weight must have shape"):
        conv(torch.randn(3, 3), g.edge_index, torch.ones(3))
    assert repr(AutoGCNConv(3, 2, cached=True)) == (
        "AutoGCNConv(3, 2, grid_size=16, mode=over, filters=low,mid,high, gate=sequential, "
        "cached=True)")


# --------------------------------------------------------------------------- sparse input
LAYERS = {
    "AutoGCN": lambda: AutoGCNLayer(6, 6, residual=True),
    "GCN": lambda: GCNLayer(6, 6, residual=True),
    "Cheb": lambda: ChebLayer(6, 6, residual=True),
    "GAT": lambda: GATLayer(6, 6, 1, residual=True),
    "GIN": lambda: GINLayer(6, 6, residual=True),
    "GraphSage": lambda: GraphSageLayer(6, 6, residual=True),
    "MoNet": lambda: GMMLayer(6, 6, residual=True),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_sparse_input_with_the_residual_equals_dense_input(name):
    torch.manual_seed(5)
    g = rand_graph(15, 50)
    layer = LAYERS[name]().eval()
    assert layer.post.residual
    dense = (torch.rand(15, 6) < 0.4).float()
    torch.testing.assert_close(layer(g, dense.to_sparse()), layer(g, dense), rtol=1e-5,
                               atol=1e-6)

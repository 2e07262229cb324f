"""GPR-GNN, BernNet, ChebNetII, JacobiConv: operators and bases against dense float64 maths,
the official initialisations, parameter counts, and a training step at every task level."""

import math

import numpy as np
import pytest
import torch
from scipy.special import comb, eval_jacobi

from autogcn.bernnet import BernNetProp
from autogcn.chebnetii import ChebNetIIProp, chebyshev_nodes
from autogcn.gprgnn import GPRGNNProp
from autogcn.graph import Graph
from autogcn.jacobi import JacobiConvProp, jacobi_recurrence
from autogcn.polynomial import filter_operator, undirected
from layers.poly_filter import PolyFilterLayer
from nets.gnn_net import NetIO
from nets.registry import MODELS, build_net, count_parameters, optimizer_groups
from nets.successors import SUCCESSORS, DecoupledNet
from tests.test_baselines import (
    LEVELS,
    check_single_node_graph,
    graph_batch,
    random_graph,
    run,
    small_params,
)
from train.config import ConfigError, validate
from train.tasks import TASKS

K = 10


def make_filter(model: str, channels: int = 3, **kw):
    return {"GPRGNN": lambda: GPRGNNProp(K, kw.get("alpha", 0.1)),
            "BERNNET": lambda: BernNetProp(K),
            "CHEBNETII": lambda: ChebNetIIProp(K),
            "JACOBICONV": lambda: JacobiConvProp(channels, K, kw.get("a", 1.5), kw.get("b", 0.25),
                                                 kw.get("alpha", 0.5))}[model]()


def randomise(filt: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Float64 and random coefficients, some negative (so BernNet's/ChebNetII's relu acts)."""
    gen = torch.Generator().manual_seed(seed)
    filt = filt.double()
    with torch.no_grad():
        for p in filt.parameters():
            p.copy_(torch.rand(p.shape, generator=gen, dtype=torch.float64) * 1.6 - 0.4)
    return filt


# ------------------------------------------------------------------ dense operators (numpy)
def adjacency(g: Graph) -> np.ndarray:
    """``A[v, u]`` = number of edges u → v (rows: receivers, as PyG's aggregation)."""
    a = np.zeros((g.num_nodes(), g.num_nodes()))
    np.add.at(a, (g.dst.numpy(), g.src.numpy()), 1.0)
    return a


def inv_sqrt(deg: np.ndarray, zero_to: float) -> np.ndarray:
    out = np.full_like(deg, zero_to)
    out[deg > 0] = deg[deg > 0] ** -0.5
    return out


def dense_operator(g: Graph, kind: str) -> np.ndarray:
    """The official operators from their PyG definitions (SUCCESSORS.md §0, §4)."""
    a = adjacency(g)
    np.fill_diagonal(a, 0.0) if kind != "undirected" else None
    if kind == "gcn":  # gcn_norm: A + I, in-degree (row sums here) on both sides
        a = a + np.eye(len(a))
        s = inv_sqrt(a.sum(1), 0.0)
    elif kind == "laplacian":  # get_laplacian('sym'): out-degree (column sums), inf -> 0
        s = inv_sqrt(a.sum(0), 0.0)
    else:  # JacobiConv: PyG's to_undirected (each linked pair once each way), degree 0 -> 1
        a = (np.maximum(a, a.T) > 0).astype(float)
        s = inv_sqrt(a.sum(1), 1.0)
    return s[:, None] * a * s[None, :]


def undirected_graph_with_isolated_nodes(n: int = 12, seed: int = 0) -> Graph:
    g = random_graph(n - 2, 0.35, seed, symmetric=True)
    return Graph(g.src, g.dst, n)  # the last two nodes have no edges


GRAPHS = {
    "undirected+isolated": lambda: undirected_graph_with_isolated_nodes(),
    "one node": lambda: Graph([], [], 1),
}


# ------------------------------------------------------------------ responses vs eigendecomposition
@pytest.mark.parametrize("graph", list(GRAPHS))
@pytest.mark.parametrize("model", SUCCESSORS)
def test_filter_equals_eigendecomposition_float64(model, graph):
    """F(N) x = U diag(F(1 - μ)) Uᵀ x, N = U diag(μ) Uᵀ, with F from frequency_response."""
    g = GRAPHS[graph]()
    filt = randomise(make_filter(model), seed=1)
    n = dense_operator(g, filt.operator)
    np.testing.assert_allclose(n, n.T)
    mu, u = np.linalg.eigh(n)
    # an isolated node: a row of zeros (μ = 0, λ = 1), or only its self-loop for GPR-GNN (μ = 1)
    isolated = np.eye(len(n))[-1] if filt.operator == "gcn" else np.zeros(len(n))
    np.testing.assert_allclose(n[-1], isolated)
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(g.num_nodes(), 3, dtype=torch.float64, generator=gen)
    resp = filt.frequency_response(torch.tensor(1.0 - mu))["filter"].numpy()  # (rows, N)
    resp = np.broadcast_to(resp, (3, len(mu)))
    expected = np.stack([u @ (resp[c] * (u.T @ x[:, c].numpy())) for c in range(3)], 1)
    out = filt(x, g)
    assert out.dtype == torch.float64
    np.testing.assert_allclose(out.detach().numpy(), expected, atol=1e-10)


def monomial_coefficients(filt, rows: int) -> np.ndarray:
    """The response as Σ_k m_k μ^k (per row), by interpolation at K + 1 Chebyshev points."""
    mu = np.cos((np.arange(K + 1) + 0.5) * np.pi / (K + 1))
    resp = filt.frequency_response(torch.tensor(1.0 - mu))["filter"].numpy()
    return np.stack([np.polynomial.polynomial.polyfit(mu, resp[r], K) for r in range(rows)])


@pytest.mark.parametrize("model", SUCCESSORS)
def test_directed_graph_is_kept_directed_or_symmetrised_as_the_official_model(model):
    """GPR-GNN/BernNet/ChebNetII act on the directed operator (not symmetric); JacobiConv on the
    symmetrised one. The filter equals the dense polynomial of that operator."""
    g = random_graph(10, 0.25, 4)  # directed, with nodes lacking in- or out-edges
    assert (g.in_degrees() == 0).any() or (g.out_degrees() == 0).any()
    filt = randomise(make_filter(model), seed=3)
    n = dense_operator(g, filt.operator)
    assert np.allclose(n, n.T) == (model == "JACOBICONV")
    x = torch.randn(10, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    if model == "JACOBICONV":  # a symmetric operator: the eigendecomposition applies
        mu, u = np.linalg.eigh(n)
        resp = filt.frequency_response(torch.tensor(1.0 - mu))["filter"].numpy()
        expected = np.stack([u @ (resp[c] * (u.T @ x[:, c].numpy())) for c in range(3)], 1)
    else:  # complex spectrum: compare with the matrix polynomial Σ m_k N^k x
        m = monomial_coefficients(filt, 1)[0]
        powers, expected = x.numpy(), np.zeros((10, 3))
        for k in range(K + 1):
            expected += m[k] * powers
            powers = n @ powers
    np.testing.assert_allclose(filt(x, g).detach().numpy(), expected, atol=1e-8)


def test_operators_of_a_batch_are_block_diagonal():
    g, _ = graph_batch(LEVELS["node"], sizes=(5, 1, 7))
    members = g.unbatch()
    for kind in ("gcn", "laplacian", "undirected"):
        eye = torch.eye(g.num_nodes(), dtype=torch.float64)
        full = filter_operator(g, kind)(eye).numpy()
        start = 0
        for m in members:
            k = m.num_nodes()
            np.testing.assert_allclose(full[start:start + k, start:start + k],
                                       dense_operator(m, kind), atol=1e-12)
            full[start:start + k, start:start + k] = 0
            start += k
        assert not full.any()  # nothing between member graphs
        assert filter_operator(g, kind) is filter_operator(g, kind)  # cached on the graph


def test_undirected_links_each_pair_once_each_way_and_keeps_members_apart():
    """One rule on every graph, symmetric or not: PyG's ``to_undirected`` (a pair linked in
    either direction, by any number of edges, gets one edge each way)."""
    g, _ = graph_batch(LEVELS["node"])
    sym = random_graph(8, 0.3, 6, symmetric=True)
    for graph in (g, sym):
        u = undirected(graph)
        ids = graph.node_graph_ids()
        assert torch.equal(ids[u.src], ids[u.dst])  # members stay apart
        a = adjacency(u)
        np.testing.assert_array_equal(a, (np.maximum(adjacency(graph), adjacency(graph).T) > 0))


# ------------------------------------------------------------------ closed forms of the bases
LAM = torch.linspace(0, 2, 41, dtype=torch.float64)


def test_gprgnn_response_is_the_monomial_sum():
    filt = randomise(GPRGNNProp(K), 7)
    gamma = filt.gamma.detach().numpy()
    expected = sum(gamma[k] * (1 - LAM.numpy()) ** k for k in range(K + 1))
    np.testing.assert_allclose(filt.frequency_response(LAM)["filter"][0].numpy(), expected,
                               atol=1e-12)


def test_bernnet_response_is_the_bernstein_sum():
    filt = randomise(BernNetProp(K), 8)
    theta = np.maximum(filt.theta.detach().numpy(), 0)
    assert (filt.theta < 0).any()
    t = LAM.numpy() / 2
    expected = sum(theta[k] * comb(K, k) * t**k * (1 - t) ** (K - k) for k in range(K + 1))
    np.testing.assert_allclose(filt.frequency_response(LAM)["filter"][0].numpy(), expected,
                               atol=1e-12)


def test_chebnetii_interpolates_relu_gamma_at_the_chebyshev_nodes():
    filt = randomise(ChebNetIIProp(K), 9)
    gamma = np.maximum(filt.gamma.detach().numpy(), 0)
    x_j = np.cos((K - np.arange(K + 1) + 0.5) * np.pi / (K + 1))
    at_nodes = filt.frequency_response(torch.tensor(1.0 + x_j))["filter"][0].numpy()
    np.testing.assert_allclose(at_nodes, gamma, atol=1e-12)
    # c_i = 2/(K+1) Σ_j relu(γ_j) T_i(x_j), F(λ) = c_0/2 + Σ_i c_i T_i(λ - 1)
    c = np.array([2 / (K + 1) * sum(gamma[j] * np.cos(i * np.arccos(x_j[j]))
                                   for j in range(K + 1)) for i in range(K + 1)])
    c[0] /= 2
    expected = np.polynomial.chebyshev.chebval(LAM.numpy() - 1, c)
    np.testing.assert_allclose(filt.frequency_response(LAM)["filter"][0].numpy(), expected,
                               atol=1e-12)


def code_jacobi(k: int, a: float, b: float, z: np.ndarray) -> np.ndarray:
    """The official code's P_k (SUCCESSORS.md §4), transcribed from the formula."""
    p = [np.ones_like(z), (a - b) / 2 + (a + b + 2) / 2 * z]
    for n in range(2, k + 1):
        d = 2 * n * (n + a + b) * (2 * n + a + b - 2)
        lin = (2 * n + a + b - 1) * (2 * n + a + b) * (2 * n + a + b - 2) / d
        const = (2 * n + a + b - 1) * (a * a - b * b) / d
        back = 2 * (n + a - 1) * (n + b - 1) * (2 * n + a + b) / d
        p.append((lin * z - const) * p[-1] - back * p[-2])
    return p[k]


@pytest.mark.parametrize("a,b,alpha", [(1.5, 0.25, 0.5), (0.5, 0.25, 2.0), (1.0, 1.0, 1.0),
                                       (-1.0, 0.5, 1.0)])
def test_jacobi_response_is_the_pcd_weighted_code_basis(a, b, alpha):
    filt = randomise(JacobiConvProp(4, K, a, b, alpha), 10)
    gamma = alpha * np.tanh(filt.eta.detach().numpy())
    w = filt.weight.detach().numpy()
    z = 1 - LAM.numpy()
    beta = np.concatenate([[1.0], np.cumprod(gamma[:K])])
    expected = np.stack([sum(w[k, c] * beta[k] * code_jacobi(k, a, b, z) for k in range(K + 1))
                         for c in range(4)])
    resp = filt.frequency_response(LAM)["filter"].numpy()
    assert resp.shape == (4, len(LAM))
    np.testing.assert_allclose(resp, expected, atol=1e-10)


def test_jacobi_code_basis_keeps_the_official_sign():
    """a = b: the code's P_k are scipy's Jacobi polynomials. a != b: from k = 2 they differ by
    the sign of the (a² - b²) term, exactly as the official recurrence has it."""
    z = np.linspace(-1, 1, 9)
    for k in range(K + 1):
        np.testing.assert_allclose(code_jacobi(k, 0.5, 0.5, z), eval_jacobi(k, 0.5, 0.5, z),
                                   atol=1e-12)
    a, b = 1.5, 0.25
    np.testing.assert_allclose(code_jacobi(1, a, b, z), eval_jacobi(1, a, b, z), atol=1e-12)
    _, const, _ = jacobi_recurrence(2, a, b)
    np.testing.assert_allclose(code_jacobi(2, a, b, z) - eval_jacobi(2, a, b, z),
                               -2 * const * eval_jacobi(1, a, b, z), atol=1e-12)


# ------------------------------------------------------------------ official initialisations
def test_gprgnn_ppr_initialisation():
    for alpha in (0.1, 0.2):
        gamma = GPRGNNProp(K, alpha).gamma.detach().double()
        expected = [alpha * (1 - alpha) ** k for k in range(K)] + [(1 - alpha) ** K]
        torch.testing.assert_close(gamma, torch.tensor(expected, dtype=torch.float64),
                                   rtol=1e-6, atol=1e-7)
        assert gamma.sum().item() == pytest.approx(1.0, abs=1e-6)
    torch.testing.assert_close(GPRGNNProp(K, 0.0).gamma.detach(), torch.eye(K + 1)[K])
    torch.testing.assert_close(GPRGNNProp(K, 1.0).gamma.detach(), torch.eye(K + 1)[0])


def test_bernnet_and_chebnetii_start_all_pass():
    bern, cheb = BernNetProp(K), ChebNetIIProp(K)
    assert torch.equal(bern.theta.detach(), torch.ones(K + 1))
    assert torch.equal(cheb.gamma.detach(), torch.ones(K + 1))
    c = cheb.coefficients().detach()
    assert c[0].item() / 2 == pytest.approx(1.0, abs=1e-6)
    assert c[1:].abs().max().item() < 1e-6
    for filt in (bern, cheb):
        torch.testing.assert_close(filt.frequency_response(LAM.float())["filter"],
                                   torch.ones(1, len(LAM)), atol=1e-5, rtol=0)
    nodes = 1 + chebyshev_nodes(K)  # λ at the nodes, rising from ≈0.0102 to ≈1.9898
    assert nodes[0].item() == pytest.approx(0.0102, abs=1e-4)
    assert nodes[-1].item() == pytest.approx(1.9898, abs=1e-4)
    assert (nodes[1:] > nodes[:-1]).all()


@pytest.mark.parametrize("alpha,eta", [(0.5, 1.0), (1.0, 1.0), (2.0, 0.5)])
def test_jacobi_pcd_initialisation(alpha, eta):
    filt = JacobiConvProp(3, K, 1.0, 1.0, alpha)
    assert torch.equal(filt.eta.detach(), torch.full((K + 1,), eta))
    assert torch.equal(filt.weight.detach(), torch.ones(K + 1, 3))


def test_nets_built_from_default_config_use_the_official_defaults():
    io = NetIO("single_graph", "linear", 7, 3)
    for model in SUCCESSORS:
        p = validate({"model": model})["net_params"]
        assert (p["poly_order"], p["dprate"], p["gpr_alpha"]) == (10, 0.5, 0.1)
        net = build_net(model, io, p)
        assert isinstance(net, DecoupledNet) and net.filter.K == 10
        assert net.prop_dropout.p == 0.5
    assert not any(t.adds_self_loops(m, {"self_loop": True})
                   for t in TASKS.values() for m in SUCCESSORS)
    assert all(m in MODELS for m in SUCCESSORS)


# ------------------------------------------------------------------ parameter counts
@pytest.mark.parametrize("model", SUCCESSORS)
def test_decoupled_net_parameter_count(model):
    for f, c, published in ((500, 3, (32270, 1547)), (2089, 5, (134096, 10516))):
        io = NetIO("single_graph", "linear", f, c)
        L = 1 if model == "JACOBICONV" else 2
        net = build_net(model, io, validate({"model": model, "net_params": {
            "L": L, "hidden_dim": 64}})["net_params"])
        expected = published[1] if model == "JACOBICONV" else published[0]  # SUCCESSORS.md §7
        assert count_parameters(net) == expected


@pytest.mark.parametrize("model", SUCCESSORS)
def test_graph_layer_parameter_count(model):
    p = validate({"model": model, "net_params": {"L": 2, "hidden_dim": 12}})["net_params"]
    net = build_net(model, LEVELS["node"], p)
    layer = net.stack.layers[0]
    assert isinstance(layer, PolyFilterLayer)
    per_channel = (K + 1) * 12 if model == "JACOBICONV" else 0
    assert count_parameters(layer) == 12 * 12 + 12 + (K + 1) + per_channel + 2 * 12


def test_graph_layer_is_filter_of_projection_plus_bias():
    torch.manual_seed(0)
    g = undirected_graph_with_isolated_nodes()
    for model in SUCCESSORS:
        filt = make_filter(model, channels=4)
        layer = PolyFilterLayer(filt, 6, 4, activation=None, graph_norm=False,
                                batch_norm=False).double()
        with torch.no_grad():
            layer.bias.uniform_(-1, 1)
        x = torch.randn(12, 6, dtype=torch.float64)
        expected = filt(x @ layer.linear.weight.T, g) + layer.bias
        torch.testing.assert_close(layer(g, x), expected)
        assert layer.frequency_response(LAM)["filter"].shape[1] == len(LAM)


# ------------------------------------------------------------------ training at every level
@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize("model", SUCCESSORS)
def test_one_training_step_every_level(model, level):
    io = LEVELS[level]
    torch.manual_seed(0)
    p = small_params(model, dprate=0.2, prop_lr=0.05, jacobi_w_lr=0.02, prop_wd=1e-4)
    net = build_net(model, io, p).train()
    params = {"init_lr": 0.01, "weight_decay": 5e-4}
    opt = torch.optim.Adam(optimizer_groups(net, params, p))
    before = [q.detach().clone() for q in net.parameters()]
    out = run(model, io, net, sparse=level == "single_graph")
    rows = {"node": 13, "single_graph": 20}.get(io.level, 3)
    assert out.shape == (rows, io.num_classes) and torch.isfinite(out).all()
    out.square().mean().backward()
    coefficients = [q for m in net.modules() if hasattr(m, "coefficient_groups")
                    for q in m.coefficient_groups()["prop"]]
    assert coefficients and all(q.grad is not None and q.grad.abs().sum() > 0
                                for q in coefficients)
    opt.step()
    assert all(torch.isfinite(q).all() for q in net.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters()))


@pytest.mark.parametrize("model", SUCCESSORS)
def test_single_node_graph_alone_and_sparse_features(model):
    check_single_node_graph(model)
    io = LEVELS["single_graph"]
    torch.manual_seed(1)
    net = build_net(model, io, small_params(model)).eval()
    g = random_graph(20, 0.15, 3)
    x = torch.rand(20, io.in_dim) * (torch.rand(20, io.in_dim) < 0.3)
    with torch.no_grad():
        torch.testing.assert_close(net(g, x.to_sparse()), net(g, x))


# ------------------------------------------------------------------ optimiser groups and config
def test_optimizer_groups_follow_the_official_split():
    io = LEVELS["single_graph"]
    params = {"init_lr": 0.05, "weight_decay": 5e-4}
    p = small_params("GPRGNN")
    net = build_net("GPRGNN", io, p)
    main, prop = optimizer_groups(net, params, p)
    assert prop["params"] == [net.filter.gamma]
    assert (prop["lr"], prop["weight_decay"]) == (0.05, 0.0)  # GPR-GNN: no decay on gamma
    assert (main["lr"], main["weight_decay"]) == (0.05, 5e-4)
    p = small_params("JACOBICONV", prop_lr=0.01, prop_wd=1e-3, jacobi_w_lr=0.03)
    net = build_net("JACOBICONV", io, p)
    groups = optimizer_groups(net, params, p)
    assert [g["params"] for g in groups[1:]] == [[net.filter.eta], [net.filter.weight]]
    assert [(g["lr"], g["weight_decay"]) for g in groups] == [(0.05, 5e-4), (0.01, 1e-3),
                                                              (0.03, 0.0)]
    total = sum(q.numel() for g in groups for q in g["params"])
    assert total == sum(q.numel() for q in net.parameters())
    gcn = build_net("GCN", io, small_params("GCN"))
    assert len(optimizer_groups(gcn, params, small_params("GCN"))) == 1


@pytest.mark.parametrize("key,value", [("poly_order", 0), ("dprate", 1.0), ("gpr_alpha", 1.5),
                                       ("jacobi_a", -1.5), ("jacobi_b", -1.0),
                                       ("jacobi_alpha", 0.0), ("prop_lr", 0.0),
                                       ("prop_wd", -1e-4)])
def test_bad_filter_settings_are_rejected_by_the_config(key, value):
    with pytest.raises(ConfigError, match=key):
        validate({"model": "JACOBICONV", "net_params": {key: value}})


def test_response_rows_and_k_checks():
    assert GPRGNNProp(3).frequency_response(LAM)["filter"].shape == (1, len(LAM))
    assert math.isclose(float(BernNetProp(3).binomial.sum()), 1.0)
    with pytest.raises(ValueError, match="K .the polynomial order. must be a positive int"):
        ChebNetIIProp(0)
    with pytest.raises(ValueError, match="a >= -1"):
        JacobiConvProp(2, K, a=-2.0)


def test_frequency_response_takes_a_plain_sequence_of_eigenvalues():
    """A list of λ gives the response of the same λ as a tensor (not an AttributeError)."""
    prop = BernNetProp(3)
    lam = [0.0, 0.5, 1.0, 2.0]
    torch.testing.assert_close(prop.frequency_response(lam)["filter"],
                               prop.frequency_response(torch.tensor(lam))["filter"])


def test_jacobi_refuses_an_alpha_whose_coefficients_overflow():
    """alpha**K beyond float32 gives inf coefficients and non-finite outputs: refused where it
    enters; the largest alpha that fits still gives finite outputs."""
    from autogcn.jacobi import JacobiConvProp

    with pytest.raises(ValueError, match="overflow float32"):
        JacobiConvProp(4, K=3, alpha=1e308)
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    out = JacobiConvProp(4, K=3, alpha=1e12)(torch.randn(3, 4), edge_index)
    assert torch.isfinite(out).all()

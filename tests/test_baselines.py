"""The baselines: every task level, known-answer checks against dense computations, edge cases."""

import itertools

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from autogcn.graph import Graph
from data.common import collate_graphs
from layers.ap_layer import AdaptivePropagation, ap_propagate
from layers.cheb_layer import ChebLayer
from layers.gat_layer import GATConv, GATLayer
from layers.gcn_layer import GCNLayer
from layers.gin_layer import GINLayer
from layers.gmm_layer import GMMConv, GMMLayer, pseudo_coordinates
from layers.graphsage_layer import GraphSageLayer, SAGEConv
from nets.baselines import SGConv
from nets.gnn_net import NetIO
from nets.registry import MODELS, build_net
from train.config import validate
from train.tasks import NODE, SBM, SUPERPIXELS, TASKS, ZINC

BASELINES = ["MLP", "GCN", "GraphSage", "GAT", "MoNet", "GIN", "ChebNet", "SGC", "APGCN"]
LEVELS = {
    "node": NetIO("node", "embedding", 3, 2),  # SBM-like
    "graph_embedding": NetIO("graph", "embedding", 28, 1),  # ZINC-like
    "graph_linear": NetIO("graph", "linear", 3, 10),  # superpixel-like
    "single_graph": NetIO("single_graph", "linear", 7, 3),  # PubMed-like
}


def random_graph(n: int, p: float, seed: int, symmetric: bool = False) -> Graph:
    rng = np.random.default_rng(seed)
    adj = rng.random((n, n)) < p
    np.fill_diagonal(adj, False)
    if symmetric:
        adj = np.triu(adj, 1)
        adj = adj | adj.T
    src, dst = np.nonzero(adj)
    return Graph(torch.tensor(src), torch.tensor(dst), n)


def dense_adjacency(g: Graph) -> torch.Tensor:
    """``A[u, v] = 1`` for every edge u → v."""
    adj = torch.zeros(g.num_nodes(), g.num_nodes())
    src, dst = g.edges()
    adj[src, dst] = 1.0
    return adj


def small_params(model: str, **extra) -> dict:
    net = {"L": 2, "hidden_dim": 8, "out_dim": 8, "n_heads": 2, **extra}
    if model == "GAT":  # hidden per head; heads concatenated to 8
        net.update(hidden_dim=4, out_dim=8)
    return validate({"model": model, "net_params": net})["net_params"]


def graph_batch(io: NetIO, sizes=(5, 1, 7), seed: int = 0):
    """A batch with a single-node graph and directed graphs with zero-in-degree nodes."""
    graphs = []
    for i, n in enumerate(sizes):
        g = random_graph(n, 0.3, seed + i)
        if io.input_kind == "embedding":
            g.ndata["feat"] = torch.randint(0, io.in_dim, (n,))
        else:
            g.ndata["feat"] = torch.rand(n, io.in_dim)
        graphs.append(g)
    g, _, snorm_n = collate_graphs([(g, torch.zeros(1)) for g in graphs])
    return g, snorm_n


def run(model: str, io: NetIO, net: torch.nn.Module, sparse: bool = False) -> torch.Tensor:
    if io.level == "single_graph":
        g = random_graph(20, 0.15, 3)
        assert (g.in_degrees() == 0).any()  # the isolated-node path is exercised
        if NODE.adds_self_loops(model, {"self_loop": True}):
            g = g.add_self_loops()
        x = torch.rand(20, io.in_dim)
        return net(g, x.to_sparse() if sparse else x)
    g, snorm_n = graph_batch(io)
    assert (g.in_degrees() == 0).any()
    return net(g, g.ndata["feat"], snorm_n)


@pytest.mark.parametrize("level", list(LEVELS))
@pytest.mark.parametrize("model", BASELINES)
def test_forward_backward_every_level(model, level):
    io = LEVELS[level]
    torch.manual_seed(0)
    net = build_net(model, io, small_params(model))
    net.train()
    out = run(model, io, net, sparse=level == "single_graph")
    rows = {"node": 13, "single_graph": 20}.get(io.level, 3)  # 13 nodes or 3 graphs
    assert out.shape == (rows, io.num_classes)
    assert torch.isfinite(out).all()
    aux = net.auxiliary_loss() if hasattr(net, "auxiliary_loss") else 0.0
    (out.square().mean() + aux).backward()
    grads = [p.grad for p in net.parameters() if p.requires_grad]
    assert any(gr is not None and gr.abs().sum() > 0 for gr in grads)
    assert all(gr is None or torch.isfinite(gr).all() for gr in grads)


@pytest.mark.parametrize("model", BASELINES)
def test_single_node_graph_alone(model):
    """One graph of one node, no edges (eval mode: BatchNorm cannot train on one value)."""
    check_single_node_graph(model)


def check_single_node_graph(model: str) -> None:
    """``model`` scores a batch holding one graph of one node, at the node and graph levels."""
    for io in (LEVELS["node"], LEVELS["graph_linear"]):
        net = build_net(model, io, small_params(model)).eval()
        g, snorm_n = graph_batch(io, sizes=(1,))
        with torch.no_grad():
            out = net(g, g.ndata["feat"], snorm_n)
        assert out.shape == (1, io.num_classes) and torch.isfinite(out).all()


def test_sparse_and_dense_features_agree():
    """Single-graph nets accept sparse COO features and give the same output as dense ones."""
    io = LEVELS["single_graph"]
    for model in BASELINES:
        torch.manual_seed(1)
        net = build_net(model, io, small_params(model)).eval()
        g = random_graph(20, 0.15, 3)
        x = torch.rand(20, io.in_dim) * (torch.rand(20, io.in_dim) < 0.3)
        with torch.no_grad():
            torch.testing.assert_close(net(g, x.to_sparse()), net(g, x), msg=model)


def test_self_loop_rule_follows_each_release_main():
    # The release's main scripts test `MODEL_NAME in [...]` before `dataset._add_self_loops()`:
    # ['GCN', 'GAT', 'SGC'] in main_SBMs_node_classification.py and
    # main_CitationGraphs_node_classification.py, ['GCN', 'GAT'] in
    # main_molecules_graph_regression.py and main_superpixels_graph_classification.py.
    release = {SBM.name: {"GCN", "GAT", "SGC"}, NODE.name: {"GCN", "GAT", "SGC"},
               ZINC.name: {"GCN", "GAT"}, SUPERPIXELS.name: {"GCN", "GAT"}}
    assert set(release) == set(TASKS)
    for (name, models), model in itertools.product(release.items(), MODELS):
        task = TASKS[name]
        assert task.adds_self_loops(model, {"self_loop": True}) == (model in models), (task, model)
        assert not task.adds_self_loops(model, {"self_loop": False})


# ------------------------------------------------------------------ known answers
def test_gin_aggregation_eps_zero_is_self_plus_neighbour_sum():
    g = random_graph(9, 0.3, 4)  # directed, some nodes without in-edges
    x = torch.randn(9, 5)
    layer = GINLayer(5, 5)
    assert layer.eps.item() == 0.0 and layer.eps.requires_grad
    expected = x + dense_adjacency(g).T @ x  # x_v + sum over u -> v of x_u
    torch.testing.assert_close(layer.aggregate(g, x), expected)
    with torch.no_grad():
        layer.eps.fill_(0.5)
    torch.testing.assert_close(layer.aggregate(g, x), 1.5 * x + dense_adjacency(g).T @ x)


def sym_normalised(g: Graph) -> torch.Tensor:
    """Dense P with P x = s ⊙ (Aᵀ (s ⊙ x)), s = max(indeg, 1)^-1/2."""
    adj = dense_adjacency(g)
    s = adj.sum(0).clamp(min=1).rsqrt()
    return s[:, None] * adj.T * s[None, :]


def test_chebnet_kernel_is_second_chebyshev_polynomial_of_scaled_laplacian():
    g = random_graph(12, 0.3, 5, symmetric=True)
    a = sym_normalised(g)
    lap = torch.eye(12) - a
    scaled = 2 * lap / 2.0 - torch.eye(12)  # λmax = 2: L̃ = L - I = -Ã
    torch.testing.assert_close(scaled, -a)
    layer = ChebLayer(12, 4)
    t0, t1, t2 = layer.kernel_terms(g, torch.eye(12))
    torch.testing.assert_close(t0, torch.eye(12))
    torch.testing.assert_close(t1.T, scaled, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(t2.T, 2 * scaled @ scaled - torch.eye(12), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("order", ["propagate", "project"])
def test_chebnet_layer_matches_dense_formula(order):
    g = random_graph(10, 0.35, 6, symmetric=True)
    a = sym_normalised(g)
    torch.manual_seed(0)
    layer = ChebLayer(6, 3, activation=None, batch_norm=False, graph_norm=False)
    layer.order = order
    with torch.no_grad():
        layer.bias.uniform_(-1, 1)
    x = torch.randn(10, 6)
    w1, w2, w3 = (lin.weight.T for lin in (layer.c1, layer.c2, layer.c3))
    expected = x @ w1 + (-a @ x) @ w2 + (2 * a @ a @ x - x) @ w3 + layer.bias
    torch.testing.assert_close(layer(g, x), expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(layer(g, x.to_sparse()), expected, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("in_dim,out_dim", [(4, 3), (3, 4)])  # project first / propagate first
def test_gcn_release_norm_uses_in_degree_on_both_sides(in_dim, out_dim):
    g = random_graph(10, 0.3, 7)  # directed: in- and out-degrees differ
    torch.manual_seed(0)
    layer = GCNLayer(in_dim, out_dim, activation=None, batch_norm=False, graph_norm=False)
    x = torch.randn(10, in_dim)
    with torch.no_grad():
        layer.bias.uniform_(-1, 1)
    expected = sym_normalised(g) @ x @ layer.conv.weight + layer.bias
    torch.testing.assert_close(layer(g, x), expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(layer(g, x.to_sparse()), expected, atol=1e-5, rtol=1e-4)
    both = GCNLayer(in_dim, out_dim, activation=None, batch_norm=False, graph_norm=False,
                    source_degree="out")
    both.load_state_dict(layer.state_dict())
    assert not torch.allclose(both(g, x), expected, atol=1e-4)  # DGL 2.x: out-degree at source
    sym = random_graph(10, 0.3, 8, symmetric=True)
    torch.testing.assert_close(both(sym, x), layer(sym, x), atol=1e-5, rtol=1e-4)


def test_monet_pseudo_coordinates_match_edge_loop():
    g = random_graph(8, 0.35, 9)
    indeg = g.in_degrees().tolist()
    src, dst = g.edges()
    expected = [[1 / np.sqrt(indeg[u] + 1), 1 / np.sqrt(indeg[v] + 1)]
                for u, v in zip(src.tolist(), dst.tolist())]
    torch.testing.assert_close(pseudo_coordinates(g), torch.tensor(expected, dtype=torch.float32))


@pytest.mark.parametrize("aggregator", ["mean", "gcn", "pool"])
@pytest.mark.parametrize("in_dim,out_dim", [(5, 3), (3, 5)])  # project first / aggregate first
def test_sage_conv_matches_dense_formula(aggregator, in_dim, out_dim):
    g = random_graph(9, 0.25, 19)  # directed, two nodes without in-edges
    adj = dense_adjacency(g).double()  # adj[u, v] = 1 for u -> v
    deg = adj.sum(0)
    assert (deg == 0).any()
    torch.manual_seed(0)
    conv = SAGEConv(in_dim, out_dim, aggregator).double()
    x = torch.randn(9, in_dim, dtype=torch.float64)
    w_neigh = conv.fc_neigh.weight.T
    with torch.no_grad():
        if aggregator == "mean":
            expected = conv.fc_self(x) + (adj.T @ x) / deg.clamp(min=1)[:, None] @ w_neigh
        elif aggregator == "gcn":
            conv.bias.uniform_(-1, 1)
            expected = (adj.T @ x + x) / (deg + 1)[:, None] @ w_neigh + conv.bias
        else:  # elementwise max over the in-neighbours of relu(fc_pool(x)); 0 without any
            pooled = torch.relu(conv.fc_pool(x))
            masked = torch.where(adj.T[:, :, None] > 0, pooled[None], -torch.inf).amax(1)
            neigh = torch.where(deg[:, None] > 0, masked, 0.0)
            expected = conv.fc_self(x) + neigh @ w_neigh
        torch.testing.assert_close(conv(g, x), expected)


def test_sage_lstm_aggregator_is_refused():
    with pytest.raises(ValueError, match="mean.*gcn.*pool"):
        GraphSageLayer(4, 4, aggregator="lstm")


def test_gat_conv_matches_dense_attention():
    g = random_graph(8, 0.2, 12)  # two nodes without in-edges
    adj = dense_adjacency(g).bool()
    torch.manual_seed(0)
    conv = GATConv(4, 3, num_heads=2).double()
    x = torch.randn(8, 4, dtype=torch.float64)
    with torch.no_grad():
        z = conv.fc(x).view(8, 2, 3)
        score_src, score_dst = (z * conv.attn_l).sum(-1), (z * conv.attn_r).sum(-1)  # (N, H)
        e = F.leaky_relu(score_src[:, None, :] + score_dst[None, :, :], 0.2)  # [u, v, h]
        e = torch.where(adj[:, :, None], e, -torch.inf)
        alpha = torch.nan_to_num(torch.softmax(e, dim=0))  # over the sources u of each v
        expected = torch.einsum("uvh,uhd->vhd", alpha, z)
        torch.testing.assert_close(conv(g, x), expected)
    assert (g.in_degrees() == 0).any() and (conv(g, x)[g.in_degrees() == 0] == 0).all()


@pytest.mark.parametrize("aggregator", ["sum", "mean", "max"])
def test_gmm_conv_matches_edge_loop(aggregator):
    g = random_graph(7, 0.2, 13)  # one node without in-edges
    assert (g.in_degrees() == 0).any()
    torch.manual_seed(0)
    conv = GMMConv(3, 2, dim=2, n_kernels=3, aggregator=aggregator).double()
    x = torch.randn(7, 3, dtype=torch.float64)
    pseudo = torch.rand(g.num_edges(), 2, dtype=torch.float64)
    with torch.no_grad():
        conv.bias.uniform_(-1, 1)
        conv.inv_sigma.uniform_(0.5, 2)
        h = conv.fc(x).view(7, 3, 2)
        messages = [[] for _ in range(7)]
        for e, (u, v) in enumerate(zip(*(t.tolist() for t in g.edges()))):
            w = torch.exp(-0.5 * (((pseudo[e] - conv.mu) * conv.inv_sigma) ** 2).sum(-1))  # (K,)
            messages[v].append(w[:, None] * h[u])
        reduce = {"sum": lambda m: m.sum(0), "mean": lambda m: m.mean(0),
                  "max": lambda m: m.amax(0)}[aggregator]
        expected = torch.stack([reduce(torch.stack(m)).sum(0) if m else x.new_zeros(2)
                                for m in messages]) + conv.bias
        torch.testing.assert_close(conv(g, x, pseudo), expected)


@pytest.mark.parametrize("k", [1, 3])
def test_sgconv_is_k_propagations_then_linear(k):
    g = random_graph(10, 0.3, 14).add_self_loops()
    torch.manual_seed(0)
    conv = SGConv(5, 3, k=k).double()
    x = torch.randn(10, 5, dtype=torch.float64)
    with torch.no_grad():
        conv.fc.bias.uniform_(-1, 1)
        expected = torch.linalg.matrix_power(sym_normalised(g).double(), k) @ x
        torch.testing.assert_close(conv(g, x), conv.fc(expected))


def test_conv_parameter_names_are_those_of_the_dgl_modules():
    """Checkpoints written by the DGL-based version load: same ``state_dict`` names."""
    def conv_keys(module: torch.nn.Module, prefix: str) -> set[str]:
        return {k for k in module.state_dict() if k.startswith(prefix)}

    assert conv_keys(GCNLayer(4, 3), "conv.") == {"conv.weight"}
    assert "bias" in GCNLayer(4, 3).state_dict()
    assert conv_keys(GATLayer(4, 3, 2), "conv.") == {"conv.fc.weight", "conv.attn_l",
                                                     "conv.attn_r"}
    assert conv_keys(GraphSageLayer(4, 3), "conv.") == {
        "conv.fc_self.weight", "conv.fc_self.bias", "conv.fc_neigh.weight"}
    assert conv_keys(GraphSageLayer(4, 3, aggregator="pool"), "conv.") == {
        "conv.fc_pool.weight", "conv.fc_pool.bias", "conv.fc_self.weight",
        "conv.fc_self.bias", "conv.fc_neigh.weight"}
    assert conv_keys(GraphSageLayer(4, 3, aggregator="gcn"), "conv.") == {
        "conv.bias", "conv.fc_neigh.weight"}
    assert conv_keys(GMMLayer(4, 3), "conv.") == {"conv.mu", "conv.inv_sigma", "conv.fc.weight",
                                                  "conv.bias"}
    net = build_net("SGC", LEVELS["node"], small_params("SGC"))
    assert conv_keys(net, "prop.") == {"prop.fc.weight", "prop.fc.bias"}


@pytest.mark.parametrize("make", [lambda: GCNLayer(5, 4), lambda: ChebLayer(5, 4),
                                  lambda: GINLayer(5, 4, learn_eps=True)],
                         ids=["GCN", "ChebNet", "GIN"])
def test_reset_parameters_draws_a_layer_as_its_constructor_does(make):
    """These layers draw their initial values in the order reset_parameters redraws them, so a
    reset under the constructor's seed gives back the constructed layer, biases and ε at 0."""
    torch.manual_seed(3)
    layer = make()
    built = {k: v.clone() for k, v in layer.state_dict().items()}
    with torch.no_grad():
        for param in layer.parameters():
            param.add_(1.0)
    torch.manual_seed(3)
    layer.reset_parameters()
    for key, value in layer.state_dict().items():
        if not key.endswith("num_batches_tracked"):
            assert torch.equal(value, built[key]), key


# ------------------------------------------------------------------ APGCN
def test_apgcn_halting_and_penalty():
    io = LEVELS["node"]
    p = small_params("APGCN", n_iter=10, prop_penalty=0.05)
    net = build_net("APGCN", io, p)
    assert net.auxiliary_loss() == 0.0  # before any forward pass
    bias = net.prop.halt.bias.item()
    assert bias == pytest.approx(np.log((1 / 11) / (1 - 1 / 11)), abs=1e-6)  # logit(1/(T+1))
    g, snorm_n = graph_batch(io)
    net(g, g.ndata["feat"], snorm_n)
    steps, rem = net.steps, net.remainders
    # steps counts 1 + the accepted propagation steps (as in the release): at most n_iter + 1
    assert (steps >= 1).all() and (steps <= p["n_iter"] + 1).all()
    assert ((rem >= 0) & (rem <= 1)).all()
    penalty = net.auxiliary_loss()
    assert penalty.item() > 0
    torch.testing.assert_close(penalty, 0.05 * (steps + rem).mean())
    penalty.backward()
    assert net.prop.halt.weight.grad is not None  # the penalty trains the halting unit


def test_apgcn_mode_names():
    assert AdaptivePropagation(4, 4).mode == "one_hop"  # the release's propagation
    assert AdaptivePropagation(4, 4, mode="release").mode == "one_hop"  # the earlier name
    with pytest.raises(ValueError, match="one_hop"):
        AdaptivePropagation(4, 4, mode="deep")


@pytest.mark.parametrize("mode", ["one_hop", "adaptive"])
def test_apgcn_known_answers(mode):
    g = random_graph(9, 0.35, 10, symmetric=True)
    x = torch.randn(9, 4)
    prop = AdaptivePropagation(4, 4, mode=mode).eval()
    px = ap_propagate(g, x)
    with torch.no_grad():  # never halt: every node runs all T = 4 steps
        prop.halt.weight.zero_()
        prop.halt.bias.fill_(-30.0)
    out, steps, rem = prop(g, x)
    assert (steps == 5).all() and torch.allclose(rem, torch.ones(9))
    # p = 0 until steps reaches T, then the remainder 1: step k contributes z^{k-1}, k < T-1
    if mode == "one_hop":  # every z^k = P x
        expected = (x + 3 * px) / 5
    else:  # z^k = P^k x: z^0 + z^1 + z^3 + z^4
        p2 = ap_propagate(g, px)
        p3 = ap_propagate(g, p2)
        expected = (x + px + p3 + ap_propagate(g, p3)) / 5
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-4)
    with torch.no_grad():  # halt at once: one step, output P x, remainder 1
        prop.halt.bias.fill_(30.0)
    out, steps, rem = prop(g, x)
    assert (steps == 1).all() and torch.allclose(rem, torch.ones(9))
    torch.testing.assert_close(out, px)

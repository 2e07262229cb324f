"""OptBasisGNN: the per-signal orthonormal basis against an independent dense computation, its
response for a given signal, batches, the net's parameter counts and a few training steps."""

import numpy as np
import pytest
import torch

from autogcn import OptBasisProp
from autogcn.graph import Graph
from autogcn.optbasis import basis_polynomials, lanczos_basis
from autogcn.polynomial import filter_operator
from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters, optimizer_groups
from nets.successors import OPTBASIS, OptBasisNet
from tests.test_baselines import LEVELS, check_single_node_graph, random_graph, run, small_params
from tests.test_successors import adjacency, undirected_graph_with_isolated_nodes
from train.config import validate

K = 4


def dense_operator(g: Graph) -> np.ndarray:
    """PyG ``gcn_norm(..., add_self_loops=False)`` on the undirected graph: D^-1/2 A D^-1/2,
    degree 0 counted as 1 (such a node has no entries, so the choice is invisible)."""
    a = adjacency(g)
    a = np.maximum(a, a.T)
    d = a.sum(1)
    s = np.where(d > 0, d, 1.0) ** -0.5
    return s[:, None] * a * s[None, :]


def krylov_orthonormal(n: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    """An orthonormal basis of span{x, Nx, ..., N^k x} by QR of the Krylov matrix (not a
    three-term recurrence), signs fixed so that each vector's component along the new Krylov
    direction is positive, as the recurrence's division by a positive norm makes it."""
    krylov = np.stack([np.linalg.matrix_power(n, i) @ x for i in range(k + 1)], 1)
    q, r = np.linalg.qr(krylov)
    return q * np.sign(np.diag(r))


def signal_graph(seed: int = 0) -> tuple[Graph, torch.Tensor]:
    """A connected-enough undirected graph with two isolated nodes and a random 3-channel
    signal whose Krylov spaces have full dimension K + 1."""
    g = undirected_graph_with_isolated_nodes(14, seed)
    x = torch.randn(14, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    return g, x


def random_alpha(prop: OptBasisProp, seed: int) -> OptBasisProp:
    prop = prop.double()
    with torch.no_grad():
        prop.alpha.copy_(torch.rand(prop.alpha.shape, dtype=torch.float64,
                                    generator=torch.Generator().manual_seed(seed)) * 2 - 1)
    return prop


@pytest.mark.parametrize("seed", [0, 1])
def test_basis_is_the_orthonormal_krylov_basis_of_each_channel(seed):
    g, x = signal_graph(seed)
    n = dense_operator(g)
    basis, _ = lanczos_basis(filter_operator(g, "undirected"), x, K)
    h = torch.stack(basis, 1).numpy()  # (N, K + 1, C)
    for c in range(x.shape[1]):
        np.testing.assert_allclose(h[:, :, c].T @ h[:, :, c], np.eye(K + 1), atol=1e-10)
        np.testing.assert_allclose(h[:, :, c], krylov_orthonormal(n, x[:, c].numpy(), K),
                                   atol=1e-9)


def test_output_equals_dense_combination_of_the_basis():
    g, x = signal_graph(2)
    n = dense_operator(g)
    prop = random_alpha(OptBasisProp(3, K), 5)
    expected = np.stack([krylov_orthonormal(n, x[:, c].numpy(), K) @ prop.alpha[c].detach()
                         .numpy() for c in range(3)], 1)
    np.testing.assert_allclose(prop(x, g.edge_index).detach().numpy(), expected, atol=1e-9)


def test_initial_filter_is_the_normalised_signal():
    g, x = signal_graph(3)
    out = OptBasisProp(3, K).double()(x, g.edge_index)
    torch.testing.assert_close(out, x / x.norm(dim=0))


def test_response_for_a_signal_equals_eigendecomposition():
    """out_c = U diag(F_c(1 - μ)) Uᵀ x_c with F from frequency_response(λ, x, graph)."""
    g, x = signal_graph(4)
    mu, u = np.linalg.eigh(dense_operator(g))
    prop = random_alpha(OptBasisProp(3, K), 6)
    resp = prop.frequency_response(torch.tensor(1.0 - mu), x, g.edge_index)["filter"].numpy()
    assert resp.shape == (3, len(mu))
    expected = np.stack([u @ (resp[c] * (u.T @ x[:, c].numpy())) for c in range(3)], 1)
    np.testing.assert_allclose(prop(x, g.edge_index).detach().numpy(), expected, atol=1e-9)


def test_basis_polynomials_are_orthonormal_under_the_signal_spectral_measure():
    g, x = signal_graph(5)
    mu, u = np.linalg.eigh(dense_operator(g))
    _, coefficients = lanczos_basis(filter_operator(g, "undirected"), x, K)
    q = basis_polynomials(coefficients, torch.tensor(mu)).numpy()  # (K + 1, N, C)
    for c in range(3):
        weights = (u.T @ x[:, c].numpy()) ** 2
        gram = (q[:, :, c] * weights) @ q[:, :, c].T
        np.testing.assert_allclose(gram, np.eye(K + 1), atol=1e-9)


def test_no_response_without_a_signal():
    prop = OptBasisProp(3, K)
    with pytest.raises(ValueError, match="no fixed frequency response"):
        prop.frequency_response(torch.linspace(0, 2, 5))
    g, x = signal_graph()
    batch = Graph.batch([g, g])
    with pytest.raises(ValueError, match="one graph"):
        prop.double().frequency_response(torch.linspace(0, 2, 5), torch.cat([x, x]), batch)


def test_a_directed_graph_is_filtered_as_its_undirected_graph():
    g = random_graph(12, 0.3, 7)  # directed, no repeated edge
    pairs = torch.cat([g.edge_index, g.edge_index.flip(0)], 1).unique(dim=1)  # each edge once
    both = Graph(pairs[0], pairs[1], 12)
    assert both.num_edges() > g.num_edges()
    x = torch.randn(12, 3, dtype=torch.float64)
    prop = random_alpha(OptBasisProp(3, K), 8)
    torch.testing.assert_close(prop(x, g.edge_index), prop(x, both.edge_index))


def test_each_graph_of_a_batch_is_orthonormalised_on_its_own():
    graphs = [undirected_graph_with_isolated_nodes(9, 0), Graph([], [], 1),
              undirected_graph_with_isolated_nodes(12, 2)]
    xs = [torch.randn(gr.num_nodes(), 3, dtype=torch.float64) for gr in graphs]
    prop = random_alpha(OptBasisProp(3, K), 9)
    alone = torch.cat([prop(x, gr) for x, gr in zip(xs, graphs, strict=True)])
    batch = Graph.batch(graphs)
    torch.testing.assert_close(prop(torch.cat(xs), batch), alone)
    ids = batch.node_graph_ids()  # PyG's batch vector with a plain edge_index
    torch.testing.assert_close(prop(torch.cat(xs), batch.edge_index, batch=ids), alone)


@pytest.mark.parametrize("dtype,k", [(torch.float64, K), (torch.float32, 20)])
def test_zero_channel_stays_zero_and_passes_no_gradient(dtype, k):
    """A channel that ReLU and dropout zeroed (Squirrel's dprate 0.5): its norms sit on the
    1e-8 floor at every step, and their derivative, 1e8 a step, overflowed float32 at K = 20
    into NaN. It must give zeros and zero gradients, and leave the other channels' gradients
    those of a dense computation without it."""
    g, x = signal_graph(6)
    x = x.to(dtype)
    x[:, 1] = 0.0
    x.requires_grad_(True)
    prop = random_alpha(OptBasisProp(3, k), 10).to(dtype)
    out = prop(x, g.edge_index)
    assert torch.equal(out[:, 1], torch.zeros(14, dtype=dtype))
    probe = torch.randn(out.shape, dtype=dtype, generator=torch.Generator().manual_seed(1))
    (out * probe).sum().backward()
    assert torch.isfinite(x.grad).all() and torch.isfinite(prop.alpha.grad).all()
    assert torch.equal(x.grad[:, 1], torch.zeros(14, dtype=dtype))
    assert torch.equal(prop.alpha.grad[1], torch.zeros(k + 1, dtype=dtype))
    if dtype == torch.float64:  # beyond K the Krylov space of 14 nodes is exhausted
        kept = [0, 2]
        x_ref = x.detach()[:, kept].clone().requires_grad_(True)
        alpha_ref = prop.alpha.detach()[kept].clone().requires_grad_(True)
        a = adjacency(g)
        ref = dense_torch_basis_output(torch.tensor(np.maximum(a, a.T)), x_ref, alpha_ref, k)
        torch.testing.assert_close(out[:, kept], ref)
        (ref * probe[:, kept]).sum().backward()
        torch.testing.assert_close(x.grad[:, kept], x_ref.grad)
        torch.testing.assert_close(prop.alpha.grad[kept], alpha_ref.grad)


def test_bad_batch_vector_is_named():
    g, x = signal_graph()
    with pytest.raises(ValueError, match="batch must hold one graph id per node"):
        OptBasisProp(3, K).double()(x, g.edge_index, batch=torch.zeros(3, dtype=torch.long))


# ------------------------------------------------------------------ the net
@pytest.mark.parametrize("features,classes,K_,expected", [(500, 3, 12, 33091),
                                                          (2089, 5, 20, 135429)])
def test_net_parameter_count_is_the_official_one(features, classes, K_, expected):
    """SUCCESSORS.md §7: (F·64 + 64) + (64·C + C) + 64·(K + 1)."""
    p = validate({"model": OPTBASIS, "net_params": {"hidden_dim": 64, "poly_order": K_}})
    net = build_net(OPTBASIS, NetIO("single_graph", "linear", features, classes),
                    p["net_params"])
    assert isinstance(net, OptBasisNet)
    assert count_parameters(net) == expected


def test_net_is_mlp_filter_linear():
    """dropout → Linear → ReLU → dropout2 → basis → dropout → Linear (eval: no dropout)."""
    io = LEVELS["single_graph"]
    torch.manual_seed(0)
    net = build_net(OPTBASIS, io, small_params(OPTBASIS, poly_order=3)).double().eval()
    g = random_graph(20, 0.15, 3, symmetric=True)
    x = torch.rand(20, io.in_dim, dtype=torch.float64)
    lin_in, lin_out = net.lin_in.layers[0], net.lin_out.layers[0]
    h = torch.relu(x @ lin_in.weight.T + lin_in.bias)
    expected = net.filter(h, g) @ lin_out.weight.T + lin_out.bias
    torch.testing.assert_close(net(g, x), expected)


def test_optimizer_groups_are_the_official_two():
    io = LEVELS["single_graph"]
    p = small_params(OPTBASIS, prop_lr=0.005, prop_wd=1e-3)
    net = build_net(OPTBASIS, io, p)
    main, prop = optimizer_groups(net, {"init_lr": 0.04, "weight_decay": 1e-5}, p)
    assert prop["params"] == [net.filter.alpha]
    assert (prop["lr"], prop["weight_decay"]) == (0.005, 1e-3)
    assert (main["lr"], main["weight_decay"]) == (0.04, 1e-5)


@pytest.mark.parametrize("level", list(LEVELS))
def test_a_few_training_steps_every_level(level):
    io = LEVELS[level]
    torch.manual_seed(0)
    p = small_params(OPTBASIS, poly_order=3, dprate=0.0, prop_lr=0.05)
    net = build_net(OPTBASIS, io, p).train()
    opt = torch.optim.Adam(optimizer_groups(net, {"init_lr": 0.02, "weight_decay": 0.0}, p))
    losses = []
    alpha = [m.alpha for m in net.modules() if isinstance(m, OptBasisProp)]
    for step in range(5):
        opt.zero_grad()
        loss = run(OPTBASIS, io, net, sparse=level == "single_graph").square().mean()
        loss.backward()
        assert all(torch.isfinite(q.grad).all() for q in net.parameters() if q.grad is not None)
        if step == 0:  # the coefficients learn (later a ReLU may silence a layer)
            assert alpha and all(a.grad.abs().sum() > 0 for a in alpha)
        opt.step()
        losses.append(loss.item())
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]


def test_single_node_graph_alone():
    check_single_node_graph(OPTBASIS)


def dense_torch_basis_output(w: torch.Tensor, x: torch.Tensor, alpha: torch.Tensor,
                             k: int) -> torch.Tensor:
    """The filter written out densely in torch (differentiable in ``w``): Gram-Schmidt of the
    Krylov vectors of each channel, full reorthogonalisation, then the α combination."""
    d = w.sum(1)
    s = torch.where(d > 0, d, torch.ones_like(d)) ** -0.5
    n = s[:, None] * w * s[None, :]
    cols = []
    for c in range(x.shape[1]):
        q = [x[:, c] / x[:, c].norm()]
        for _ in range(k):
            v = n @ q[-1]
            for u in q:
                v = v - (v @ u) * u
            q.append(v / v.norm())
        cols.append(sum(alpha[c, i] * q[i] for i in range(k + 1)))
    return torch.stack(cols, 1)


def test_gradient_reaches_learned_edge_weights_as_in_a_dense_computation():
    g, x = signal_graph(11)
    src, dst = g.edge_index
    keep = src < dst  # one weight per undirected edge, used both ways
    half = torch.rand(int(keep.sum()), dtype=torch.float64,
                      generator=torch.Generator().manual_seed(3)) + 0.5
    ids = torch.full((g.num_nodes(), g.num_nodes()), -1, dtype=torch.long)
    ids[src[keep], dst[keep]] = torch.arange(half.numel())
    ids[dst[keep], src[keep]] = torch.arange(half.numel())
    prop = random_alpha(OptBasisProp(3, K), 12)
    w_mod = half.clone().requires_grad_(True)
    out = prop(x, g.edge_index, w_mod[ids[src, dst]])
    w_ref = half.clone().requires_grad_(True)
    dense = torch.zeros(g.num_nodes(), g.num_nodes(), dtype=torch.float64)
    dense = dense.index_put((dst, src), w_ref[ids[src, dst]])
    ref = dense_torch_basis_output(dense, x, prop.alpha.detach(), K)
    torch.testing.assert_close(out, ref)
    probe = torch.randn_like(out)
    (out * probe).sum().backward()
    (ref * probe).sum().backward()
    assert w_mod.grad.abs().sum() > 0
    torch.testing.assert_close(w_mod.grad, w_ref.grad)


def test_lazy_channels_are_set_by_the_first_input():
    g, x = signal_graph(12)
    prop = OptBasisProp(-1, K).double()
    out = prop(x, g.edge_index)
    assert prop.channels == 3 and prop.alpha.shape == (3, K + 1)
    torch.testing.assert_close(out, x / x.norm(dim=0))


def test_pyg_explainer_mask_acts_as_an_edge_weight():
    pytest.importorskip("torch_geometric")
    from torch_geometric.explain import Explainer, GNNExplainer
    from torch_geometric.explain.algorithm.utils import clear_masks, set_masks

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.prop = random_alpha(OptBasisProp(3, 2), 14).float()

        def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
            return self.prop(x, edge_index)

    g, x = signal_graph(13)
    x, ei, model = x.float(), g.edge_index, Model()
    mask = torch.randn(ei.shape[1], requires_grad=True)
    set_masks(model, mask, ei, apply_sigmoid=True)
    out = model(x, ei)
    (grad,) = torch.autograd.grad(out.square().sum(), mask)
    clear_masks(model)
    weight = mask.detach().sigmoid().requires_grad_()
    expected = model.prop(x, ei, weight)
    torch.testing.assert_close(out, expected)
    (grad_w,) = torch.autograd.grad(expected.square().sum(), weight)
    torch.testing.assert_close(grad, grad_w * weight * (1 - weight))
    explainer = Explainer(model, algorithm=GNNExplainer(epochs=3), explanation_type="model",
                          edge_mask_type="object",
                          model_config={"mode": "multiclass_classification",
                                        "task_level": "node", "return_type": "raw"})
    edge_mask = explainer(x, ei, index=torch.tensor([0, 4])).edge_mask
    assert bool(torch.isfinite(edge_mask).all()) and bool((edge_mask > 0).any())

"""``gin_release_forward``: GIN with the AutoGCN release's forward; on single graphs, both parts:

(a) the output layer is allocated but not run (``gin_output_layer`` sets this part alone) and
(b) the MLP wrapper's batch norm is allocated but not applied. Every combination is checked
against a hand computation from the net's own parameters (dense adjacency, explicit batch
statistics, dropout masks drawn in the same order). On batched graphs (ZINC, SBM, superpixels)
the release's forward is part (b) and no ReLU outside the MLP (its layers get no activation).
The counts do not depend on the option, and PubMed's is the paper's once the release's unused
``Linear(in, hidden)`` is added back.
"""

import os

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters
from tests.helpers import rand_graph
from train.config import ConfigError, apply_overrides, load_config, validate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBMED_GIN_PAPER_PARAMS = 16161  # the paper's #Param for GIN on PubMed (PAPER_RESULTS.md)
IO = NetIO("single_graph", "linear", 5, 3)


def config(model_params: dict, dataset: str = "PUBMED") -> dict:
    params = {"L": 2, "hidden_dim": 6, "dropout": 0.5, "graph_norm": False,
              "batch_norm": False, "residual": False, **model_params}
    return validate({"model": "GIN", "dataset": dataset, "net_params": params})


def single_graph_gin(**net) -> nn.Module:
    return build_net("GIN", IO, config(net)["net_params"])


def batch_norm_train(z: torch.Tensor, bn: nn.BatchNorm1d) -> torch.Tensor:
    """Training-mode batch norm: batch mean and biased variance."""
    mean, var = z.mean(0), z.var(0, unbiased=False)
    return (z - mean) / torch.sqrt(var + bn.eps) * bn.weight + bn.bias


def mlp_by_hand(mlp: nn.Sequential, m: torch.Tensor) -> torch.Tensor:
    """Linear, then (BN, ReLU, Linear) pairs: the update MLP's maths."""
    linears = [mod for mod in mlp if isinstance(mod, nn.Linear)]
    norms = [mod for mod in mlp if isinstance(mod, nn.BatchNorm1d)]
    z = m @ linears[0].weight.T + linears[0].bias
    for bn, lin in zip(norms, linears[1:]):
        z = torch.relu(batch_norm_train(z, bn)) @ lin.weight.T + lin.bias
    return z


def gin_by_hand(layers, adj: torch.Tensor, x: torch.Tensor, p: float, node_norm: bool,
                post_bn: bool, output_layer=None) -> torch.Tensor:
    """Per hidden layer: m = (1+ε)h + Σ_{u→v} h_u, z = MLP(m), [wrapper BN, ReLU], [post BN],
    ReLU, dropout; then, if given, the output layer: the same without ReLU and dropout."""
    def layer_by_hand(layer, h, last):
        z = mlp_by_hand(layer.mlp, (1 + layer.eps) * h + adj.T @ h)
        if node_norm:
            z = batch_norm_train(z, layer.bn_apply)
            z = z if last else torch.relu(z)
        if post_bn:
            z = batch_norm_train(z, layer.post.batchnorm_h)
        return z if last else F.dropout(torch.relu(z), p, training=True)

    h = x
    for layer in layers:
        h = layer_by_hand(layer, h, last=False)
    return h if output_layer is None else layer_by_hand(output_layer, h, last=True)


# (gin_release_forward, gin_output_layer) -> (wrapper norm applied, output layer run)
FORWARDS = {
    (False, None): (True, True),  # this project's default: everything runs
    (False, False): (True, False),  # part (a) alone: the earlier gin_output_layer false
    (True, None): (False, False),  # the release's forward, both parts
    (True, True): (False, True),  # part (b) alone
}


@pytest.mark.parametrize("post_bn", [False, True])
@pytest.mark.parametrize("release,output_layer", list(FORWARDS))
def test_forward_matches_hand_computation(release, output_layer, post_bn):
    node_norm, runs_output = FORWARDS[(release, output_layer)]
    torch.manual_seed(0)
    net = single_graph_gin(n_mlp_GIN=2, gin_release_forward=release,
                           gin_output_layer=output_layer, batch_norm=post_bn)
    g = rand_graph(9, 30, seed=1)
    adj = torch.zeros(9, 9)
    src, dst = g.edges()
    adj[src, dst] = 1.0
    x = torch.randn(9, 5)
    layers = list(net.stack.layers)
    output = layers.pop() if runs_output else net.unused_output_layer
    with torch.no_grad():
        for layer in [*layers, output]:  # ε and the BN affine maps away from their initial values
            layer.eps.fill_(0.3)
            for bn in (layer.bn_apply, layer.post.batchnorm_h):
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.uniform_(-0.5, 0.5)
    net.train()
    torch.manual_seed(7)
    out = net(g, x)
    torch.manual_seed(7)  # the same dropout masks, drawn in the same order
    expected = gin_by_hand(layers, adj, x, 0.5, node_norm, post_bn,
                           output if runs_output else None)
    assert out.shape == (9, 3 if runs_output else 6)  # classes, or the hidden_dim scores
    torch.testing.assert_close(out, expected)
    # a batch norm that is not applied never sees a batch (the release only built it)
    assert all(int(layer.bn_apply.num_batches_tracked) == int(node_norm) for layer in layers)


def test_output_layer_is_allocated_but_unused():
    net = single_graph_gin(gin_release_forward=True)
    assert len(net.stack.layers) == 2
    net(rand_graph(9, 30, seed=2), torch.randn(9, 5)).sum().backward()
    assert all(q.grad is None for q in net.unused_output_layer.parameters())
    assert all(q.grad is None for layer in net.stack.layers for q in layer.bn_apply.parameters())
    assert all(q.grad is not None for layer in net.stack.layers for q in layer.mlp.parameters())


def test_refuses_fewer_hidden_units_than_classes():
    with pytest.raises(ValueError, match="needs hidden_dim >= the 3 classes"):
        single_graph_gin(hidden_dim=2, gin_release_forward=True)
    single_graph_gin(hidden_dim=2, gin_release_forward=True, gin_output_layer=True)  # runs it


@pytest.mark.parametrize("release", [False, True])
def test_batched_gin_forward_matches_hand_computation(release):
    cfg = validate({"model": "GIN", "dataset": "SBM_PATTERN",
                    "net_params": {"L": 1, "gin_release_forward": release}})
    net = build_net("GIN", NetIO("node", "embedding", 3, 2), cfg["net_params"])
    layer = net.stack.layers[0]
    g, x, snorm = rand_graph(9, 30, seed=3), torch.randn(9, 90), torch.full((9, 1), 1 / 3)
    adj = torch.zeros(9, 9)
    adj[g.edges()[0], g.edges()[1]] = 1.0
    layer.train()
    z = mlp_by_hand(layer.mlp, x + adj.T @ x)
    if release:  # the release: no ReLU outside the MLP, the wrapper's batch norm never run
        expected = batch_norm_train(z * snorm, layer.post.batchnorm_h) + x  # residual
    else:  # benchmarking-gnns: the wrapper's batch norm and ReLU, ReLU after the post BN
        z = torch.relu(batch_norm_train(z, layer.bn_apply))
        expected = torch.relu(batch_norm_train(z * snorm, layer.post.batchnorm_h)) + x
    torch.testing.assert_close(layer(g, x, snorm), expected)
    assert int(layer.bn_apply.num_batches_tracked) == int(not release)
    with pytest.raises(ConfigError, match="gin_output_layer = False does not apply to GIN"):
        validate({"model": "GIN", "dataset": "SBM_PATTERN",
                  "net_params": {"gin_output_layer": False}})


@pytest.mark.parametrize("config, io", [
    ("molecules_graph_regression_GIN_ZINC", NetIO("graph", "embedding", 28, 1)),
    ("SBMs_node_clustering_GIN_PATTERN", NetIO("node", "embedding", 3, 2)),
    ("SBMs_node_clustering_GIN_CLUSTER", NetIO("node", "embedding", 7, 6)),
    ("superpixels_graph_classification_GIN_MNIST", NetIO("graph", "linear", 3, 10)),
    ("superpixels_graph_classification_GIN_CIFAR10", NetIO("graph", "linear", 5, 10))])
def test_batched_configs_use_the_release_forward_at_the_same_count(config, io):
    cfg = load_config(os.path.join(ROOT, "configs", f"{config}.json"))
    assert cfg["net_params"]["gin_release_forward"] is True
    counts = {count_parameters(build_net("GIN", io, {**cfg["net_params"], **change}))
              for change in ({}, {"gin_release_forward": False})}
    assert len(counts) == 1


@pytest.mark.parametrize("dataset,in_dim,classes", [("PUBMED", 500, 3), ("SQUIRREL", 2089, 5)])
def test_configs_use_the_release_forward_and_its_count(dataset, in_dim, classes):
    cfg = load_config(os.path.join(ROOT, "configs", f"node_classification_GIN_{dataset}.json"))
    assert cfg["net_params"]["gin_release_forward"] is True
    assert cfg["net_params"]["gin_output_layer"] is None
    io = NetIO("single_graph", "linear", in_dim, classes)
    counts = {count_parameters(build_net("GIN", io, {**cfg["net_params"], **change}))
              for change in ({}, {"gin_release_forward": False},
                             {"gin_output_layer": True}, {"gin_output_layer": False})}
    assert len(counts) == 1  # the option changes the forward, never the count
    if dataset == "PUBMED":
        unused_embedding = nn.Linear(in_dim, cfg["net_params"]["hidden_dim"])  # embedding_h
        assert counts.pop() + count_parameters(unused_embedding) == PUBMED_GIN_PAPER_PARAMS


def test_command_line_switches():
    cfg = load_config(os.path.join(ROOT, "configs", "node_classification_GIN_PUBMED.json"))
    old = apply_overrides(cfg, {"gin_output_layer": "False"})["net_params"]  # earlier commands
    assert (old["gin_release_forward"], old["gin_output_layer"]) == (True, False)
    fixed = apply_overrides(cfg, {"gin_release_forward": "False"})["net_params"]
    net = build_net("GIN", NetIO("single_graph", "linear", 500, 3), fixed)
    assert len(net.stack.layers) == 2 and all(m.apply_node_norm for m in net.stack.layers)

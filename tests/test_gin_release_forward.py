"""``gin_output_layer: false``: single-graph GIN with the release's forward (stops after L layers).

The net is checked against a hand computation of that forward from its own parameters (dense
adjacency, explicit batch statistics and dropout masks drawn in the same order), and against the
paper's PubMed #Param once the release's unused ``Linear(in, hidden)`` is added back.
"""

import os

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from nets.gnn_net import NetIO
from nets.registry import build_net, count_parameters
from tests.helpers import rand_graph
from train.config import load_config, validate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBMED_GIN_PAPER_PARAMS = 16161  # the paper's #Param for GIN on PubMed (PAPER_RESULTS.md)


def release_gin(io: NetIO, **net) -> nn.Module:
    params = {"L": 2, "hidden_dim": 6, "dropout": 0.5, "graph_norm": False,
              "batch_norm": False, "residual": False, "gin_output_layer": False, **net}
    cfg = validate({"model": "GIN", "dataset": "PUBMED", "net_params": params})
    return build_net("GIN", io, cfg["net_params"])


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


def release_forward_by_hand(gin_layers, adj: torch.Tensor, x: torch.Tensor,
                            p: float) -> torch.Tensor:
    """Per layer: (1+ε)h + Σ_{u→v} h_u, the MLP, this project's always-on BN, ReLU, dropout;
    the output layer is not run."""
    h = x
    for layer in gin_layers:
        m = (1 + layer.eps) * h + adj.T @ h
        z = torch.relu(batch_norm_train(mlp_by_hand(layer.mlp, m), layer.bn_apply))
        h = F.dropout(z, p, training=True)
    return h


def test_release_forward_matches_hand_computation():
    io = NetIO("single_graph", "linear", 5, 3)
    torch.manual_seed(0)
    net = release_gin(io, n_mlp_GIN=2)
    g = rand_graph(9, 30, seed=1)
    adj = torch.zeros(9, 9)
    src, dst = g.edges()
    adj[src, dst] = 1.0
    x = torch.randn(9, 5)
    with torch.no_grad():
        for layer in net.stack.layers:  # ε away from 0 so the self term is checked
            layer.eps.fill_(0.3)
    net.train()
    torch.manual_seed(7)
    out = net(g, x)
    torch.manual_seed(7)  # the same dropout masks, drawn in the same order
    expected = release_forward_by_hand(net.stack.layers, adj, x, 0.5)
    assert out.shape == (9, 6)  # hidden_dim scores, not num_classes
    assert (out == 0).any()  # dropout is applied to the scores, after the ReLU
    torch.testing.assert_close(out, expected)


def test_output_layer_is_allocated_but_unused():
    io = NetIO("single_graph", "linear", 5, 3)
    net = release_gin(io)
    assert len(net.stack.layers) == 2
    net(rand_graph(9, 30, seed=2), torch.randn(9, 5)).sum().backward()
    assert all(q.grad is None for q in net.unused_output_layer.parameters())
    assert all(q.grad is not None for layer in net.stack.layers for q in layer.mlp.parameters())


def test_refuses_fewer_hidden_units_than_classes():
    with pytest.raises(ValueError, match="needs hidden_dim >= the 3 classes"):
        release_gin(NetIO("single_graph", "linear", 5, 3), hidden_dim=2)


def test_pubmed_count_with_the_unused_linear_is_the_papers():
    cfg = load_config(os.path.join(ROOT, "configs", "node_classification_GIN_PUBMED.json"))
    net_params = {**cfg["net_params"], "gin_output_layer": False}
    io = NetIO("single_graph", "linear", 500, 3)
    net = build_net("GIN", io, net_params)
    hidden = net_params["hidden_dim"]
    unused_embedding = nn.Linear(io.in_dim, hidden)  # the release's embedding_h
    assert count_parameters(net) + count_parameters(unused_embedding) == PUBMED_GIN_PAPER_PARAMS

"""Printed models tell the truth: every layer and the post-processing block print their settings,
and what they print is what they do."""

import pytest
import torch

from layers.ap_layer import AdaptivePropagation
from layers.autogcn_layer import AutoGCNLayer
from layers.cheb_layer import ChebLayer
from layers.gat_layer import GATLayer
from layers.gcn_layer import GCNLayer
from layers.gin_layer import GINLayer
from layers.gmm_layer import GMMLayer
from layers.graphsage_layer import GraphSageLayer
from layers.post_processing import PostProcess
from nets.gnn_net import NetIO
from nets.registry import MODELS, build_net
from train.config import validate


def first_line(module: torch.nn.Module) -> str:
    """The module's own line: its name and extra_repr (children omitted)."""
    text = str(module).splitlines()
    return text[0] + (text[1].strip() if len(text) > 1 and "=" in text[1] and "(" not in
                      text[1].split("=")[0] else "")


@pytest.mark.parametrize("module,expected", [
    (AutoGCNLayer(8, 4, gate="release", filters=("low", "high")),
     "AutoGCNLayer(8, 4, mode=over, K=16, filters=low,high, gate=sequential, num_banks=1"),
    (PostProcess(8, 8, torch.relu, 0.0, True, False, True),
     "PostProcess(graph_norm=True, batch_norm=False (batchnorm_h allocated for the release's "
     "count), activation=relu, residual=True"),
    (PostProcess(8, 4, None, 0.5, False, True, True),  # residual off: widths differ
     "PostProcess(graph_norm=False, batch_norm=True, activation=None, residual=False"),
    (ChebLayer(6, 3), "ChebLayer(6, 3, K=2, lambda_max=2"),
    (AdaptivePropagation(10, 8), "AdaptivePropagation(n_iter=10, mode=one_hop"),
    (GINLayer(8, 8, learn_eps=False, aggregator="max"),
     "GINLayer(aggregator=max, learn_eps=False, activation=relu"),
])
def test_printed_settings(module, expected):
    assert first_line(module) == expected


def test_convolutions_print_their_options():
    assert first_line(GCNLayer(8, 4, source_degree="out").conv) == \
        "GraphConv(in=8, out=4, source_degree=out)"
    assert first_line(GATLayer(8, 4, 2).conv) == "GATConv(8, 4, num_heads=2"
    assert first_line(GMMLayer(8, 4).conv) == "GMMConv(8, 4, dim=2, n_kernels=3, aggregator=sum"
    assert first_line(GraphSageLayer(8, 4, activation=None, aggregator="pool").conv) == \
        "SAGEConv(8, 4, aggregator=pool, activation=None"


@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_post_processing_block_prints_what_it_applies(model):
    params = validate({"model": model, "net_params": {
        "L": 2, "hidden_dim": 8, "out_dim": 8, "n_heads": 2, "batch_norm": False,
        "graph_norm": True, "residual": True}})["net_params"]
    net = build_net(model, NetIO("graph", "linear", 3, 10), params)
    for module in net.modules():
        if isinstance(module, PostProcess):
            line = [s for s in str(module).splitlines() if "graph_norm=" in s][0]
            assert f"batch_norm={module.batch_norm}" in line
            assert f"residual={module.residual}" in line
            act = module.activation
            assert f"activation={'None' if act is None else act.__name__}" in line

"""PyG's explainers on the package's modules, against the installed PyG: ``GNNExplainer`` with
``edge_mask_type="object"`` gives a finite, nonzero edge mask for a model of each module; the
mask PyG sets acts as an edge weight; and ``autogcn`` neither needs nor imports PyG."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autogcn import AutoGCNConv, BernNetProp, ChebNetIIProp, GPRGNNProp, JacobiConvProp

pytest.importorskip("torch_geometric", reason="needs torch_geometric (pip install -r "
                                              "requirements.txt)")
from torch_geometric.explain import Explainer, GNNExplainer  # noqa: E402
from torch_geometric.explain.algorithm import ExplainerAlgorithm  # noqa: E402
from torch_geometric.explain.algorithm.utils import clear_masks, set_masks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
N, F, C = 10, 5, 3
MODULES = {
    "AutoGCNConv": lambda: AutoGCNConv(F, C),
    "GPRGNNProp": lambda: GPRGNNProp(K=3, alpha=0.2),
    "BernNetProp": lambda: BernNetProp(K=2),
    "ChebNetIIProp": lambda: ChebNetIIProp(K=2),
    "JacobiConvProp": lambda: JacobiConvProp(C, K=1),
}
#: How far one call carries features: AutoGCN's mid-pass filter uses Ã², a filter of order K
#: reaches K hops. PyG counts them to find the subgraph around an explained node.
HOPS = {"AutoGCNConv": 2, "GPRGNNProp": 3, "BernNetProp": 2, "ChebNetIIProp": 2,
        "JacobiConvProp": 1}


class Model(torch.nn.Module):
    """The module on a node classifier: the conv alone, or a filter of linear logits."""

    def __init__(self, name: str) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.module = MODULES[name]()
        with torch.no_grad():  # random coefficients: the successors start all-pass
            for p in self.module.parameters():
                p.uniform_(-0.5, 1.0)
        self.linear = None if name == "AutoGCNConv" else torch.nn.Linear(F, C)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.module(x if self.linear is None else self.linear(x), edge_index)


def graph() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(3)
    src = torch.randint(0, N, (24,), generator=gen)
    dst = (src + torch.randint(1, N, (24,), generator=gen)) % N
    return torch.randn(N, F, generator=gen), torch.stack([src, dst])


@pytest.mark.parametrize("node_mask_type", [None, "attributes"])
@pytest.mark.parametrize("name", list(MODULES))
def test_gnn_explainer_gives_a_finite_nonzero_edge_mask(name, node_mask_type):
    model = Model(name)
    x, ei = graph()
    explainer = Explainer(model, algorithm=GNNExplainer(epochs=5), explanation_type="model",
                          edge_mask_type="object", node_mask_type=node_mask_type,
                          model_config={"mode": "multiclass_classification",
                                        "task_level": "node", "return_type": "raw"})
    explanation = explainer(x, ei, index=torch.tensor([0, 4]))
    mask = explanation.edge_mask
    assert mask.shape == (ei.shape[1],)
    assert bool(torch.isfinite(mask).all()) and bool((mask > 0).any())
    if node_mask_type is not None:
        assert bool(torch.isfinite(explanation.node_mask).all())
    # the masks are cleared afterwards: the model is as before
    torch.testing.assert_close(model(x, ei), Model(name)(x, ei))


@pytest.mark.parametrize("name", list(MODULES))
def test_the_mask_pyg_sets_is_an_edge_weight(name):
    model = Model(name)
    x, ei = graph()
    mask = torch.randn(ei.shape[1], requires_grad=True)
    set_masks(model, mask, ei, apply_sigmoid=True)
    out = model(x, ei)
    (grad,) = torch.autograd.grad(out.square().sum(), mask)
    clear_masks(model)
    weight = mask.detach().sigmoid().requires_grad_()
    expected = model.module(x if model.linear is None else model.linear(x), ei, weight)
    torch.testing.assert_close(out, expected)
    (grad_w,) = torch.autograd.grad(expected.square().sum(), weight)
    torch.testing.assert_close(grad, grad_w * weight * (1 - weight))  # the sigmoid's chain
    torch.testing.assert_close(model(x, ei), Model(name)(x, ei))  # cleared
    assert ExplainerAlgorithm._num_hops(model) == HOPS[name]


def test_a_whole_model_with_its_hooks_pickles_and_loads(tmp_path):
    model = Model("GPRGNNProp")
    x, ei = graph()
    torch.save(model, tmp_path / "model.pt")
    loaded = torch.load(tmp_path / "model.pt", weights_only=False)
    torch.testing.assert_close(loaded(x, ei), model(x, ei))
    assert ExplainerAlgorithm._num_hops(loaded) == HOPS["GPRGNNProp"]


def test_a_mask_of_the_wrong_size_is_one_clear_error():
    model = Model("AutoGCNConv")
    x, ei = graph()
    set_masks(model, torch.zeros(ei.shape[1] + 1), ei)
    with pytest.raises(ValueError, match="the explainer's edge mask has shape"):
        model(x, ei)


def test_modules_built_before_pyg_was_imported_get_their_hooks_at_the_first_call():
    code = """
import sys, torch
from autogcn import AutoGCNConv
assert not any(m.startswith("torch_geometric") for m in sys.modules), "autogcn imported PyG"
conv = AutoGCNConv(4, 2)
ei = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
from torch_geometric.explain import Explainer, GNNExplainer
explainer = Explainer(conv, algorithm=GNNExplainer(epochs=2), explanation_type="model",
                      edge_mask_type="object", model_config={"mode": "regression",
                      "task_level": "node", "return_type": "raw"})
mask = explainer(torch.randn(3, 4), ei).edge_mask
assert bool(torch.isfinite(mask).all()) and bool((mask > 0).any()), mask
print("ok")
"""
    run = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_the_package_runs_without_pyg():
    """PyG made unimportable: every module builds, runs forward and backward, with a learned
    edge weight, and repr shows no hooks."""
    code = """
import sys
sys.modules["torch_geometric"] = None  # import torch_geometric now raises ImportError
import torch
import autogcn
ei = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
for module in (autogcn.AutoGCNConv(4, 4), autogcn.GPRGNNProp(2), autogcn.BernNetProp(2),
               autogcn.ChebNetIIProp(2), autogcn.JacobiConvProp(4, 2)):
    w = torch.rand(4, requires_grad=True)
    module(torch.randn(3, 4), ei, w).sum().backward()
    assert w.grad is not None and "pyg_explain" not in module._modules
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]

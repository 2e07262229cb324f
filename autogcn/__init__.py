"""AutoGCN and the learned polynomial filters that followed it (GPR-GNN, BernNet, ChebNetII,
JacobiConv, OptBasisGNN) as PyG-style modules that need torch only: ``module(x, edge_index,
edge_weight=None)`` (or a sparse ``adj_t``, or a :class:`Graph`) and
``frequency_response(lam)``. The guide: ``docs/layer.md``.
"""

from autogcn.bernnet import BernNetProp
from autogcn.chebnetii import ChebNetIIProp
from autogcn.conv import AutoGCNConv
from autogcn.gprgnn import GPRGNNProp
from autogcn.graph import Graph
from autogcn.jacobi import JacobiConvProp
from autogcn.optbasis import OptBasisProp
from autogcn.polynomial import PolynomialFilter

__all__ = ["AutoGCNConv", "BernNetProp", "ChebNetIIProp", "GPRGNNProp", "Graph",
           "JacobiConvProp", "OptBasisProp", "PolynomialFilter"]
__version__ = "0.1.0"

"""AutoGCN and the four learned polynomial filters that followed it, as PyG-style modules that
depend on torch only.

* :class:`AutoGCNConv` — AutoGCN's convolution (learned low-, middle- and high-pass filters).
* :class:`GPRGNNProp`, :class:`BernNetProp`, :class:`ChebNetIIProp`, :class:`JacobiConvProp`
  — the propagation of GPR-GNN, BernNet, ChebNetII and JacobiConv.
* :class:`OptBasisProp` — OptBasisGNN's basis, orthonormalised on each signal (so its
  ``frequency_response`` needs the signal and its graph).

Each is called as ``module(x, edge_index, edge_weight=None)`` (or with a ``torch.sparse`` /
``SparseTensor`` ``adj_t``, :mod:`autogcn.inputs`; learned edge weights get their gradient) and
has ``frequency_response(lam)``. :class:`Graph` is the package's graph type, which the modules
also take. PyG's explainers work on every module (:mod:`autogcn.explain`).
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

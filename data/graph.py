"""The benchmark's graph type is the installable package's :class:`autogcn.graph.Graph`
(one implementation, shared by the layer package and the benchmark); re-exported here so that
the data modules keep importing it from the data layer."""

from autogcn.graph import Graph, resolve_device

__all__ = ["Graph", "resolve_device"]

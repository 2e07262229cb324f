"""The nets: one registry of models by the release's names (``nets.registry``), the shared layer
stack (``nets.gnn_net``) and the baselines (``nets.baselines``). Importing the package registers
every model."""

from nets import baselines  # noqa: F401  (registers the baselines)

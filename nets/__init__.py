"""The nets: one registry of models by the release's names (``nets.registry``), the shared layer
stack (``nets.gnn_net``), the baselines (``nets.baselines``) and AutoGCN's successors
(``nets.successors``). Importing the package registers every model."""

# importing a module registers its models: the baselines, then GPRGNN, BERNNET, CHEBNETII,
# JACOBICONV and OPTBASIS
from nets import baselines, successors  # noqa: F401

"""One entry point from a dataset name and the config's ``data`` section to loaded data."""

from __future__ import annotations

import os
from typing import Any

from data.common import DataError, GraphDataset

DEFAULT_DATA_ROOT = os.environ.get("AUTOGCN_DATA", "datasets")


def default_data_dir(dataset: str) -> str:
    """Where a dataset is looked for when ``--data_dir`` is not given."""
    if dataset.startswith("SBM_"):
        return DEFAULT_DATA_ROOT  # generated there on first use
    return os.path.join(DEFAULT_DATA_ROOT, dataset)


def load_graph_dataset(dataset: str, data_cfg: dict[str, Any]) -> GraphDataset:
    """Load a batched-graph dataset (SBM_*, ZINC, MNIST, CIFAR10) as the config says."""
    data_dir = data_cfg.get("data_dir") or default_data_dir(dataset)
    source = data_cfg.get("data_source")
    max_graphs = data_cfg.get("max_graphs")
    if dataset in ("SBM_CLUSTER", "SBM_PATTERN"):
        from data.sbm import load_sbm_dataset

        return load_sbm_dataset(dataset, data_dir, max_graphs=max_graphs,
                                source=source or "generate", variant=data_cfg.get("sbm_variant"))
    if dataset == "ZINC":
        from data.molecules import load_zinc

        return load_zinc(data_dir, max_graphs=max_graphs, source=source or "raw")
    if dataset in ("MNIST", "CIFAR10"):
        from data.superpixels import load_superpixels

        return load_superpixels(dataset, data_dir, cache_dir=data_cfg.get("cache_dir"),
                                max_graphs=max_graphs, source=source or "raw",
                                workers=data_cfg.get("workers"))
    raise DataError(f"unknown graph dataset {dataset!r}")

"""Experiment configuration: the authors' JSON schema, validated on load, defaults in one place.

A config has the sections of the benchmarking-gnns release::

    {"gpu": {"use", "id"}, "model", "dataset", "out_dir",
     "params": {...training...}, "net_params": {...architecture...}}

plus an optional ``"data"`` section of this project (where the data lives). Keys starting with
``_`` (e.g. ``"_note"``) are comments. Every other unknown key is an error that names the key, so a
typo never silently falls back to a default. Command-line overrides use the same schema.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from typing import Any


class ConfigError(ValueError):
    """A configuration problem, with a message naming the offending key or value."""


# section -> key -> (accepted types, default). The single place where defaults live.
SCHEMA: dict[str, dict[str, tuple[tuple[type, ...], Any]]] = {
    "gpu": {
        "use": ((bool,), True),
        "id": ((int,), 0),
    },
    "params": {
        "seed": ((int,), 41),
        "epochs": ((int,), 1000),
        "batch_size": ((int,), 128),
        "init_lr": ((float,), 1e-3),
        "lr_reduce_factor": ((float,), 0.5),
        "lr_schedule_patience": ((int,), 5),
        "min_lr": ((float,), 1e-5),
        "weight_decay": ((float,), 0.0),
        "print_epoch_interval": ((int,), 5),
        "max_time": ((float,), 48.0),  # hours
        "runs": ((int,), 1),
        # "plateau" (ReduceLROnPlateau on the validation loss) or "none"; None: the task's
        # default (the release used none for single-graph node classification)
        "scheduler": ((str,), None),
    },
    "net_params": {
        "L": ((int,), 4),
        "hidden_dim": ((int,), 90),
        "out_dim": ((int,), None),  # None: same as hidden_dim
        "residual": ((bool,), True),
        "readout": ((str,), "mean"),
        "in_feat_dropout": ((float,), 0.0),
        "dropout": ((float,), 0.0),
        "graph_norm": ((bool,), True),
        "batch_norm": ((bool,), True),
        "self_loop": ((bool,), False),
        "builtin": ((bool,), True),  # release flag for citation graphs; no effect here
        # AutoGCN
        "K": ((int,), 16),
        "num_filters": ((int,), 1),
        "opt": ((str,), "over"),
        "gate": ((bool, str), "release"),
        "filters": ((list, str), ["low", "mid", "high"]),
        "single_a_init": ((float,), 0.0),
        # baselines
        "n_heads": ((int,), 8),
        "kernel": ((int,), 3),
        "pseudo_dim_MoNet": ((int,), 2),
        "n_mlp_GIN": ((int,), 2),
        "learn_eps_GIN": ((bool,), True),
        "neighbor_aggr_GIN": ((str,), "sum"),
        "sage_aggregator": ((str,), "mean"),
        "gated": ((bool,), False),
        "n_iter": ((int,), 10),
        "prop_penalty": ((float,), 0.05),
        # APGCN: "release" propagates the layer input at every step (the authors' code),
        # "adaptive" the previous step (the AP-GCN paper); see layers/ap_layer.py
        "apgcn_mode": ((str,), "release"),
        # APGCN linear layers before the propagation on batched graphs; None: L - 1 (the
        # release's SBM/superpixel nets; its ZINC net used L, set in that config)
        "apgcn_linear_layers": ((int,), None),
        "sgc_k": ((int,), 2),
        "edge_feat": ((bool,), False),
        # accepted so the release's config files and flags run unchanged; not used here
        "data_mode": ((str,), None),
        "num_pool": ((int,), None),
        "gnn_per_block": ((int,), None),
        "embedding_dim": ((int,), None),
        "pool_ratio": ((float,), None),
        "linkpred": ((bool,), None),
        "cat": ((bool,), None),
    },
    "data": {
        "data_dir": ((str,), None),  # None: the task's default folder
        "data_source": ((str,), None),  # None: the task's default (generate / raw)
        "max_graphs": ((int,), None),  # use only the first N graphs of each split
        "cache_dir": ((str,), None),
        "workers": ((int,), None),
        "split": ((str,), "random"),  # single-graph node tasks: random | fixed
        "sbm_variant": ((str,), None),  # SBM_PATTERN: PATTERN_EASY
    },
}
TOP_LEVEL: dict[str, tuple[tuple[type, ...], Any]] = {
    "model": ((str,), None),
    "dataset": ((str,), None),
    "out_dir": ((str,), "out/"),
}
GATE_NAMES = ("release", "paper", "none")


def _check_type(where: str, value: Any, types: tuple[type, ...]) -> Any:
    if value is None:
        return None
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if bool not in types and isinstance(value, bool):
        raise ConfigError(f"{where}: expected {types[0].__name__}, got a boolean ({value})")
    if not isinstance(value, types):
        names = " or ".join(t.__name__ for t in types)
        raise ConfigError(f"{where}: expected {names}, got {type(value).__name__} ({value!r})")
    return value


def _normalise(cfg: dict[str, Any]) -> None:
    """Canonical forms of values with several spellings; checks their ranges."""
    net = cfg["net_params"]
    if net["out_dim"] is None:
        net["out_dim"] = net["hidden_dim"]
    gate = net["gate"]
    if isinstance(gate, bool):  # the release's flag: true = its (sequential) gate
        net["gate"] = "release" if gate else "none"
    elif gate not in GATE_NAMES:
        raise ConfigError(
            f"net_params.gate: expected true/false or one of {GATE_NAMES}, got {gate!r}"
        )
    filters = net["filters"]
    if isinstance(filters, str):
        filters = [f.strip() for f in filters.split(",") if f.strip()]
    if not filters or not set(filters) <= {"low", "mid", "high"}:
        raise ConfigError(f"net_params.filters: use names from low, mid, high; got {filters!r}")
    net["filters"] = list(filters)
    if net["opt"] not in ("over", "single", "fix"):
        raise ConfigError(f"net_params.opt: expected over, single or fix, got {net['opt']!r}")
    if net["readout"] not in ("mean", "sum", "max"):
        raise ConfigError(f"net_params.readout: expected mean, sum or max, got {net['readout']!r}")
    for key in ("L", "hidden_dim", "K", "num_filters"):
        if net[key] < 1:
            raise ConfigError(f"net_params.{key}: must be at least 1, got {net[key]}")
    params = cfg["params"]
    if params["scheduler"] not in (None, "plateau", "none"):
        raise ConfigError(
            f"params.scheduler: expected plateau or none, got {params['scheduler']!r}"
        )
    for key in ("epochs", "batch_size", "runs"):
        if params[key] < 1:
            raise ConfigError(f"params.{key}: must be at least 1, got {params[key]}")


def validate(raw: Mapping[str, Any], origin: str = "config") -> dict[str, Any]:
    """Check ``raw`` against :data:`SCHEMA`, fill defaults, return a new resolved config."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{origin}: the top level must be a JSON object")
    cfg: dict[str, Any] = {}
    known = set(SCHEMA) | set(TOP_LEVEL)
    for key in raw:
        if key not in known and not key.startswith("_"):
            raise ConfigError(f"{origin}: unknown key {key!r} (known: {', '.join(sorted(known))})")
    for key, (types, default) in TOP_LEVEL.items():
        cfg[key] = _check_type(f"{origin}: {key}", raw.get(key, default), types)
    for section, fields in SCHEMA.items():
        given = raw.get(section, {}) or {}
        if not isinstance(given, Mapping):
            raise ConfigError(f"{origin}: section {section!r} must be an object")
        for key in given:
            if key not in fields and not key.startswith("_"):
                raise ConfigError(
                    f"{origin}: unknown key {section}.{key!r} (known: {', '.join(sorted(fields))})"
                )
        cfg[section] = {
            key: _check_type(f"{origin}: {section}.{key}", copy.deepcopy(given.get(key, default)),
                             types)
            for key, (types, default) in fields.items()
        }
        notes = {k: v for k, v in given.items() if k.startswith("_")}
        cfg[section].update(notes)
    for key, value in raw.items():
        if key.startswith("_"):
            cfg[key] = value
    if not cfg["model"]:
        raise ConfigError(f"{origin}: 'model' is required")
    _normalise(cfg)
    return cfg


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate a JSON config file."""
    try:
        with open(path) as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path}: not valid JSON ({err})") from None
    return validate(raw, origin=str(path))


def parse_value(text: str, types: tuple[type, ...], where: str) -> Any:
    """Parse a command-line string for a schema field (booleans as True/False)."""
    if bool in types:
        low = text.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        if str not in types:
            raise ConfigError(f"{where}: expected True or False, got {text!r}")
    for t in types:
        if t in (int, float):
            try:
                return t(text)
            except ValueError:
                continue
        if t is list:
            return [x.strip() for x in text.split(",") if x.strip()]
        if t is str:
            return text
    raise ConfigError(f"{where}: cannot read {text!r} as {types[0].__name__}")


def apply_overrides(cfg: Mapping[str, Any], overrides: Mapping[str, str]) -> dict[str, Any]:
    """Return ``cfg`` with command-line ``--key value`` overrides applied and re-validated.

    A key is looked up in the top level, then ``params``, ``net_params`` and ``data``;
    ``gpu_id`` and ``use_gpu`` set ``gpu.id`` and ``gpu.use``.
    """
    raw = copy.deepcopy(dict(cfg))
    for key, text in overrides.items():
        if key in ("gpu_id", "use_gpu"):
            field = "id" if key == "gpu_id" else "use"
            raw["gpu"][field] = parse_value(text, SCHEMA["gpu"][field][0], f"--{key}")
            if key == "gpu_id" and "use_gpu" not in overrides:  # as the release: asks for a GPU
                raw["gpu"]["use"] = True
            continue
        if key in TOP_LEVEL:
            raw[key] = parse_value(text, TOP_LEVEL[key][0], f"--{key}")
            continue
        for section in ("params", "net_params", "data"):
            if key in SCHEMA[section]:
                raw[section][key] = parse_value(text, SCHEMA[section][key][0], f"--{key}")
                break
        else:
            raise ConfigError(f"unknown option --{key}")
    if "hidden_dim" in overrides and "out_dim" not in overrides:
        raw["net_params"]["out_dim"] = raw["net_params"]["hidden_dim"]
    return validate(raw, origin="command line")


def override_keys() -> list[str]:
    """Every ``--key`` the command line accepts as an override."""
    keys = list(TOP_LEVEL) + ["gpu_id", "use_gpu"]
    for section in ("params", "net_params", "data"):
        keys += list(SCHEMA[section])
    return keys

"""Experiment configuration: the authors' JSON schema (plus this project's ``data`` section),
validated on load. Each key's type, default, range and help are declared once, in
:data:`SCHEMA`; an unknown key is an error (``_``-keys are comments). A model's own options are
checked by its layers: the net is built on the ``meta`` device (:func:`check_applies`).
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from data.files import output_problem
from data.loaders import data_options
from data.node_datasets import EDGE_DIRECTIONS, SPLIT_MODES, SPLIT_RATIOS
from data.sbm import check_variant
from layers.autogcn_layer import FILTERS
from layers.propagation import READOUTS
from nets.gnn_net import NetIO
from nets.registry import GROUP_SETTINGS, MODELS, build_net
from train.compilation import ALIASES as COMPILE_ALIASES
from train.compilation import SETTINGS as COMPILE_SETTINGS
from train.errors import ConfigError
from train.tasks import EARLY_STOP_RULES, Task, task_for_dataset


@dataclass(frozen=True)
class Field:
    """One config key. ``default=None``: decided later (``null`` is valid for no other key).
    ``aliases`` map other spellings to ``choices`` (the authors' ``gate: true``); ``items``: a
    list's element types; ``path``: a folder (``~`` expanded). ``shared``: where a key the model
    or dataset does not use is accepted (:func:`check_applies`): ``"all"`` net-wide settings,
    ``"files"`` keys the authors' files carry for every model, ``""`` nowhere."""

    types: tuple[type, ...]
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None
    aliases: Mapping[Any, Any] = field(default_factory=dict)
    low: float | None = None
    high: float | None = None
    inclusive: tuple[bool, bool] = (True, True)
    items: tuple[type, ...] = ()
    path: bool = False
    shared: str = ""


# Seeds feed numpy's legacy generator, which takes 0 <= seed < 2**32; runs use seed, seed + 1, ...
MAX_SEED = 2**32 - 1
MAX_RUNS = 1000  # the seed list and the per-run records stay small
# Sizes beyond these only exhaust memory (a hidden_dim of 10**9 asks for petabytes); the
# published configs stay far below them.
MAX_LAYERS = 256
MAX_WIDTH = 8192


def _int(default: Any, help: str, low: int | None = None, high: int | None = None,
         shared: str = "") -> Field:
    return Field((int,), default, help, low=low, high=high, shared=shared)


def _float(default: Any, help: str, low: float | None = None, high: float | None = None,
           inclusive: tuple[bool, bool] = (True, True), shared: str = "") -> Field:
    return Field((float,), default, help, low=low, high=high, inclusive=inclusive, shared=shared)


def _path(help: str, default: Any = None) -> Field:
    return Field((str,), default, help, path=True)


def _bool(default: Any, help: str, shared: str = "") -> Field:
    return Field((bool,), default, help, shared=shared)


def _choice(default: Any, help: str, choices: tuple | None = None,
            shared: str = "") -> Field:
    return Field((str,), default, help, choices=choices, shared=shared)


_UNUSED = "accepted so the authors' config files run unchanged; no effect here"
_DROPOUT = {"low": 0.0, "high": 1.0, "inclusive": (True, False)}

_POLY = "GPRGNN/BERNNET/CHEBNETII/JACOBICONV/OPTBASIS"  # a help's scope: check_applies
_NODE = "single-graph node tasks"
# section -> key -> Field. The single place where options, defaults and checks live.
SCHEMA: dict[str, dict[str, Field]] = {
    "gpu": {
        "use": _bool(True, "train on a GPU when one is available (else the CPU, logged)"),
        "id": _int(0, "GPU index (a config's missing GPU falls back to 0, logged)", 0, 1023),
    },
    "params": {
        "seed": _int(41, "first run seed with --seed (else the release's seeds)", 0, MAX_SEED),
        "epochs": _int(1000, "maximum epochs per run", 1),
        "batch_size": _int(128, "graphs per mini-batch", 1),
        "init_lr": _float(1e-3, "initial Adam learning rate", 0.0, inclusive=(False, True)),
        "lr_reduce_factor": _float(0.5, "ReduceLROnPlateau factor", 0.0, 1.0, (False, False)),
        "lr_schedule_patience": _int(5, "epochs without improvement before the lr is reduced", 0),
        "min_lr": _float(1e-5, "stop once the learning rate falls below this", 0.0),
        "weight_decay": _float(0.0, "Adam weight decay", 0.0),
        "print_epoch_interval": _int(5, "log a line every N epochs", 1),
        "max_time": _float(48.0, "stop a run after this many hours", 0.0, inclusive=(False, True)),
        "runs": _int(1, "seeds to train, one after the other", 1, MAX_RUNS),
        "scheduler": _choice(None, "lr schedule: plateau (one graph: none)", ("plateau", "none")),
        "early_stop": _choice("none", "model selection (docs/reproducing.md)", EARLY_STOP_RULES),
        "early_stop_patience": _int(200, "epochs for early_stop (the papers use 200)", 1),
        "deterministic": _bool(False, "repeatable runs, slower (docs/reproducing.md)"),
        "compile": Field((bool, str), "auto", "torch.compile the dense parts of the net "
                         "(docs/performance.md)", COMPILE_SETTINGS, COMPILE_ALIASES),
    },
    "net_params": {
        "L": _int(4, "graph layers", 1, MAX_LAYERS, shared="all"),
        "hidden_dim": _int(90, "hidden width (per head for GAT)", 1, MAX_WIDTH, shared="all"),
        "out_dim": _int(None, "last graph layer's width (default: hidden_dim)", 1, MAX_WIDTH,
                        shared="all"),
        "residual": _bool(True, "residual connections (where widths match)", shared="all"),
        "readout": Field((str,), "mean", "graph readout", READOUTS, shared="all"),
        "in_feat_dropout": _float(0.0, "dropout on the embedded input", **_DROPOUT, shared="all"),
        "dropout": _float(0.0, "dropout in the layers", **_DROPOUT, shared="all"),
        "graph_norm": _bool(True, "graph-size normalisation (x / sqrt(N_g))", shared="all"),
        "batch_norm": _bool(True, "batch normalisation in every layer", shared="all"),
        "self_loop": _bool(False, "add self-loops (GCN, GAT; SGC on SBM and node tasks)",
                           shared="files"),
        # AutoGCN (the layer's names: K grid_size, num_filters num_banks, opt mode)
        "K": _int(16, "AutoGCN: over-parameterisation grid size", 1, 1024, shared="files"),
        "num_filters": _int(1, "AutoGCN: parallel filter banks, summed", 1, 64, shared="files"),
        "opt": _choice("over", "AutoGCN: filter parameterisation", shared="files"),
        "gate": Field((bool, str), "sequential", "AutoGCN: complementary gate (true = "
                      "sequential, false = none)", shared="files"),
        "filters": Field((list, str), list(FILTERS), "AutoGCN: filters, e.g. low,high",
                         items=(str,)),
        "single_a_init": _float(0.0, "AutoGCN mode single: initial a"),
        # baselines
        "n_heads": _int(8, "GAT attention heads", 1, 64),
        "kernel": _int(3, "MoNet Gaussian kernels", 1, 64),
        "pseudo_dim_MoNet": _int(2, "MoNet pseudo-coordinate width", 1, 64),
        "n_mlp_GIN": _int(2, "GIN: linear layers per update MLP", 1, 64),
        "learn_eps_GIN": _bool(True, "GIN: learn epsilon"),
        "neighbor_aggr_GIN": _choice("sum", "GIN neighbour aggregation"),
        "gin_release_forward": _bool(False, "GIN: the release's forward (docs/deviations.md)"),
        "gin_output_layer": _bool(None, "GIN on single graphs: run the output layer (default: "
                                        "not gin_release_forward)"),
        "sage_aggregator": _choice("mean", "GraphSAGE aggregator"),
        "gated": _bool(False, "MLP: the release's gated variant"),
        "n_iter": _int(10, "APGCN: maximum propagation steps", 1, 1000),
        "prop_penalty": _float(0.05, "APGCN: propagation penalty in the loss", 0.0),
        "apgcn_mode": _choice("one_hop", "APGCN: propagate the input (one_hop) or last step"),
        "apgcn_linear_layers": _int(None, "APGCN: linear layers before the propagation on "
                                          "batched graphs (default L - 1)", 0, MAX_LAYERS),
        "sgc_k": _int(2, "SGC: propagation steps", 1, 1000),
        "gcn_source_degree": _choice("in", "GCN: scale by the source's in- or out-degree"),
        # AutoGCN's successors (docs/reproducing.md)
        "poly_order": _int(10, f"{_POLY}: polynomial order K", 1, 100),
        "dprate": _float(0.5, f"{_POLY}: dropout on the filter's input", **_DROPOUT),
        "prop_lr": _float(None, f"{_POLY}: filter coefficients' learning rate (default: "
                                "init_lr)", 0.0, inclusive=(False, True)),
        "prop_wd": _float(0.0, f"{_POLY}: filter coefficients' weight decay", 0.0),
        "gpr_alpha": _float(0.1, "GPRGNN: PPR initialisation alpha", 0.0, 1.0),
        "jacobi_a": _float(1.0, "JACOBICONV: Jacobi parameter a", -1.0),
        "jacobi_b": _float(1.0, "JACOBICONV: Jacobi parameter b", -1.0, inclusive=(False, True)),
        "jacobi_alpha": _float(1.0, "JACOBICONV: PCD scale alpha", 0.0, inclusive=(False, True)),
        "jacobi_w_lr": _float(None, "JACOBICONV: per-channel basis weights' learning rate "
                                    "(default: prop_lr)", 0.0, inclusive=(False, True)),
        "jacobi_w_wd": _float(0.0, "JACOBICONV: per-channel basis weights' weight decay", 0.0),
        **{key: Field((kind,), default, _UNUSED) for key, kind, default in (
            ("builtin", bool, True), ("edge_feat", bool, False), ("data_mode", str, None),
            ("num_pool", int, None), ("gnn_per_block", int, None), ("embedding_dim", int, None),
            ("pool_ratio", float, None), ("linkpred", bool, None), ("cat", bool, None))},
    },
    "data": {
        "data_dir": _path("data folder (default: datasets/ or datasets/<DATASET>)"),
        "data_source": _choice(None, "where the data comes from (docs/data.md)"),
        "max_graphs": _int(None, "use only the first N graphs of each split", 1),
        "cache_dir": _path("superpixel graph cache (default ~/.cache/autogcn)"),
        "workers": _int(None, "processes building superpixel graphs (default: all)", 1, 1024),
        "loader_workers": _int(None, "data-loader processes (default: 0; on a GPU up to 4)", 0, 64),
        "split": _choice("random", f"{_NODE}: a random split per run, a class-balanced one, or "
                                   "the published fixed splits", SPLIT_MODES),
        "split_ratio": Field((list, str), None, f"{_NODE}: train,val,test fractions, e.g. "
                             "0.6,0.2,0.2", items=(int, float, str)),
        "edge_direction": _choice("symmetrised", f"{_NODE}: the symmetrised graph, or the "
                                                 "edge list as_given", EDGE_DIRECTIONS),
        "normalize_features": _bool(False, f"{_NODE}: divide each node's features by their "
                                           "sum (PyG's NormalizeFeatures)"),
        "sbm_variant": _choice(None, "SBM_PATTERN only: generator variant (data/sbm.py)"),
    },
}
TOP_LEVEL: dict[str, Field] = {
    "model": Field((str,), None, "model name, e.g. AUTOGCN, GCN"),
    "dataset": Field((str,), None, "dataset name"),
    "out_dir": _path("where run folders are written", "out/"),
}
#: Every command-line ``--option`` and the (section, key) it sets (section ``None``: top level).
OPTIONS: dict[str, tuple[str | None, str]] = {
    **{key: (None, key) for key in TOP_LEVEL}, "gpu_id": ("gpu", "id"), "use_gpu": ("gpu", "use"),
    **{key: (section, key) for section in ("params", "net_params", "data")
       for key in SCHEMA[section]}}
_OPTION = {where: option for option, where in OPTIONS.items()}


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _check(where: str, value: Any, spec: Field) -> Any:
    """``value`` checked against ``spec`` (type, choices/aliases, range); canonical form."""
    types = spec.types
    if value is None:
        if spec.default is None:
            return None
        raise ConfigError(f"{where}: expected {types[0].__name__}, got null")
    for alias, canonical in spec.aliases.items():
        # same type too: 1 == True in Python, but the number 1 is no alias of true
        if type(alias) is type(value) and alias == value:
            return canonical
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if bool not in types and isinstance(value, bool):
        raise ConfigError(f"{where}: expected {types[0].__name__}, got a boolean ({value})")
    if not isinstance(value, types):
        names = " or ".join(t.__name__ for t in types)
        raise ConfigError(f"{where}: expected {names}, got {_type_name(value)} ({value!r})")
    if isinstance(value, list):
        _check_items(where, value, spec.items)
    if spec.path:  # every path key names a folder: one that cannot be is refused now
        problem = output_problem(value, "folder", writable=False)
        if problem:
            raise ConfigError(f"{where}: {problem}")
        return os.path.expanduser(value)
    if spec.choices is not None and value not in spec.choices:
        valid = ", ".join(map(str, spec.choices))
        if spec.aliases:
            valid += " (or " + ", ".join(map(str, spec.aliases)) + ")"
        raise ConfigError(f"{where}: expected one of {valid}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where}: must be a finite number, got {value}")
    bounds = (spec.low, spec.high, spec.inclusive)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not in_range(
            value, *bounds):
        raise ConfigError(f"{where}: must be {range_text(*bounds)}, got {value}")
    return value


def _check_items(where: str, value: list, items: tuple[type, ...]) -> None:
    """Every element of a list is one of ``items`` (a boolean only where allowed)."""
    names = " or ".join(t.__name__ for t in items) or "nothing"
    for i, item in enumerate(value):
        if not isinstance(item, items) or (isinstance(item, bool) and bool not in items):
            raise ConfigError(f"{where}[{i}]: expected {names}, got {_type_name(item)} "
                              f"({item!r})")


def range_text(low: float | None, high: float | None,
               inclusive: tuple[bool, bool] = (True, True)) -> str:
    """``>= low and < high`` (integers in full: a seed bound of 4.29497e+09 says little)."""
    def num(v: float) -> str:
        return str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else f"{v:g}"

    parts = [f"{'>=' if inclusive[0] else '>'} {num(low)}"] if low is not None else []
    if high is not None:
        parts.append(f"{'<=' if inclusive[1] else '<'} {num(high)}")
    return " and ".join(parts)


def in_range(value: float, low: float | None, high: float | None,
             inclusive: tuple[bool, bool] = (True, True)) -> bool:
    return ((low is None or (value >= low if inclusive[0] else value > low))
            and (high is None or (value <= high if inclusive[1] else value < high)))


def _normalise(cfg: dict[str, Any]) -> None:
    """Canonical forms of values with several spellings, and checks across keys."""
    net = cfg["net_params"]
    if net["out_dim"] is None:
        net["out_dim"] = net["hidden_dim"]
    if isinstance(net["filters"], str):  # checked by the layer
        net["filters"] = [f.strip() for f in net["filters"].split(",") if f.strip()]
    if cfg["data"]["split_ratio"] is not None:
        cfg["data"]["split_ratio"] = parse_split_ratio(cfg["data"]["split_ratio"])
    params = cfg["params"]
    if params["seed"] + params["runs"] - 1 > MAX_SEED:
        raise ConfigError(f"params.seed: runs use seeds {params['seed']} to "
                          f"{params['seed'] + params['runs'] - 1}, but seeds must stay below "
                          f"2**32: use a seed of at most {MAX_SEED - params['runs'] + 1}")
    try:
        if _task(cfg["dataset"]) is not None:  # (the runner names an unknown dataset)
            check_variant(cfg["dataset"], cfg["data"]["sbm_variant"])
    except ValueError as err:
        raise ConfigError(f"data.sbm_variant: {err}") from None


def _task(dataset: str | None) -> Task | None:
    try:
        return task_for_dataset(dataset) if dataset else None
    except ValueError:
        return None


class _Reads(dict):
    """``net_params`` that remember which keys the model's code read."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)


def _applicable(cfg: dict[str, Any], origin: str) -> dict[str, set[str]] | None:
    """Build the net on the ``meta`` device (its layers check their options); the ``net_params``
    keys it reads and the ``data`` keys the loader takes (``None``: an unknown dataset, which
    the runner names)."""
    model, net = cfg["model"], cfg["net_params"]
    if model not in MODELS:
        raise ConfigError(f"{origin}: unknown model {model!r}; known: {', '.join(sorted(MODELS))}")
    task = _task(cfg["dataset"])
    io = NetIO(task.level, task.input_kind, 2, 2) if task else NetIO("graph", "embedding", 2, 2)
    reads = _Reads(net)
    try:
        with torch.device("meta"):
            built = build_net(model, io, reads)
    except ValueError as err:
        # The layer's message quotes the bad value: name the key that holds it, preferring one
        # set away from its default.
        given = [k for k, v in net.items() if isinstance(v, (str, list)) and repr(v) in str(err)]
        given.sort(key=lambda k: net[k] == SCHEMA["net_params"][k].default)
        where = f"net_params.{given[0]}" if given else "net_params"
        raise ConfigError(f"{origin}: {where}: {err}") from None
    groups = {name for module in built.modules()
              if callable(getattr(module, "coefficient_groups", None))
              for name in module.coefficient_groups()}
    if task is None:
        return None
    if model in task.self_loop_models:  # the runner reads it for these models only
        reads.read.add("self_loop")
    used = reads.read | {key for name in groups for key in GROUP_SETTINGS[name]}
    return {"net_params": used, "data": data_options(cfg["dataset"])}


def _source(option: str, origin: str, command_line: Iterable[str]) -> str:
    """Where a value came from, for its error: the command line, or ``origin`` (a file)."""
    return "command line" if option in set(command_line) else origin


def without_unused(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` without the keys its model and dataset do not use: what can change its result."""
    applies = _applicable(cfg, "config")
    if applies is None:
        return cfg
    out = copy.deepcopy(cfg)
    for section, used in applies.items():
        out[section] = {k: v for k, v in out[section].items() if k in used}
    if out["data"].get("split_ratio", []) is None and cfg["dataset"] in SPLIT_RATIOS:
        out["data"]["split_ratio"] = list(SPLIT_RATIOS[cfg["dataset"]])  # the same split
    return out


def check_applies(cfg: dict[str, Any], origin: str, command_line: Iterable[str] = (),
                  recorded: bool = False) -> None:
    """:class:`ConfigError` for an option set on purpose (on the ``command_line``, or off its
    default in a file) that the net does not read or the loader does not take. ``Field.shared``
    and no-effect keys are never refused; nor are those of a ``recorded`` (resolved) config."""
    applies = _applicable(cfg, origin)
    if applies is None:
        return
    owner = {"net_params": cfg["model"], "data": cfg["dataset"]}
    command_line = set(command_line)
    for section, used in applies.items():
        for key, spec in SCHEMA[section].items():
            value = cfg[section][key]
            explicit = (key in command_line and spec.shared != "all") or (
                not recorded and not spec.shared and value != spec.default)
            if explicit and key not in used and spec.help != _UNUSED:
                where = f"--{key}" if key in command_line else f"{section}.{key} = {value!r}"
                # the one model option that applies on some tasks only (Task.self_loop_models)
                on = f" on {cfg['dataset']}" if key == "self_loop" else ""
                scope, _, rest = spec.help.partition(":")  # "AutoGCN: ...", "JACOBICONV: ..."
                scope = f" ({scope} only)" if rest and len(scope) < 50 else ""
                raise ConfigError(f"{_source(key, origin, command_line)}: {where} does not apply "
                                  f"to {owner[section]}{on}{scope}; leave it out")


def parse_split_ratio(ratio: str | list, where: str = "data.split_ratio") -> list[float]:
    """Train/val/test fractions from ``0.6,0.2,0.2``, ``60/20/20`` or a list of three."""
    text = ",".join(map(str, ratio)) if isinstance(ratio, list) else str(ratio)
    try:
        values = [float(x) for x in text.replace("/", ",").replace(" ", "").split(",")]
    except (TypeError, ValueError):
        values = []
    if len(values) == 3 and all(map(math.isfinite, values)) and max(values) > 1:
        values = [v / 100 for v in values]  # percentages, e.g. 60/20/20
    if (len(values) != 3 or not all(map(math.isfinite, values)) or min(values) < 0
            or abs(sum(values) - 1) > 1e-6 or values[0] == 0):
        raise ConfigError(f"{where}: three non-negative fractions summing to 1, the training "
                          f"one above 0 (e.g. 0.6,0.2,0.2 or 60/20/20), got {ratio!r}")
    return values


def _refuse_unknown(origin: str, where: str, given: Mapping[str, Any], known: set[str]) -> None:
    """A key not in ``known`` is a typo, never a silent default (``_`` comments aside)."""
    for key in given:
        if key not in known and not key.startswith("_"):
            raise ConfigError(f"{origin}: unknown key {where}{key!r} (known: "
                              f"{', '.join(sorted(known))})")


def _section(raw: Mapping[str, Any], name: str, origin: str) -> Mapping[str, Any]:
    # Only an absent section means "all defaults": [], "", 0, false or null in its place is a
    # mistake, not an empty section (the authors' files never write null).
    given = raw.get(name, {})
    if not isinstance(given, Mapping):
        raise ConfigError(f"{origin}: section {name!r} must be an object, got "
                          f"{_type_name(given)} ({given!r})")
    return given


def validate(raw: Mapping[str, Any], origin: str = "config",
             command_line: Iterable[str] = (), recorded: bool = False) -> dict[str, Any]:
    """``raw`` checked against :data:`SCHEMA`, defaults filled: a new resolved config."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{origin}: the top level must be a JSON object")
    cfg: dict[str, Any] = {}
    _refuse_unknown(origin, "", raw, set(SCHEMA) | set(TOP_LEVEL))
    for key, spec in TOP_LEVEL.items():
        cfg[key] = _check(f"{_source(key, origin, command_line)}: {key}",
                          raw.get(key, spec.default), spec)
    for section, fields in SCHEMA.items():
        given = _section(raw, section, origin)
        _refuse_unknown(origin, f"{section}.", given, set(fields))
        cfg[section] = {
            key: _check(f"{_source(_OPTION[section, key], origin, command_line)}: {section}.{key}",
                        copy.deepcopy(given.get(key, spec.default)), spec)
            for key, spec in fields.items()
        }
        cfg[section].update({k: v for k, v in given.items() if k.startswith("_")})
    cfg.update({key: value for key, value in raw.items() if key.startswith("_")})
    if not cfg["model"]:
        raise ConfigError(f"{origin}: 'model' is required")
    _normalise(cfg)
    check_applies(cfg, origin, command_line, recorded)
    return cfg


class _DuplicateKey(ValueError):
    """A key given twice in one JSON object (``args[0]``)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook``: a repeated key is refused (``json`` keeps the last)."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate a JSON config file (:func:`read_config`)."""
    return validate(read_config(path), origin=os.path.expanduser(os.fspath(path)))


def read_config(path: str | os.PathLike) -> dict[str, Any]:
    """A JSON config file as written, not yet validated (``~`` expanded, a UTF-8 BOM allowed)."""
    if not os.fspath(path).strip():
        raise ConfigError("--config: empty path; give a JSON config file")
    path = os.path.expanduser(os.fspath(path))
    if os.path.isdir(path):
        raise ConfigError(f"config {path} is a directory, not a JSON file")
    try:
        with open(path, encoding="utf-8-sig") as f:
            raw = json.load(f, object_pairs_hook=_unique_keys)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except _DuplicateKey as err:
        raise ConfigError(f"{path}: key {err.args[0]!r} is given twice in one object; keep "
                          "one (JSON would silently use the last)") from None
    except (ValueError, RecursionError) as err:  # also a 5000-digit number, deep nesting
        raise ConfigError(f"{path}: not valid JSON ({err})") from None
    except OSError as err:
        raise ConfigError(f"cannot read config {path}: {err.strerror or err}") from None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path}: the top level must be a JSON object")
    return raw


_BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def parse_value(text: str, spec: Field, where: str) -> Any:
    """Parse a command-line string for a schema field (booleans as True/False)."""
    types = spec.types
    if bool in types and text.lower() in _BOOLEANS:
        return _BOOLEANS[text.lower()]
    if bool in types and str not in types:
        raise ConfigError(f"{where}: expected True or False, got {text!r}")
    if spec.default is None and text.lower() in ("none", "null"):
        return None
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


def field_for(option: str) -> tuple[str | None, str, Field]:
    """The section, key and :class:`Field` behind a command-line ``--option``."""
    if option not in OPTIONS:
        raise ConfigError(f"unknown option --{option}")
    section, key = OPTIONS[option]
    return section, key, (SCHEMA[section] if section else TOP_LEVEL)[key]


def apply_overrides(cfg: Mapping[str, Any], overrides: Mapping[str, str],
                    origin: str = "config", recorded: bool = False) -> dict[str, Any]:
    """``cfg`` (as written, or resolved) with command-line overrides, validated once."""
    raw = copy.deepcopy(dict(cfg))

    def section_of(name: str) -> dict[str, Any]:
        _section(raw, name, origin)
        return raw.setdefault(name, {})

    for option, text in overrides.items():
        section, key, spec = field_for(option)
        value = parse_value(text, spec, f"--{option}")
        if section is None:
            raw[key] = value
        else:
            section_of(section)[key] = value
    if "gpu_id" in overrides and "use_gpu" not in overrides:  # as the release: asks for a GPU
        section_of("gpu")["use"] = True
    if "hidden_dim" in overrides and "out_dim" not in overrides:
        section_of("net_params")["out_dim"] = section_of("net_params")["hidden_dim"]
    return validate(raw, origin=origin, command_line=overrides, recorded=recorded)


def option_help(key: str) -> str:
    """``--help`` text of an override: the schema's help, choices or range, and default."""
    spec = field_for(key)[2]
    text = spec.help
    if spec.choices is not None:
        text += f" {{{', '.join(map(str, spec.choices))}}}"
    elif spec.low is not None or spec.high is not None:
        text += f" ({range_text(spec.low, spec.high, spec.inclusive)})"
    if spec.path:
        text += " (~ is expanded)"
    if spec.default is not None:
        default = ",".join(spec.default) if isinstance(spec.default, list) else spec.default
        text += f" [default {default}]"
    return text

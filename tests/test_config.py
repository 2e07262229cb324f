"""Config loading: the authors' schema, defaults, overrides and clear errors."""

import glob
import json

import pytest

from train.config import ConfigError, apply_overrides, load_config, validate

RELEASE_STYLE = {
    "gpu": {"use": True, "id": 0},
    "model": "AUTOGCN",
    "dataset": "SBM_CLUSTER",
    "out_dir": "out/SBMs_node_classification/",
    "params": {"seed": 41, "epochs": 1000, "batch_size": 128, "init_lr": 0.001,
               "lr_reduce_factor": 0.5, "lr_schedule_patience": 5, "min_lr": 1e-5,
               "weight_decay": 0.0, "print_epoch_interval": 5, "max_time": 48},
    "net_params": {"L": 8, "K": 16, "num_filters": 1, "opt": "over", "hidden_dim": 90,
                   "out_dim": 90, "residual": True, "gate": True, "readout": "mean",
                   "in_feat_dropout": 0.0, "dropout": 0.0, "graph_norm": True,
                   "batch_norm": True, "self_loop": False},
}


def test_every_shipped_config_loads():
    paths = sorted(glob.glob("configs/*.json"))
    assert paths, "no configs found"
    for path in paths:
        cfg = load_config(path)
        assert cfg["model"] and cfg["dataset"]


def test_release_schema_with_defaults_filled():
    cfg = validate(RELEASE_STYLE)
    assert cfg["params"]["max_time"] == 48.0 and isinstance(cfg["params"]["max_time"], float)
    assert cfg["net_params"]["gate"] == "sequential"  # the release's boolean flag, true
    assert cfg["params"]["runs"] == 1 and cfg["net_params"]["filters"] == ["low", "mid", "high"]


def test_unknown_key_names_it():
    bad = json.loads(json.dumps(RELEASE_STYLE))
    bad["net_params"]["hiden_dim"] = 3
    with pytest.raises(ConfigError, match="hiden_dim"):
        validate(bad)
    bad = dict(RELEASE_STYLE, optimiser="adam")
    with pytest.raises(ConfigError, match="optimiser"):
        validate(bad)


def test_wrong_type_names_key_and_type():
    bad = json.loads(json.dumps(RELEASE_STYLE))
    bad["params"]["epochs"] = "many"
    with pytest.raises(ConfigError, match=r"params\.epochs.*int"):
        validate(bad)
    bad = json.loads(json.dumps(RELEASE_STYLE))
    bad["net_params"]["residual"] = 1
    with pytest.raises(ConfigError, match="residual"):
        validate(bad)


def test_comments_are_ignored():
    cfg = validate(dict(RELEASE_STYLE, _note="hello"))
    assert cfg["_note"] == "hello"


def test_overrides_parse_types_and_booleans():
    cfg = validate(RELEASE_STYLE)
    out = apply_overrides(cfg, {"L": "4", "residual": "False", "init_lr": "0.01", "gate": "paper",
                                "filters": "low,high", "gpu_id": "1", "max_graphs": "10"})
    assert out["net_params"]["L"] == 4 and out["net_params"]["residual"] is False
    assert out["params"]["init_lr"] == 0.01 and out["net_params"]["gate"] == "parallel"
    assert out["net_params"]["filters"] == ["low", "high"]
    assert out["gpu"] == {"use": True, "id": 1} and out["data"]["max_graphs"] == 10
    assert cfg["net_params"]["L"] == 8  # the original is untouched
    assert apply_overrides(cfg, {"gate": "False"})["net_params"]["gate"] == "none"
    assert apply_overrides(cfg, {"hidden_dim": "64"})["net_params"]["out_dim"] == 64


@pytest.mark.parametrize("key,value,match", [
    ("residual", "maybe", "True or False"),
    ("L", "four", "--L"),
    ("opt", "double", "opt"),
    ("gate", "sometimes", "gate"),
    ("bogus", "1", "unknown option --bogus"),
])
def test_bad_overrides(key, value, match):
    with pytest.raises(ConfigError, match=match):
        apply_overrides(validate(RELEASE_STYLE), {key: value})


def test_missing_or_broken_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(broken)


@pytest.mark.parametrize("section,key,value,match", [
    ("params", "init_lr", -0.001, "init_lr: must be > 0"),
    ("params", "init_lr", 0, "init_lr: must be > 0"),
    ("params", "epochs", None, "epochs: expected int, got null"),
    ("params", "epochs", 0, "epochs: must be >= 1"),
    ("params", "print_epoch_interval", 0, "print_epoch_interval: must be >= 1"),
    ("params", "seed", -1, "seed: must be >= 0"),
    ("params", "lr_reduce_factor", 1.0, "lr_reduce_factor: must be > 0 and < 1"),
    ("params", "max_time", -2, "max_time: must be > 0"),
    ("params", "weight_decay", float("nan"), "weight_decay: must be a finite number"),
    ("params", "scheduler", "cosine", "scheduler: expected one of plateau, none"),
    ("net_params", "dropout", 1.0, "dropout: must be >= 0 and < 1"),
    ("net_params", "readout", "median", "readout: expected one of mean, sum, max"),
    ("net_params", "opt", "double", "opt: expected one of over, single, fix"),
    ("net_params", "gate", "maybe", "gate: expected one of sequential, parallel, none"),
    ("net_params", "neighbor_aggr_GIN", "lstm", "neighbor_aggr_GIN: expected one of"),
    ("net_params", "filters", ["low", "low"], "filters: distinct names"),
    ("data", "max_graphs", 0, "max_graphs: must be >= 1"),
    ("data", "max_graphs", -1, "max_graphs: must be >= 1"),
    ("data", "split", "sideways", "split: expected one of random, fixed"),
    ("data", "loader_workers", -1, "loader_workers: must be >= 0"),
    ("gpu", "id", -1, "gpu.id: must be >= 0"),
])
def test_values_are_range_and_choice_checked(section, key, value, match):
    bad = json.loads(json.dumps(RELEASE_STYLE))
    bad.setdefault(section, {})[key] = value
    with pytest.raises(ConfigError, match=match.replace("(", r"\(")):
        validate(bad)


def test_older_spellings_are_accepted_as_aliases():
    for old, new in (("release", "sequential"), ("paper", "parallel"), (False, "none")):
        cfg = json.loads(json.dumps(RELEASE_STYLE))
        cfg["net_params"]["gate"] = old
        assert validate(cfg)["net_params"]["gate"] == new
    cfg = json.loads(json.dumps(RELEASE_STYLE))
    cfg["net_params"]["apgcn_mode"] = "release"
    assert validate(cfg)["net_params"]["apgcn_mode"] == "one_hop"


def test_a_directory_as_config_is_named(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)


def test_help_text_comes_from_the_schema():
    from train.config import option_help

    assert "{sequential, parallel, none}" in option_help("gate")
    assert "(>= 1)" in option_help("epochs") and "[default 1000]" in option_help("epochs")

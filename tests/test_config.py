"""Config loading: the authors' schema, defaults, overrides and clear errors."""

import glob
import json
import re
from pathlib import Path

import pytest

from train.config import ConfigError, apply_overrides, load_config, validate

CONFIGS = Path(__file__).resolve().parent.parent / "configs"

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
    assert cfg["net_params"]["gate"] is True  # the release's boolean flag: the layer reads it
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
    assert out["params"]["init_lr"] == 0.01 and out["net_params"]["gate"] == "paper"
    assert out["net_params"]["filters"] == ["low", "high"]
    assert out["gpu"] == {"use": True, "id": 1} and out["data"]["max_graphs"] == 10
    assert cfg["net_params"]["L"] == 8  # the original is untouched
    assert apply_overrides(cfg, {"gate": "False"})["net_params"]["gate"] is False
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
    ("net_params", "opt", "double", "net_params.opt: unknown AutoGCN mode 'double'"),
    ("net_params", "gate", "maybe", "net_params.gate: unknown AutoGCN gate 'maybe'"),
    ("net_params", "neighbor_aggr_GIN", "lstm", "neighbor_aggr_GIN = 'lstm' does not apply to "
                                                "AUTOGCN"),
    ("net_params", "filters", ["low", "low"], "net_params.filters: filters must be distinct"),
    ("data", "max_graphs", 0, "max_graphs: must be >= 1"),
    ("data", "max_graphs", -1, "max_graphs: must be >= 1"),
    ("data", "split", "sideways", "split: expected one of random, balanced, fixed"),
    ("data", "loader_workers", -1, "loader_workers: must be >= 0"),
    ("gpu", "id", -1, "gpu.id: must be >= 0"),
])
def test_values_are_range_and_choice_checked(section, key, value, match):
    bad = json.loads(json.dumps(RELEASE_STYLE))
    bad.setdefault(section, {})[key] = value
    with pytest.raises(ConfigError, match=match.replace("(", r"\(")):
        validate(bad)


def test_older_spellings_are_accepted_as_aliases():
    """The layers own their options and their other spellings; the config passes them on."""
    from layers.ap_layer import AdaptivePropagation
    from layers.autogcn_layer import AutoGCNLayer
    from nets.gnn_net import NetIO
    from nets.registry import build_net

    io = NetIO("node", "embedding", 3, 2)
    for old, new in (("release", "sequential"), ("paper", "parallel"), (False, "none")):
        cfg = json.loads(json.dumps(RELEASE_STYLE))
        cfg["net_params"]["gate"] = old
        net = build_net("AUTOGCN", io, validate(cfg)["net_params"])
        assert {m.gate for m in net.modules() if isinstance(m, AutoGCNLayer)} == {new}
    cfg = json.loads(json.dumps(RELEASE_STYLE))
    cfg["model"], cfg["net_params"]["apgcn_mode"] = "APGCN", "release"
    net = build_net("APGCN", io, validate(cfg)["net_params"])
    assert {m.mode for m in net.modules() if isinstance(m, AdaptivePropagation)} == {"one_hop"}


def test_a_directory_as_config_is_named(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)


def test_help_text_comes_from_the_schema():
    from train.config import option_help

    assert "{mean, sum, max}" in option_help("readout")
    assert "(>= 1)" in option_help("epochs") and "[default 1000]" in option_help("epochs")


# --------------------------------------------------------------------------- values, round two
@pytest.mark.parametrize("section,key,value,match", [
    ("params", "seed", 2**32, "seed: must be >= 0 and <= 4294967295"),
    ("params", "seed", 10**30, "seed: must be"),
    ("params", "runs", 10**9, "runs: must be >= 1 and <= 1000"),
    ("net_params", "filters", [["low"]], "filters[0]: expected str, got list"),
    ("net_params", "filters", ["low", 1], "filters[1]: expected str, got int"),
    ("net_params", "filters", [{}], "filters[0]: expected str, got dict"),
    ("net_params", "filters", ["low", None], "filters[1]: expected str, got null"),
    ("data", "split_ratio", [[0.5], 0.25, 0.25], "split_ratio[0]: expected"),
    ("data", "split_ratio", [True, 0.5, 0.5], "split_ratio[0]: expected"),
    ("data", "split_ratio", [0.5, {"a": 1}, 0.5], "split_ratio[1]: expected"),
    ("net_params", "hidden_dim", 10**9, "hidden_dim: must be >= 1 and <= 8192"),
    ("net_params", "out_dim", 10**6, "out_dim: must be"),
    ("net_params", "L", 10**6, "L: must be >= 1 and <= 256"),
    ("net_params", "K", 10**8, "K: must be"),
    ("net_params", "n_heads", 10**6, "n_heads: must be"),
    ("net_params", "sgc_k", 10**9, "sgc_k: must be"),
    ("net_params", "n_iter", 10**9, "n_iter: must be"),
    ("data", "workers", 10**6, "workers: must be"),
    ("data", "loader_workers", 10**6, "loader_workers: must be"),
    ("gpu", "id", 10**30, "gpu.id: must be"),
    ("data", "data_dir", "", "data.data_dir: must not be empty"),
    ("data", "cache_dir", "  ", "data.cache_dir: must not be empty"),
    ("data", "data_dir", "a" * 300, "data.data_dir: the name aaaa"),
    ("data", "data_dir", "x\0y", "NUL"),
])
def test_counts_sizes_nested_types_and_paths(section, key, value, match):
    bad = json.loads(json.dumps(RELEASE_STYLE))
    bad.setdefault(section, {})[key] = value
    with pytest.raises(ConfigError, match=re.escape(match)):
        validate(bad)


@pytest.mark.parametrize("value,match", [
    ("", "out_dir: must not be empty"),
    ("b" * 300, "out_dir: the name bbbb"),
    ("/".join(["c" * 200] * 25), "out_dir: the path is too long"),
])
def test_bad_out_dir(value, match):
    with pytest.raises(ConfigError, match=re.escape(match)):
        validate(dict(RELEASE_STYLE, out_dir=value))


def test_seed_plus_runs_stays_below_2_to_the_32():
    cfg = json.loads(json.dumps(RELEASE_STYLE))
    cfg["params"].update(seed=2**32 - 1, runs=1)
    assert validate(cfg)["params"]["seed"] == 2**32 - 1
    cfg["params"]["runs"] = 2
    with pytest.raises(ConfigError, match=r"seeds 4294967295 to 4294967296.*at most 4294967294"):
        validate(cfg)


@pytest.mark.parametrize("dataset,variant", [
    ("SBM_CLUSTER", "q20-size20"), ("SBM_CLUSTER", "early"), ("SBM_CLUSTER", "q35-size5to34"),
    ("ZINC", "q20-one-pattern"),
])
def test_sbm_variant_only_for_pattern(dataset, variant):
    cfg = dict(RELEASE_STYLE, dataset=dataset, data={"sbm_variant": variant})
    with pytest.raises(ConfigError, match=f"sbm_variant: .* {dataset} has none"):
        validate(cfg)
    cfg["dataset"] = "SBM_PATTERN"
    assert validate(cfg)["data"]["sbm_variant"] == variant  # the generator reads the alias


def test_tilde_is_expanded_in_every_path(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = dict(RELEASE_STYLE, dataset="MNIST", out_dir="~/runs",
               data={"data_dir": "~/d", "cache_dir": "~/c"})
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    out = load_config("~/cfg.json")
    assert out["out_dir"] == str(tmp_path / "runs")
    assert out["data"]["data_dir"] == str(tmp_path / "d")
    assert out["data"]["cache_dir"] == str(tmp_path / "c")
    over = apply_overrides(out, {"out_dir": "~/other", "data_dir": "~/e"})
    assert over["out_dir"] == str(tmp_path / "other") and over["data"]["data_dir"] == str(
        tmp_path / "e")


def test_every_path_and_count_key_is_declared_so():
    """New keys of these kinds get the same treatment: paths end in _dir, counts are bounded."""
    from train.config import SCHEMA, TOP_LEVEL

    fields = {**TOP_LEVEL, **{k: f for sec in SCHEMA.values() for k, f in sec.items()}}
    for key, spec in fields.items():
        if key.endswith("_dir"):
            assert spec.path, key
        if list in spec.types:
            assert spec.items, key


# --------------------------------------------------------------------------- through a main script
def _run(args: list[str]) -> int:
    import train.runner as runner
    from train.tasks import SBM

    try:
        return runner.main(SBM, args)
    except SystemExit as exit_:
        return int(exit_.code)


@pytest.mark.parametrize("args,names", [
    (["--seed", str(2**32)], "seed"),
    (["--seed", str(2**32 - 1), "--runs", "2"], "params.seed: runs use seeds"),
    (["--runs", "1000000000"], "runs: must be >= 1 and <= 1000"),
    (["--dataset", "SBM_CLUSTER", "--sbm_variant", "q20-size20"], "sbm_variant"),
    (["--out_dir", ""], "out_dir: must not be empty"),
    (["--out_dir", "d" * 300], "out_dir: the name"),
    (["--data_dir", ""], "data_dir: must not be empty"),
    (["--hidden_dim", "1000000000"], "hidden_dim"),
    (["--L", "1000000"], "L: must be"),
    # the variant as the user typed it, not its canonical name
    (["--dataset", "SBM_CLUSTER", "--sbm_variant", "final"],
     "data.sbm_variant: 'final' is a variant of SBM_PATTERN's generator; SBM_CLUSTER has none"),
    (["--dataset", "SBM_CLUSTER", "--sbm_variant", "PATTERN_EASY"], "'PATTERN_EASY'"),
])
def test_bad_values_through_a_main_script(args, names, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # an out_dir of "" would write here
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    code = _run(["--config", str(CONFIGS / "SBMs_node_clustering_AUTOGCN_PATTERN.json"),
                 "--out_dir", "out", "--use_gpu", "False", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert names in err[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text,names", [
    ('{"model": "AUTOGCN", "params": {"seed": ' + "9" * 5000 + "}}", "not valid JSON"),
    ("[" * 100000 + "]" * 100000, "not valid JSON"),  # nested deeper than json can read
    ('{"model": "AUTOGCN", "net_params": {"L": ' + "[" * 5000 + "]" * 5000 + "}}",
     "not valid JSON"),
    ('{"model": "AUTOGCN", "net_params": {"filters": [["low"]]}}', "filters[0]"),
    (None, "error: --config: empty path"),  # an empty --config, not the defaults
    # a section is an object or absent: none of these is an empty section
    ('{"model": "AUTOGCN", "gpu": []}', "section 'gpu' must be an object, got list ([])"),
    ('{"model": "AUTOGCN", "gpu": ""}', "section 'gpu' must be an object, got str ('')"),
    ('{"model": "AUTOGCN", "data": 0}', "section 'data' must be an object, got int (0)"),
    ('{"model": "AUTOGCN", "params": false}', "section 'params' must be an object, got bool"),
    ('{"model": "AUTOGCN", "net_params": null}', "section 'net_params' must be an object, got "
                                                 "null"),
    # JSON keeps the last of two equal keys: one of the settings would be silently lost
    ('{"model": "AUTOGCN", "params": {"epochs": 5, "epochs": 7}}', "key 'epochs' is given twice"),
    ('{"model": "GCN", "model": "AUTOGCN"}', "key 'model' is given twice"),
    ('{"model": "AUTOGCN", "data": {"_note": 1}, "data": {}}', "key 'data' is given twice"),
])
def test_odd_config_files_through_a_main_script(text, names, tmp_path, monkeypatch, capsys):
    """Config files no json reader expects are one line and exit 2; nothing is written."""
    monkeypatch.chdir(tmp_path)
    earlier = tmp_path / "out" / "earlier.txt"
    earlier.parent.mkdir()
    earlier.write_text("an earlier run")
    path = ""
    if text is not None:
        path = str(tmp_path / "c.json")
        Path(path).write_text(text)
    code = _run(["--config", path, "--out_dir", "out", "--use_gpu", "False"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert names in err[0] and "Traceback" not in err[0]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["earlier.txt"]
    assert earlier.read_text() == "an earlier run"


@pytest.mark.parametrize("option,key", [("--data_dir", "data.data_dir"),
                                        ("--cache_dir", "data.cache_dir"),
                                        ("--out_dir", "out_dir")])
@pytest.mark.parametrize("where", ["file", "below a file"])
def test_a_file_given_for_a_folder_is_refused_up_front(option, key, where, tmp_path,
                                                       monkeypatch, capsys):
    """Every path key names a folder: a file there is one line before anything is loaded (not
    "does not exist", nor a cache that is silently not written)."""
    monkeypatch.chdir(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    value = str(afile if where == "file" else afile / "sub")
    code = _run(["--config", str(CONFIGS / "SBMs_node_clustering_AUTOGCN_PATTERN.json"),
                 "--out_dir", "out", "--use_gpu", "False", option, value])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: command line: {key}: ")
    assert err[0].endswith(f"{afile} is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert afile.read_text() == "not a folder"


def test_a_utf8_byte_order_mark_is_allowed(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(RELEASE_STYLE).encode())
    assert load_config(path)["net_params"]["L"] == 8


def test_sbm_variant_check_is_shared_with_the_tools():
    """One rule for the config and scripts.diagnose: SBM_PATTERN only, aliases included."""
    from data.sbm import check_variant

    check_variant("SBM_PATTERN", "final")
    for dataset, variant in (("SBM_CLUSTER", "final"), ("SBM_CLUSTER", "q35-size5to34"),
                             ("ZINC", "early")):
        with pytest.raises(ValueError, match=f"{variant!r} .* {dataset} has none"):
            check_variant(dataset, variant)
    with pytest.raises(ValueError, match="unknown SBM variant 'hard'"):
        check_variant("SBM_PATTERN", "hard")


def test_config_path_with_tilde_through_a_main_script(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "c.json").write_text(json.dumps({"model": "AUTOGCN", "params": {"epochs": 0}}))
    assert _run(["--config", "~/c.json", "--out_dir", "~/out"]) == 2
    err = capsys.readouterr().err.strip()
    assert "epochs: must be >= 1" in err and "not found" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


# ------------------------------------------------------------------ options that do not apply
def _net_keys_read(model: str, dataset: str) -> set[str]:
    """The net_params keys ``model``'s builder reads for ``dataset``, found independently of the
    config (a dict that records its lookups) — the set an option must be in to apply."""
    import torch

    from nets.gnn_net import NetIO
    from nets.registry import build_net
    from train.tasks import task_for_dataset

    class Recording(dict):
        def __getitem__(self, key):
            seen.add(key)
            return super().__getitem__(key)

    seen: set[str] = set()
    task = task_for_dataset(dataset)
    with torch.device("meta"):
        build_net(model, NetIO(task.level, task.input_kind, 3, 2),
                  Recording(validate({"model": model, "dataset": dataset})["net_params"]))
    return seen


@pytest.mark.parametrize("config,option,value,owner", [
    ("node_classification_GPRGNN_SQUIRREL.json", "K", "5", "GPRGNN"),  # its order: poly_order
    ("node_classification_GPRGNN_SQUIRREL.json", "K", "16", "GPRGNN"),  # even the default value
    ("node_classification_AUTOGCN_SQUIRREL.json", "prop_lr", "0.01", "AUTOGCN"),
    ("node_classification_AUTOGCN_SQUIRREL.json", "jacobi_a", "0.5", "AUTOGCN"),
    ("node_classification_AUTOGCN_SQUIRREL.json", "self_loop", "True", "AUTOGCN"),
    ("SBMs_node_clustering_AUTOGCN_PATTERN.json", "split", "balanced", "SBM_PATTERN"),
    ("molecules_graph_regression_AUTOGCN_ZINC.json", "normalize_features", "True", "ZINC"),
    ("molecules_graph_regression_AUTOGCN_ZINC.json", "cache_dir", "c", "ZINC"),
    ("node_classification_AUTOGCN_SQUIRREL.json", "max_graphs", "10", "SQUIRREL"),
])
def test_an_option_the_model_or_dataset_does_not_use_is_refused(config, option, value, owner):
    cfg = load_config(CONFIGS / config)
    with pytest.raises(ConfigError, match=f"--{option} does not apply to {owner}"):
        apply_overrides(cfg, {option: value})
    if option in cfg["net_params"]:
        assert option not in _net_keys_read(cfg["model"], cfg["dataset"])


@pytest.mark.parametrize("model,option,value", [
    ("GPRGNN", "poly_order", "5"), ("JACOBICONV", "jacobi_a", "0.5"),
    ("GPRGNN", "prop_lr", "0.01"), ("JACOBICONV", "jacobi_w_lr", "0.01"),
    ("AUTOGCN", "K", "8"), ("GCN", "self_loop", "True"), ("GIN", "neighbor_aggr_GIN", "max"),
])
def test_an_option_the_model_uses_is_taken(model, option, value):
    cfg = validate({"model": model, "dataset": "SQUIRREL"})
    out = apply_overrides(cfg, {option: value, "split": "balanced", "normalize_features": "True"})
    assert str(out["net_params"][option]) == value or out["net_params"][option] == float(value)


def test_a_config_file_value_that_does_not_apply_is_refused_unless_the_authors_carry_it():
    """The authors' files carry the keys of their schema for every model (K for GCN, batch_norm
    for MLP): those load; any other key set away from its default for a model that ignores it
    is refused."""
    gcn = dict(RELEASE_STYLE, model="GCN")
    gcn["net_params"] = dict(RELEASE_STYLE["net_params"], K=4, batch_norm=False)
    assert validate(gcn)["net_params"]["K"] == 4
    with pytest.raises(ConfigError, match=r"net_params.poly_order = 3 does not apply to GCN"):
        validate(dict(gcn, net_params=dict(gcn["net_params"], poly_order=3)))
    with pytest.raises(ConfigError, match=r"data.split = 'balanced' does not apply to SBM_CLUSTER"):
        validate(dict(gcn, data={"split": "balanced"}))


def test_the_shipped_configs_run_unchanged_and_their_options_apply():
    for path in sorted(glob.glob(str(CONFIGS / "*.json"))):
        apply_overrides(load_config(path), {})  # raises for an option that does not apply


def test_a_refused_option_through_a_main_script_is_one_line_exit_2(tmp_path, capsys):
    code = _run(["--config", str(CONFIGS / "SBMs_node_clustering_AUTOGCN_PATTERN.json"),
                 "--out_dir", str(tmp_path / "out"), "--use_gpu", "False", "--split", "balanced"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["error: command line: --split does not apply to SBM_PATTERN "
                                 "(single-graph node tasks only); leave it out"]
    assert not (tmp_path / "out").exists()


def test_net_wide_settings_are_taken_by_every_model():
    """Widths, depth, normalisation and dropout are set across models (a table's row): a net
    without the part takes them as they are."""
    cfg = validate({"model": "MLP", "dataset": "SQUIRREL"})
    assert apply_overrides(cfg, {"batch_norm": "False"})["net_params"]["batch_norm"] is False

"""The successors' protocol as options: the class-balanced split (``data.split balanced``) and
the papers' early-stopping rules (``params.early_stop``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from data.node_datasets import SPLIT_MODES, balanced_split, check_split_sizes, get_split
from train.config import ConfigError, load_config, validate
from train.tasks import NODE, EarlyStopping

ROOT = Path(__file__).resolve().parent.parent


def labels_with_small_class(seed: int = 0) -> torch.Tensor:
    """Four classes of 70, 50, 9 and 40 nodes in random order, and three unlabelled nodes; class
    2 is smaller than the per-class quota round(0.6 * 169 / 4) = 25."""
    y = np.array([0] * 70 + [1] * 50 + [2] * 9 + [3] * 40 + [-1] * 3)
    return torch.from_numpy(np.random.default_rng(seed).permutation(y))


@pytest.mark.parametrize("seed", [0, 1941488137, 2**32 - 1])
def test_balanced_split_counts_per_class(seed):
    y = labels_with_small_class()
    train, val, test = balanced_split(y, (0.6, 0.2, 0.2), seed, num_classes=4)
    labelled = int((y >= 0).sum())
    quota = round(0.6 * labelled / 4)
    counts = np.bincount(y[train].numpy(), minlength=4)
    sizes = np.bincount(y[y >= 0].numpy(), minlength=4)
    assert counts.tolist() == [min(quota, s) for s in sizes] == [25, 25, 9, 25]
    assert val.numel() == round(0.2 * labelled)
    parts = torch.cat([train, val, test])
    assert parts.unique().numel() == parts.numel() == labelled  # disjoint, every labelled node
    assert (y[parts] >= 0).all()
    assert all(torch.equal(p, p.sort().values) for p in (train, val, test))


def test_balanced_split_draws_as_the_official_loop():
    """The same draws as BernNet's/ChebNetII's split (written out here with plain lists): the
    same seed gives the same three sets."""
    y = labels_with_small_class(3).numpy()
    seed, n, classes = 629014539, int((y >= 0).sum()), 4
    rnd = np.random.RandomState(seed)
    train = []
    for c in range(classes):
        idx = np.where(y == c)[0]
        k = int(round(0.6 * n / classes))
        train.extend(idx if len(idx) < k else rnd.choice(idx, k, replace=False))
    rest = [i for i in range(len(y)) if i not in train and y[i] >= 0]
    val = rnd.choice(rest, int(round(0.2 * n)), replace=False)
    test = [i for i in rest if i not in val]
    ours = balanced_split(torch.from_numpy(y), (0.6, 0.2, 0.2), seed, classes)
    for got, want in zip(ours, (train, val, test), strict=True):
        assert got.tolist() == sorted(int(i) for i in want)


def test_balanced_split_depends_on_the_seed_only():
    y = labels_with_small_class()
    a = balanced_split(y, (0.6, 0.2, 0.2), 5, 4)
    b = balanced_split(y, (0.6, 0.2, 0.2), 5, 4)
    c = balanced_split(y, (0.6, 0.2, 0.2), 6, 4)
    assert all(torch.equal(x, z) for x, z in zip(a, b, strict=True))
    assert not torch.equal(a[0], c[0])


class _Labels:
    """The fields of a dataset that splitting reads."""

    def __init__(self, labels: torch.Tensor, classes: int) -> None:
        self.name, self.labels, self.num_classes = "PUBMED", labels, classes
        self.num_nodes, self.fixed_splits = labels.numel(), None


def test_get_split_balanced_mode_and_size_check():
    ds = _Labels(labels_with_small_class(), 4)
    assert "balanced" in SPLIT_MODES
    train, _, _ = get_split(ds, 0, 7, mode="balanced", ratios=(0.6, 0.2, 0.2))
    assert np.bincount(ds.labels[train].numpy()).tolist() == [25, 25, 9, 25]
    with pytest.raises(Exception, match="0 of its"):  # 0.001 * 169 / 4 rounds to 0 per class
        check_split_sizes(ds, "balanced", (0.001, 0.5, 0.499))


# --------------------------------------------------------------------------- early stopping
def run_curve(rule: str, patience: int, losses=None, accs=None) -> tuple[int, int]:
    """Feed a scripted validation curve; (epoch it stops after or -1, last epoch kept)."""
    stopper = EarlyStopping(rule, patience, NODE.is_better)
    n = len(losses if losses is not None else accs)
    kept = -1
    for epoch in range(n):
        loss = losses[epoch] if losses is not None else 1.0
        acc = accs[epoch] if accs is not None else 0.5
        keep, stop = stopper.update(loss, acc)
        kept = epoch if keep else kept
        if stop:
            return epoch, kept
    return -1, kept


def test_val_loss_window_stops_when_the_loss_exceeds_the_window_mean():
    # patience 3: from epoch 4 on, compare with the mean of the 3 losses before it
    losses = [5.0, 4.0, 3.0, 2.0, 2.9, 2.95, 3.1, 3.0]
    # epoch 4: 2.9 > mean(4, 3, 2) = 3.0? no. epoch 5: 2.95 > mean(3, 2, 2.9) = 2.633 -> stop
    assert run_curve("val_loss_window", 3, losses=losses) == (5, 3)
    # a steadily falling loss never stops; each epoch is kept
    assert run_curve("val_loss_window", 3, losses=[10.0 - i for i in range(9)]) == (-1, 8)
    # epoch <= patience never stops, however high the loss
    assert run_curve("val_loss_window", 3, losses=[1.0, 9.0, 9.0, 9.0]) == (-1, 0)


def test_val_loss_window_keeps_the_strictly_lowest_loss():
    assert run_curve("val_loss_window", 50, losses=[3.0, 2.0, 2.0, 2.5])[1] == 1


def test_val_metric_patience_counts_epochs_below_the_best():
    # patience 2: ties reset the counter (and are kept); the 3rd epoch in a row below stops
    accs = [0.5, 0.6, 0.6, 0.55, 0.59, 0.58]
    assert run_curve("val_metric_patience", 2, accs=accs) == (5, 2)
    accs = [0.5, 0.6, 0.55, 0.59, 0.6, 0.1, 0.2]
    assert run_curve("val_metric_patience", 2, accs=accs) == (-1, 4)


def test_val_metric_strict_keeps_the_first_best_and_counts_ties_as_no_gain():
    # patience 2: the tie at epoch 2 neither replaces epoch 1 nor resets the counter
    assert run_curve("val_metric_strict", 2, accs=[0.5, 0.6, 0.6, 0.55, 0.7]) == (3, 1)
    assert run_curve("val_metric_strict", 2, accs=[0.5, 0.6, 0.55, 0.7, 0.1]) == (-1, 3)


@pytest.mark.parametrize("dataset,K,lr,prop_lr,wd,dprate,normalise", [
    ("PUBMED", 12, 0.04, 0.005, 1e-5, 0.0, False), ("SQUIRREL", 20, 0.001, 0.03, 1e-7, 0.5, True)])
def test_optbasis_published_configs_set_its_protocol(dataset, K, lr, prop_lr, wd, dprate,
                                                     normalise):
    """OptBasisGNN's scripts/reproduce_optbasis.sh and train_models.py (SUCCESSORS.md §5)."""
    cfg = load_config(ROOT / f"configs/node_classification_OPTBASIS_{dataset}_published.json")
    p, net, data = cfg["params"], cfg["net_params"], cfg["data"]
    assert (cfg["model"], cfg["dataset"]) == ("OPTBASIS", dataset)
    assert (p["early_stop"], p["early_stop_patience"], p["epochs"], p["runs"]) == \
        ("val_metric_strict", 300, 2000, 20)
    assert (p["init_lr"], p["weight_decay"], p["scheduler"]) == (lr, wd, "none")
    assert (net["poly_order"], net["hidden_dim"], net["dropout"], net["dprate"]) == \
        (K, 64, 0.0, dprate)
    assert (net["prop_lr"], net["prop_wd"]) == (prop_lr, 1e-3)
    assert (data["split"], data["split_ratio"], data["normalize_features"]) == \
        ("balanced", [0.6, 0.2, 0.2], normalise)


def test_default_rule_keeps_the_first_best_metric_and_never_stops():
    assert run_curve("none", 1, accs=[0.5, 0.7, 0.7, 0.1, 0.1, 0.1]) == (-1, 1)


def test_no_validation_split_keeps_every_epoch():
    stopper = EarlyStopping("val_loss_window", 1, NODE.is_better)
    assert [stopper.update(None, None) for _ in range(4)] == [(True, False)] * 4


# --------------------------------------------------------------------------- configs
def test_published_configs_set_the_official_protocol():
    paths = sorted(ROOT.glob("configs/node_classification_*_published.json"))
    paths = [p for p in paths if "_OPTBASIS_" not in p.name]  # its own protocol: test below
    assert len(paths) == 8
    for path in paths:
        cfg = load_config(path)
        rule = "val_metric_patience" if cfg["model"] == "JACOBICONV" else "val_loss_window"
        assert cfg["data"]["split"] == "balanced", path.name
        assert cfg["data"]["split_ratio"] == [0.6, 0.2, 0.2], path.name
        assert cfg["data"]["normalize_features"] is True, path.name  # NormalizeFeatures
        assert cfg["params"]["early_stop"] == rule, path.name
        assert cfg["params"]["early_stop_patience"] == 200, path.name
        assert cfg["params"]["epochs"] == 1000 and cfg["params"]["runs"] == 10, path.name


def test_defaults_keep_todays_behaviour():
    cfg = validate({"model": "GCN", "dataset": "PUBMED"})
    assert cfg["params"]["early_stop"] == "none" and cfg["data"]["split"] == "random"
    assert cfg["data"]["normalize_features"] is False


@pytest.mark.parametrize("normalise", [False, True])
def test_runner_gives_the_net_the_features_the_config_asks_for(tmp_path, normalise):
    from data.loaders import load_node_dataset
    from tests.data_writers import write_squirrel
    from train.runner import load_data

    write_squirrel(tmp_path)
    cfg = validate({"model": "GCN", "dataset": "SQUIRREL",
                    "data": {"data_dir": str(tmp_path), "normalize_features": normalise}})
    info, _, make_loop = load_data(NODE, cfg)
    seen = make_loop(0, 0, torch.device("cpu")).features.to_dense().numpy()
    raw = load_node_dataset("SQUIRREL", tmp_path).features.to_dense().numpy()
    assert raw.sum(1).max() > 1
    expected = raw / np.maximum(raw.sum(1, keepdims=True), 1) if normalise else raw
    np.testing.assert_allclose(seen, expected, rtol=1e-6)
    assert ("feature_normalisation" in info) == normalise  # recorded in results.json


@pytest.mark.parametrize("key,value", [("early_stop", "val_loss"), ("early_stop_patience", 0)])
def test_bad_early_stop_settings_are_rejected(key, value):
    with pytest.raises(ConfigError, match=key):
        validate({"model": "GCN", "dataset": "PUBMED", "params": {key: value}})


class ScriptedLoop:
    """An epoch loop whose validation loss follows a script; no training happens (the weights
    stay as built), so what is tested is the runner's bookkeeping."""

    steps_per_epoch = 1
    generator = None  # nothing shuffled (the runner saves a loop's generator with each epoch)

    def __init__(self, losses: list[float]) -> None:
        self.losses, self.epoch = losses, -1

    def train_epoch(self, model, optimizer):
        self.epoch += 1
        return 1.0, {"acc": 0.5}

    def evaluate_splits(self, model, splits):
        loss = self.losses[min(self.epoch, len(self.losses) - 1)]
        return {s: (loss, {"acc": 0.5}) for s in splits}


def test_train_run_stops_at_the_scripted_epoch(tmp_path, monkeypatch):
    """The training loop with ``early_stop val_loss_window``: a scripted validation loss that
    starts rising at epoch 4 stops the run after epoch 5 (as worked out in the test above) and
    keeps the weights of epoch 3."""
    from nets.gnn_net import NetIO
    from train import runner
    from train.run_folder import RunFolder

    cfg = validate({"model": "MLP", "dataset": "PUBMED", "params": {
        "epochs": 20, "early_stop": "val_loss_window", "early_stop_patience": 3},
        "net_params": {"L": 1, "hidden_dim": 4}})
    loop = ScriptedLoop([5.0, 4.0, 3.0, 2.0, 2.9, 2.95, 3.1, 3.0])
    io = NetIO("single_graph", "linear", 4, 3)
    folder = RunFolder.create(tmp_path, {"model": "MLP", "dataset": "PUBMED", "config": cfg,
                                         "data": {}})
    experiment = runner.Experiment(NODE, cfg, io, None, torch.device("cpu"), [0], folder)
    run = experiment.train_seed(0, 0, loop)
    assert run["epochs"] == 6 and run["best_epoch"] == 3
    assert run["stop_reason"] == "early_stop (val_loss_window)"

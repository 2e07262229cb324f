"""Superpixel data: raw readers on files written here, the SLIC graph builder on real MNIST
images, the build-once cache (format, atomic writes, damaged caches), and the DGL/PyG
sources (DGL in the DGL profile only; PyG as a fake module)."""

from __future__ import annotations

import errno
import gzip
import json
import logging
import os
import pickle
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

import data.superpixels as sp
from autogcn.graph import Graph
from data.common import DataError, collate_graphs
from data.files import read_graph_pack, write_graph_pack
from tests.data_writers import idx_bytes as _idx_bytes
from tests.data_writers import write_idx as _write_idx
from tests.data_writers import write_mnist as _write_mnist
from tests.helpers import fake_pyg_datasets

MNIST_TEST_IMAGES = "t10k-images-idx3-ubyte.gz"


# --------------------------------------------------------------------------- readers


@pytest.mark.parametrize("gz", [True, False])
def test_read_idx(tmp_path, gz):
    imgs = np.random.default_rng(0).integers(0, 256, (3, 28, 28)).astype(np.uint8)
    labels = np.array([7, 0, 9], dtype=np.uint8)
    suffix = ".gz" if gz else ""
    _write_idx(tmp_path / f"img{suffix}", imgs)
    _write_idx(tmp_path / f"lab{suffix}", labels)
    # the magic numbers are the canonical ones: 0x00000803 images, 0x00000801 labels
    raw = (tmp_path / f"img{suffix}").read_bytes()
    assert (gzip.decompress(raw) if gz else raw)[:4] == bytes.fromhex("00000803")
    assert np.array_equal(sp.read_idx(tmp_path / f"img{suffix}"), imgs)
    assert np.array_equal(sp.read_idx(tmp_path / f"lab{suffix}"), labels)


def test_read_idx_rejects_bad_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x08\x01" + b"\x00" * 8)
    with pytest.raises(DataError, match="magic"):
        sp.read_idx(tmp_path / "bad")
    truncated = _idx_bytes(np.zeros((2, 4, 4), dtype=np.uint8))[:-3]
    (tmp_path / "short").write_bytes(truncated)
    with pytest.raises(DataError, match="header says"):
        sp.read_idx(tmp_path / "short")


def test_read_mnist_mixed_compression_and_missing(tmp_path):
    arrays = _write_mnist(tmp_path, 4, 2, gz=True)
    # an uncompressed copy of one file is found as well
    (tmp_path / "t10k-labels-idx1-ubyte.gz").unlink()
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte", arrays["t10k-labels-idx1-ubyte"])
    tx, ty, vx, vy = sp.read_mnist(tmp_path)
    assert tx.shape == (4, 28, 28) and tx.dtype == np.uint8
    assert np.array_equal(tx, arrays["train-images-idx3-ubyte"])
    assert ty.dtype == np.int64 and list(ty) == [0, 1, 2, 3]
    assert list(vy) == [0, 3]
    (tmp_path / "train-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DataError) as err:
        sp.read_mnist(tmp_path)
    msg = str(err.value)
    assert "train-labels-idx1-ubyte" in msg and "mnist" in msg.lower() and "dgl" in msg


def _write_cifar(folder: Path, per_batch: int) -> tuple[np.ndarray, np.ndarray]:
    """A tiny cifar-10-batches-py folder; returns all images (HWC) and labels, train then test."""
    rng = np.random.default_rng(0)
    batch_dir = folder / "cifar-10-batches-py"
    batch_dir.mkdir(parents=True)
    images, labels = [], []
    for name in [*(f"data_batch_{i}" for i in range(1, 6)), "test_batch"]:
        hwc = rng.integers(0, 256, (per_batch, 32, 32, 3)).astype(np.uint8)
        y = list(rng.integers(0, 10, per_batch))
        # the python batches store each image channel-major: 1024 R, 1024 G, 1024 B values
        rows = hwc.transpose(0, 3, 1, 2).reshape(per_batch, 3072)
        with open(batch_dir / name, "wb") as f:
            pickle.dump({b"data": rows, b"labels": y, b"batch_label": name.encode()}, f)
        images.append(hwc)
        labels.append(np.array(y))
    return np.concatenate(images), np.concatenate(labels)


def test_read_cifar10(tmp_path):
    images, labels = _write_cifar(tmp_path, per_batch=2)
    for where in (tmp_path, tmp_path / "cifar-10-batches-py"):
        tx, ty, vx, vy = sp.read_cifar10(where)
        assert tx.shape == (10, 32, 32, 3) and vx.shape == (2, 32, 32, 3)
        assert np.array_equal(tx, images[:10]) and np.array_equal(vx, images[10:])
        assert np.array_equal(ty, labels[:10]) and ty.dtype == np.int64
    (tmp_path / "cifar-10-batches-py" / "test_batch").unlink()
    with pytest.raises(DataError, match="cifar-10-python.tar.gz"):
        sp.read_cifar10(tmp_path)


def test_unknown_name():
    with pytest.raises(ValueError, match="MNIST, CIFAR10"):
        sp.load_superpixels("SVHN", "/nonexistent")


# --------------------------------------------------------------------------- graph builder


def _check_graph(feat, src, dst, w, n_channels):
    n = len(feat)
    assert feat.dtype == np.float32 and feat.shape == (n, n_channels + 2)
    assert feat.min() >= 0.0 and feat.max() <= 1.0
    assert not np.any(src == dst), "self-loop"
    out_deg = np.bincount(src, minlength=n)
    assert np.all(out_deg == min(8, n - 1))
    assert len(set(zip(src.tolist(), dst.tolist(), strict=True))) == len(src), "duplicate edge"
    assert w.dtype == np.float32 and np.all(w > 0) and np.all(w <= 1)


def test_builder_on_real_mnist(real_data):
    images = sp.read_idx(real_data("mnist", MNIST_TEST_IMAGES) / MNIST_TEST_IMAGES)[:12]
    params = sp.PARAMS["MNIST"]
    for img in images:
        feat, src, dst, w = sp.superpixel_graph(img, params)
        n = len(feat)
        assert 40 <= n <= 75, n  # the paper's MNIST range
        _check_graph(feat, src, dst, w, 1)
        # the neighbours of each node are its nearest superpixel centres
        centre = feat[:, 1:]
        d = np.linalg.norm(centre[:, None] - centre[None], axis=-1)
        np.fill_diagonal(d, np.inf)
        kth = np.sort(d, axis=1)[:, 7]
        assert np.all(d[src, dst] <= kth[src] + 1e-6)  # features are float32
        # mean intensity of the superpixels, weighted by size, is roughly the image mean
        assert feat[:, 0].max() > 0.5


def test_builder_small_graphs_and_colour():
    params = sp.SuperpixelParams(n_segments=5, compactness=10.0, query_extra=0)
    img = np.zeros((32, 32, 3), dtype=np.uint8)
    img[:16, :, 0] = 255
    img[16:, :, 2] = 200
    feat, src, dst, w = sp.superpixel_graph(img, params)
    assert 1 < len(feat) <= 5
    _check_graph(feat, src, dst, w, 3)
    one = sp.SuperpixelParams(n_segments=1, compactness=10.0, query_extra=0)
    feat, src, dst, w = sp.superpixel_graph(img, one)
    assert len(feat) == 1 and len(src) == 0 and len(w) == 0


# --------------------------------------------------------------------------- loader + cache


@pytest.fixture()
def mnist_dir(tmp_path) -> Path:
    folder = tmp_path / "mnist"
    folder.mkdir()
    _write_mnist(folder, sp.NUM_VAL + 3, 3, gz=False)
    return folder


def test_build_then_cache(mnist_dir, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    before = sorted(p.name for p in mnist_dir.iterdir())
    ds = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2, workers=1,
                             progress=False)
    assert sorted(p.name for p in mnist_dir.iterdir()) == before  # data_dir untouched
    assert (ds.name, ds.in_dim, ds.num_classes) == ("MNIST", 3, 10)
    assert [len(s) for s in ds.splits().values()] == [2, 2, 2]
    # val = first training images, train = from index 5000 on
    assert [int(y) for _, y in ds.val] == [0, 1]
    assert [int(y) for _, y in ds.train] == [sp.NUM_VAL % 10, (sp.NUM_VAL + 1) % 10]
    assert [int(y) for _, y in ds.test] == [0, 3]
    g, y = ds.train[0]
    assert y.dtype == torch.int64 and y.shape == (1,)
    assert g.ndata["feat"].dtype == torch.float32 and g.ndata["feat"].shape[1] == 3
    assert g.edata["feat"].dtype == torch.float32 and g.edata["feat"].shape == (g.num_edges(), 1)
    assert ds.info["from_cache"] is False and ds.info["build_time_s"] > 0
    stats = ds.info["splits"]["test"]
    assert stats["graphs"] == 2 and stats["min_nodes"] <= stats["mean_nodes"] <= stats["max_nodes"]
    files = sorted(p.name for p in cache.iterdir())
    assert any("sp75_c0.25" in f and f.endswith("first2.json") for f in files)
    assert not any(".tmp" in f for f in files)

    def boom(*args, **kwargs):
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr(sp, "build_split", boom)
    again = sp.load_superpixels("MNIST", tmp_path / "gone", cache_dir=cache, max_graphs=2,
                                progress=False)
    assert again.info["from_cache"] is True
    for a, b in zip(ds.splits().values(), again.splits().values(), strict=True):
        for (ga, ya), (gb, yb) in zip(a, b, strict=True):
            assert torch.equal(ya, yb)
            assert torch.equal(ga.ndata["feat"], gb.ndata["feat"])
            assert torch.equal(ga.edata["feat"], gb.edata["feat"])
            assert all(torch.equal(x, z) for x, z in zip(ga.edges(), gb.edges(), strict=True))
    batch, targets, snorm_n = collate_graphs(list(again.train))
    assert targets.shape == (2,) and snorm_n.shape == (batch.num_nodes(), 1)
    assert isinstance(batch, Graph) and batch.edata["feat"].shape == (batch.num_edges(), 1)
    npz = sorted(f for f in files if f.endswith(".npz"))
    assert len(npz) == 3 and all("first2" in f for f in npz)
    meta = json.loads(next(cache.glob("*first2.json")).read_text())
    assert (meta["format"], meta["format_version"]) == ("autogcn-superpixels", sp.FORMAT_VERSION)

    # a changed build parameter must not reuse the cache
    monkeypatch.setitem(sp.PARAMS, "MNIST", sp.SuperpixelParams(60, 0.25, 20))
    with pytest.raises(AssertionError, match="cache should"):
        sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2, progress=False)


def test_full_cache_serves_subsets(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    # a genuinely full build of a small folder: with 2 validation images, 5 training images
    # give 3 train / 2 val graphs (built in two worker processes)
    monkeypatch.setattr(sp, "NUM_VAL", 2)
    small = tmp_path / "small"
    small.mkdir()
    _write_mnist(small, 5, 3, gz=True)
    full = sp.load_superpixels("MNIST", small, cache_dir=cache, workers=2, progress=False)
    assert [len(s) for s in full.splits().values()] == [3, 2, 3]
    monkeypatch.setattr(sp, "build_split", lambda *a, **k: pytest.fail("rebuilt"))
    sub = sp.load_superpixels("MNIST", small, cache_dir=cache, max_graphs=1, progress=False)
    assert [len(s) for s in sub.splits().values()] == [1, 1, 1]
    assert torch.equal(sub.train[0][0].ndata["feat"], full.train[0][0].ndata["feat"])


def test_empty_split_is_cached(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _write_cifar(tmp_path / "cifar", per_batch=1)
    ds = sp.load_superpixels("CIFAR10", tmp_path / "cifar", cache_dir=cache, workers=1,
                             progress=False)
    # 5 training images < 5000: all of them are validation, train is empty
    assert [len(s) for s in ds.splits().values()] == [0, 5, 1]
    assert ds.in_dim == 5 and ds.val[0][0].ndata["feat"].shape[1] == 5
    monkeypatch.setattr(sp, "build_split", lambda *a, **k: pytest.fail("rebuilt"))
    again = sp.load_superpixels("CIFAR10", tmp_path / "cifar", cache_dir=cache, progress=False)
    assert [len(s) for s in again.splits().values()] == [0, 5, 1]


def test_read_only_real_data_dir(tmp_path, real_data):
    mnist = real_data("mnist", MNIST_TEST_IMAGES, "t10k-labels-idx1-ubyte.gz",
                      "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz")
    ds = sp.load_superpixels("MNIST", mnist, cache_dir=tmp_path / "c", max_graphs=3,
                             workers=1, progress=False)
    assert [len(s) for s in ds.splits().values()] == [3, 3, 3]
    for split in ds.splits().values():
        for g, _ in split:
            assert 40 <= g.num_nodes() <= 75


def test_missing_raw_data(tmp_path):
    with pytest.raises(DataError, match="t10k-images-idx3-ubyte"):
        sp.load_superpixels("MNIST", tmp_path, cache_dir=tmp_path / "c", progress=False)
    with pytest.raises(DataError, match="cifar-10-batches-py"):
        sp.load_superpixels("CIFAR10", tmp_path, cache_dir=tmp_path / "c", progress=False)


# --------------------------------------------------------------------------- damaged caches


def _sp_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "data.superpixels" and r.levelno >= logging.WARNING]


def _stem(max_graphs) -> str:
    return sp._cache_stem("MNIST", sp.PARAMS["MNIST"], max_graphs)


def _same_splits(a, b) -> bool:
    for sa, sb in zip(a.splits().values(), b.splits().values(), strict=True):
        if len(sa) != len(sb):
            return False
        for (ga, ya), (gb, yb) in zip(sa, sb, strict=True):
            if not (torch.equal(ya, yb) and torch.equal(ga.src, gb.src)
                    and torch.equal(ga.dst, gb.dst)
                    and torch.equal(ga.ndata["feat"], gb.ndata["feat"])
                    and torch.equal(ga.edata["feat"], gb.edata["feat"])):
                return False
    return True


def _count_builds(monkeypatch) -> list[int]:
    builds = []
    real = sp.build_split

    def counting(images, *args, **kwargs):
        builds.append(len(images))
        return real(images, *args, **kwargs)

    monkeypatch.setattr(sp, "build_split", counting)
    return builds


def test_other_format_version_is_rebuilt(mnist_dir, tmp_path, monkeypatch, caplog):
    cache = tmp_path / "cache"
    ds = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2, workers=1,
                             progress=False)
    monkeypatch.setattr(sp, "FORMAT_VERSION", sp.FORMAT_VERSION + 1)
    builds = _count_builds(monkeypatch)
    with caplog.at_level(logging.INFO, logger="data.superpixels"):
        again = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2,
                                    workers=1, progress=False)
    warnings = _sp_warnings(caplog)
    assert len(warnings) == 1 and "version 1" in warnings[0] and builds == [2, 2, 2]
    assert _same_splits(ds, again)
    meta = json.loads((cache / f"{_stem(2)}.json").read_text())
    assert meta["format_version"] == sp.FORMAT_VERSION


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "pack_version", "meta"])
def test_damaged_cache_is_rebuilt(mnist_dir, tmp_path, monkeypatch, caplog, damage):
    cache = tmp_path / "cache"
    ds = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2, workers=1,
                             progress=False)
    path = cache / (f"{_stem(2)}.json" if damage == "meta" else f"{_stem(2)}_test.npz")
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:-200])
    elif damage in ("garbage", "meta"):
        path.write_bytes(os.urandom(3000))
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        pack = read_graph_pack(path, sp.FORMAT_NAME, sp.FORMAT_VERSION)
        write_graph_pack(path, pack, sp.FORMAT_NAME, sp.FORMAT_VERSION + 1)
    builds = _count_builds(monkeypatch)
    with caplog.at_level(logging.INFO, logger="data.superpixels"):
        again = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2,
                                    workers=1, progress=False)
    warnings = _sp_warnings(caplog)
    said = ("unreadable", ".json") if damage == "meta" else ("cannot be read", "test.npz")
    assert len(warnings) == 1 and all(word in warnings[0] for word in said)
    assert "\n" not in warnings[0] and builds == [2, 2, 2] and _same_splits(ds, again)
    third = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2,
                                progress=False)
    assert third.info["from_cache"] and _same_splits(ds, third)


def test_interrupted_cache_write_is_not_trusted(mnist_dir, tmp_path, monkeypatch, caplog):
    cache = tmp_path / "cache"
    real = Path.write_bytes
    written = []

    def full_disk_on_val(self, data):  # the val split: half a file, then the disk is full
        written.append(self.name)
        if self.name.startswith(f".{_stem(2)}_val.npz.tmp"):
            real(self, bytes(data)[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full_disk_on_val)
    with caplog.at_level(logging.INFO, logger="data.superpixels"):
        ds = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2, workers=1,
                                 progress=False)
    assert [len(s) for s in ds.splits().values()] == [2, 2, 2]  # the build itself is returned
    (warning,) = _sp_warnings(caplog)
    assert f"no space left on device writing {cache}" in warning and "--cache_dir" in warning
    assert written[0].startswith(f".{_stem(2)}_train.npz.tmp")  # under a temporary name
    assert sorted(p.name for p in cache.iterdir()) == [f"{_stem(2)}_train.npz"]
    monkeypatch.setattr(Path, "write_bytes", real)
    builds = _count_builds(monkeypatch)
    again = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2, workers=1,
                                progress=False)
    assert builds == [2, 2, 2] and not again.info["from_cache"] and _same_splits(ds, again)
    third = sp.load_superpixels("MNIST", mnist_dir, cache_dir=cache, max_graphs=2,
                                progress=False)
    assert third.info["from_cache"]


def test_unreadable_full_cache_falls_back_to_subset(tmp_path, monkeypatch, caplog):
    cache = tmp_path / "cache"
    monkeypatch.setattr(sp, "NUM_VAL", 2)
    small = tmp_path / "small"
    small.mkdir()
    _write_mnist(small, 4, 2, gz=False)
    sp.load_superpixels("MNIST", small, cache_dir=cache, max_graphs=1, workers=1,
                        progress=False)
    full = sp.load_superpixels("MNIST", small, cache_dir=cache, workers=1, progress=False)
    (cache / f"{_stem(None)}_val.npz").write_bytes(b"garbage")
    monkeypatch.setattr(sp, "build_split", lambda *a, **k: pytest.fail("rebuilt"))
    with caplog.at_level(logging.INFO, logger="data.superpixels"):
        sub = sp.load_superpixels("MNIST", small, cache_dir=cache, max_graphs=1, progress=False)
    assert sub.info["from_cache"] and len(_sp_warnings(caplog)) == 1
    assert torch.equal(sub.val[0][0].ndata["feat"], full.val[0][0].ndata["feat"])
    assert not (cache / f"{_stem(None)}.json").exists()  # the broken full cache is dropped


# --------------------------------------------------------------------------- DGL / PyG sources


def _fake_graphs(n: int, width: int, seed: int) -> list[tuple]:
    """(x, pos, edge_index, weight, label) of small random superpixel-like graphs."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        nodes = 4 + i
        x = torch.rand(nodes, width - 2, generator=gen)
        pos = torch.rand(nodes, 2, generator=gen)
        src = torch.arange(nodes).repeat_interleave(2)
        dst = (src + torch.tensor([1, 2]).repeat(nodes)) % nodes
        out.append((x, pos, torch.stack([src, dst]), torch.rand(2 * nodes, generator=gen), i % 10))
    return out


def test_pyg_source_mapping(tmp_path, monkeypatch):
    seen = []
    graphs = {s: _fake_graphs(3, 5, k) for k, s in enumerate(("train", "val", "test"))}

    class FakeBenchmark:
        def __init__(self, root, name, split):
            seen.append((root, name, split))
            self.items = [types.SimpleNamespace(x=x, pos=pos, edge_index=ei, edge_attr=w,
                                                y=torch.tensor([y]))
                          for x, pos, ei, w, y in graphs[split]]

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    fake_pyg_datasets(monkeypatch, GNNBenchmarkDataset=FakeBenchmark)
    ds = sp.load_superpixels("CIFAR10", tmp_path, source="pyg", max_graphs=2, progress=False)
    assert seen == [(str(tmp_path / "pyg"), "CIFAR10", s) for s in ("train", "val", "test")]
    assert ds.info["source"] == "pyg" and ds.in_dim == 5
    for split, items in graphs.items():
        got = ds.splits()[split]
        assert len(got) == 2
        for (g, y), (x, pos, ei, w, label) in zip(got, items, strict=False):
            # our feat = [RGB, centre (y, x)]: PyG's x, then its pos
            assert torch.equal(g.ndata["feat"], torch.cat([x, pos], 1))
            assert g.ndata["feat"].dtype == torch.float32 and set(g.ndata) == {"feat"}
            assert torch.equal(g.edata["feat"], w.reshape(-1, 1))
            assert torch.equal(g.src, ei[0]) and torch.equal(g.dst, ei[1])
            assert y.tolist() == [label] and y.dtype == torch.int64
    with pytest.raises(DataError, match="width 5"):
        sp.load_superpixels("MNIST", tmp_path, source="pyg", progress=False)


def test_dgl_source_mapping(tmp_path, monkeypatch):
    dgl = pytest.importorskip("dgl", reason="the DGL data source needs the DGL profile")
    monkeypatch.setattr(sp, "NUM_VAL", 2)
    made = {s: _fake_graphs(n, 3, k) for k, (s, n) in enumerate((("train", 5), ("test", 2)))}

    class FakeMNIST:
        def __init__(self, raw_dir, split):
            self.items = []
            for x, pos, ei, w, y in made[split]:
                g = dgl.graph((ei[0].int(), ei[1].int()), num_nodes=x.shape[0],
                              idtype=torch.int32)
                g.ndata["feat"] = torch.cat([x, pos], 1).double()
                g.edata["feat"] = w.double()
                self.items.append((g, y))

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    monkeypatch.setattr(dgl.data, "MNISTSuperPixelDataset", FakeMNIST, raising=False)
    ds = sp.load_superpixels("MNIST", tmp_path, source="dgl", progress=False)
    assert [len(s) for s in ds.splits().values()] == [3, 2, 2]
    g, y = ds.train[0]
    x, pos, ei, w, label = made["train"][2]  # train starts after the NUM_VAL validation images
    assert isinstance(g, Graph) and torch.equal(g.src, ei[0]) and g.src.dtype == torch.int64
    assert torch.allclose(g.ndata["feat"], torch.cat([x, pos], 1))
    assert g.ndata["feat"].dtype == torch.float32
    assert g.edata["feat"].shape == (g.num_edges(), 1) and g.edata["feat"].dtype == torch.float32
    assert y.tolist() == [label]


def test_optional_sources_missing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", None)
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    with pytest.raises(DataError, match="scripts/setup.sh --dgl") as err:
        sp.load_superpixels("MNIST", tmp_path, source="dgl", progress=False)
    assert "\n" not in str(err.value)
    with pytest.raises(DataError, match="pip install torch_geometric") as err:
        sp.load_superpixels("CIFAR10", tmp_path, source="pyg", progress=False)
    assert "\n" not in str(err.value)

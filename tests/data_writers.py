"""Tiny datasets written in the real on-disk formats, for tests and ``scripts/gpu_check.py``.

Plain functions with no test-framework import, so that the GPU check can use them on a machine
without pytest.
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import torch


def molecule(gen: torch.Generator, n: int) -> dict:
    """A random molecule in the benchmarking-gnns raw format (symmetric int8 bond matrix)."""
    atoms = torch.randint(0, 28, (n,), generator=gen).to(torch.int8)
    upper = torch.randint(0, 4, (n, n), generator=gen) * (torch.rand(n, n, generator=gen) < 0.3)
    upper = torch.triu(upper, diagonal=1)
    bonds = (upper + upper.T).to(torch.int8)
    target = torch.randn(1, generator=gen).to(torch.float32)
    return {"num_atom": n, "atom_type": atoms, "bond_type": bonds,
            "logP_SA_cycle_normalized": target}


def write_zinc(folder: Path, split: str, molecules: list[dict]) -> None:
    """``<folder>/<split>.pickle``: a pickled list of raw molecule dicts."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{split}.pickle", "wb") as f:
        pickle.dump(molecules, f)


def write_tiny_zinc(folder: Path, sizes: dict[str, int], seed: int = 0) -> None:
    """ZINC splits with ``sizes[split]`` molecules of 6-10 atoms each."""
    gen = torch.Generator().manual_seed(seed)
    for split, n in sizes.items():
        write_zinc(folder, split, [molecule(gen, 6 + i % 5) for i in range(n)])


def idx_bytes(arr: np.ndarray) -> bytes:
    """Serialise a uint8 array in the idx format: 0, 0, type 0x08, ndim, big-endian sizes."""
    header = bytes([0, 0, 0x08, arr.ndim]) + np.array(arr.shape, dtype=">u4").tobytes()
    return header + arr.astype(np.uint8).tobytes()


def write_idx(path: Path, arr: np.ndarray) -> None:
    raw = idx_bytes(arr)
    path.write_bytes(gzip.compress(raw) if path.suffix == ".gz" else raw)


def digit_images(n: int, seed: int = 0) -> np.ndarray:
    """Crude 'digits': a bright bar and a ring on black, at random places (28x28 uint8)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:28, :28]
    imgs = np.zeros((n, 28, 28), dtype=np.uint8)
    for img in imgs:
        r0, c0 = rng.integers(4, 12, size=2)
        img[r0:r0 + 14, c0:c0 + 4] = 255
        cy, cx = rng.integers(9, 19, size=2)
        ring = np.abs(np.hypot(yy - cy, xx - cx) - 6) < 1.5
        img[ring] = rng.integers(150, 256)
    return imgs


def write_mnist(folder: Path, n_train: int, n_test: int, gz: bool = True) -> dict[str, np.ndarray]:
    """The four MNIST idx files (``n_train`` training and ``n_test`` test images)."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".gz" if gz else ""
    arrays = {
        "train-images-idx3-ubyte": digit_images(n_train, 1),
        "train-labels-idx1-ubyte": np.arange(n_train) % 10,
        "t10k-images-idx3-ubyte": digit_images(n_test, 2),
        "t10k-labels-idx1-ubyte": (np.arange(n_test) * 3) % 10,
    }
    for stem, arr in arrays.items():
        write_idx(folder / f"{stem}{suffix}", arr)
    return arrays


def write_squirrel(folder: Path, n: int = 60, features: int = 12, classes: int = 5,
                   edges: int = 300, n_splits: int = 3, seed: int = 0) -> None:
    """A random graph in the layout of ``squirrel_directed.npz`` (directed edge list with a few
    self-loops and repeats, binary features, ``n_splits`` fixed 48/32/20 masks)."""
    rng = np.random.default_rng(seed)
    masks = {k: np.zeros((n_splits, n), bool) for k in ("train", "val", "test")}
    for i in range(n_splits):
        perm = rng.permutation(n)
        a, b = int(0.48 * n), int(0.8 * n)
        masks["train"][i, perm[:a]] = masks["val"][i, perm[a:b]] = True
        masks["test"][i, perm[b:]] = True
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "squirrel_directed.npz",
             node_features=(rng.random((n, features)) < 0.3).astype(np.float32),
             node_labels=rng.integers(0, classes, n), edges=rng.integers(0, n, (edges, 2)),
             train_masks=masks["train"], val_masks=masks["val"], test_masks=masks["test"])

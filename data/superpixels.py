"""MNIST / CIFAR10 superpixel graphs (benchmarking-gnns, after Knyazev et al. 2019): built from
the raw images (``source="raw"``, cached as a file set) or converted from DGL's or PyG's copies.
The construction (SLIC, features, the directed kNN edges and their weights), where it differs
from the benchmark's code, the splits and the cache: docs/data.md, "MNIST / CIFAR10 superpixels".
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import math
import multiprocessing as mp
import os
import pickle
import sys
import tarfile
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from scipy.spatial.distance import cdist
from skimage.segmentation import slic
from tqdm.auto import tqdm

from autogcn.graph import Graph
from data.common import (
    SPLITS,
    DataError,
    GraphDataset,
    GraphSplit,
    check_finite,
    check_graph_split,
    check_range,
)
from data.files import FileSet, GraphPack, PackError, pack_graphs, unpack_graphs
from data.interop import dataset_splits, download_dataset, from_dgl, from_pyg

log = logging.getLogger(__name__)

NAMES = ("MNIST", "CIFAR10")
NUM_VAL = 5000
NUM_CLASSES = 10
# Bump when the graph construction changes so that old caches are not reused.
BUILDER_VERSION = 2  # 2: ties between equally near neighbours broken by index
# The cache file layout (docs/data.md); caches of another version are rebuilt.
FORMAT_NAME = "autogcn-superpixels"
FORMAT_VERSION = 1
# What a full disk under the cache folder tells the user to do.
CACHE_DIR_REMEDY = "free some space there or give another --cache_dir"
SOURCES = ("raw", "dgl", "pyg")

MNIST_URLS = ("https://ossci-datasets.s3.amazonaws.com/mnist/ (mirror of "
              "http://yann.lecun.com/exdb/mnist/)")
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
MNIST_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
CIFAR10_DIR = "cifar-10-batches-py"
CIFAR10_TRAIN_BATCHES = tuple(f"data_batch_{i}" for i in range(1, 6))
CIFAR10_BATCHES = (*CIFAR10_TRAIN_BATCHES, "test_batch")  # the last: the test images


@dataclass(frozen=True)
class SuperpixelParams:
    """Everything that determines the built graphs (all of it goes into the cache tag)."""

    n_segments: int
    compactness: float
    query_extra: int  # SLIC is first asked for n_segments + query_extra segments
    k: int = 8
    version: int = BUILDER_VERSION

    def tag(self) -> str:
        return (f"sp{self.n_segments}_c{self.compactness:g}_q{self.query_extra}_k{self.k}"
                f"_v{self.version}")


PARAMS = {
    "MNIST": SuperpixelParams(n_segments=75, compactness=0.25, query_extra=20),
    "CIFAR10": SuperpixelParams(n_segments=150, compactness=10.0, query_extra=50),
}
IN_DIM = {"MNIST": 3, "CIFAR10": 5}
# (train_images, train_labels, test_images, test_labels)
ImageArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


# --------------------------------------------------------------------------- raw readers


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an idx file (MNIST format; gzipped if the name ends in .gz) into a numpy array."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            buf = f.read()
    except (OSError, EOFError) as exc:
        raise DataError(f"cannot read idx file {path}: {exc}") from exc
    # Header: two zero bytes, a type code, the number of dims, then big-endian uint32 sizes.
    dtypes = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    if len(buf) < 4 or buf[0] != 0 or buf[1] != 0 or buf[2] not in dtypes:
        raise DataError(f"{path} is not an idx file (bad magic number {buf[:4].hex()})")
    ndim = buf[3]
    header = 4 + 4 * ndim
    if len(buf) < header:
        raise DataError(f"{path} is truncated: its header announces {ndim} dimensions")
    shape = tuple(int(s) for s in np.frombuffer(buf, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(dtypes[buf[2]])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(buf) - header != expected:
        raise DataError(f"{path}: header says shape {shape} ({expected} bytes) but the file has "
                        f"{len(buf) - header} data bytes")
    data = np.frombuffer(buf, dtype=dtype, offset=header).reshape(shape)
    return data.astype(dtype.newbyteorder("="))  # native byte order, and a writable copy


def _find_mnist_file(folder: Path, stem: str) -> Path | None:
    for cand in (folder / stem, folder / f"{stem}.gz"):
        if cand.is_file():
            return cand
    return None


def read_mnist(data_dir: str | os.PathLike) -> ImageArrays:
    """``(train_images uint8 [60000,28,28], train_labels, test_images, test_labels)``."""
    folder = Path(data_dir).expanduser()
    found = {key: _find_mnist_file(folder, stem) for key, stem in MNIST_FILES.items()}
    missing = [MNIST_FILES[k] for k, p in found.items() if p is None]
    if missing:
        raise DataError(
            f"MNIST raw files missing in {folder}: {', '.join(missing)} (each as-is or .gz). "
            f"Download the four idx files from the official MNIST page {MNIST_URLS}, or use "
            "`--data_source dgl` (dgl.data.MNISTSuperPixelDataset)."
        )
    arrays = {k: read_idx(p) for k, p in found.items()}
    for split in ("train", "test"):
        x, y = arrays[f"{split}_images"], arrays[f"{split}_labels"]
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
            raise DataError(f"MNIST {split}: images {x.shape} and labels {y.shape} do not match")
        _check_labels(y, str(found[f"{split}_labels"]))
    return (arrays["train_images"], arrays["train_labels"].astype(np.int64),
            arrays["test_images"], arrays["test_labels"].astype(np.int64))


def _cifar_batch(raw: bytes, where: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        batch = pickle.loads(raw, encoding="bytes")
        data = np.asarray(batch[b"data"], dtype=np.uint8)
        labels = np.asarray(batch[b"labels"], dtype=np.int64)
    except Exception as exc:
        raise DataError(f"{where} is not a CIFAR-10 python batch: {exc}") from exc
    if data.ndim != 2 or data.shape[1] != 3072 or len(data) != len(labels):
        raise DataError(f"{where}: data {data.shape}, labels {labels.shape}; expected [n, 3072]")
    _check_labels(labels, where)
    # Rows are channel-major (1024 R, 1024 G, 1024 B), each 32x32 row-major -> HWC.
    return data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), labels


def _cifar_files(folder: Path) -> list[Path]:
    """CIFAR-10's six python batches (train, then test) in ``folder/cifar-10-batches-py`` or in
    ``folder``, else its ``cifar-10-python.tar.gz`` there, else none."""
    for cand in (folder / CIFAR10_DIR, folder):
        if all((cand / n).is_file() for n in CIFAR10_BATCHES):
            return [cand / n for n in CIFAR10_BATCHES]
    tarball = folder / "cifar-10-python.tar.gz"
    return [tarball] if tarball.is_file() else []


def read_cifar10(data_dir: str | os.PathLike) -> ImageArrays:
    """``(train_images uint8 [50000,32,32,3], train_labels, test_images, test_labels)``.

    ``data_dir`` is the folder holding ``cifar-10-batches-py/``, that folder itself, or a folder
    holding the unextracted ``cifar-10-python.tar.gz``.
    """
    folder = Path(data_dir).expanduser()
    files = _cifar_files(folder)
    if not files:
        raise DataError(
            f"CIFAR-10 python batches not found in {folder}: expected {CIFAR10_DIR}/"
            f"{{{','.join(CIFAR10_BATCHES)}}} (or those files directly in the folder, or "
            f"cifar-10-python.tar.gz). Download {CIFAR10_URL} and extract it there, or use "
            "`--data_source dgl` (dgl.data.CIFAR10SuperPixelDataset)."
        )
    batches: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if len(files) == len(CIFAR10_BATCHES):
        batches = {p.name: _cifar_batch(p.read_bytes(), str(p)) for p in files}
    else:
        with tarfile.open(files[0], "r:gz") as tar:
            for n in CIFAR10_BATCHES:
                member = tar.extractfile(f"{CIFAR10_DIR}/{n}")
                if member is None:
                    raise DataError(f"{files[0]} lacks {CIFAR10_DIR}/{n}")
                batches[n] = _cifar_batch(member.read(), f"{files[0]}:{n}")
    train_x = np.concatenate([batches[n][0] for n in CIFAR10_TRAIN_BATCHES])
    train_y = np.concatenate([batches[n][1] for n in CIFAR10_TRAIN_BATCHES])
    test_x, test_y = batches[CIFAR10_BATCHES[-1]]
    return train_x, train_y, test_x, test_y


def _check_labels(labels: np.ndarray, where: str) -> None:
    """Image labels must be classes 0..9 (another value would silently widen the model)."""
    check_range(torch.from_numpy(np.asarray(labels, dtype=np.int64)), 0, NUM_CLASSES, where,
                "label", item="image", note=f" ({NUM_CLASSES} classes)")


def raw_source(name: str, data_dir: Path) -> dict:
    """The identity of the images a build reads: the resolved folder and, per raw file present,
    its size and a hash of its first and last 64 KiB (cheap even for CIFAR-10's 170 MB archive,
    and unchanged when the same files are copied or touched)."""
    mnist = (_find_mnist_file(data_dir, stem) for stem in MNIST_FILES.values())
    files = {}
    for path in _cifar_files(data_dir) if name == "CIFAR10" else filter(None, mnist):
        try:
            size = path.stat().st_size
            with open(path, "rb") as f:
                head = f.read(1 << 16)
                f.seek(max(0, size - (1 << 16)))
                tail = f.read()
        except OSError:
            continue
        files[path.name] = [size, hashlib.blake2b(head + tail, digest_size=16).hexdigest()]
    return {"data_dir": str(data_dir.resolve()), "files": files}


# --------------------------------------------------------------------------- graph builder


def slic_superpixels(image: np.ndarray, params: SuperpixelParams) -> np.ndarray:
    """SLIC label map (H, W) with labels 0..n-1, n <= ``params.n_segments``.

    ``image`` is float in [0, 1], (H, W) grayscale or (H, W, 3) RGB.
    """
    channel_axis = -1 if image.ndim == 3 else None
    query = params.n_segments + params.query_extra
    while True:
        seg = slic(image, n_segments=query, compactness=params.compactness,
                   channel_axis=channel_axis)
        labels, inverse = np.unique(seg.ravel(), return_inverse=True)
        # Knyazev's loop: lower the request until SLIC returns at most n_segments superpixels.
        if len(labels) <= params.n_segments or query <= 1:
            return inverse.reshape(seg.shape)
        query -= 1


def superpixel_graph(
    image: np.ndarray, params: SuperpixelParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One uint8 image to ``(node_feat float32 [N, C+2], src int64 [E], dst int64 [E], w float32
    [E])``; see the module docstring for the construction and the edge direction."""
    img = image.astype(np.float32) / 255.0
    seg = slic_superpixels(img, params)
    h, w = seg.shape
    flat = seg.ravel()
    n = int(flat.max()) + 1
    counts = np.bincount(flat, minlength=n).astype(np.float64)
    channels = img.reshape(h * w, -1)
    means = np.stack([np.bincount(flat, weights=channels[:, c], minlength=n)
                      for c in range(channels.shape[1])], axis=1) / counts[:, None]
    rows, cols = np.divmod(np.arange(h * w), w)
    # Centre of mass of each superpixel's pixels, (row, col), divided by the image size.
    centre = np.stack([np.bincount(flat, weights=rows, minlength=n) / counts / h,
                       np.bincount(flat, weights=cols, minlength=n) / counts / w], axis=1)
    feat = np.concatenate([np.clip(means, 0.0, 1.0), centre], axis=1).astype(np.float32)

    k = min(params.k, n - 1)
    if k <= 0:
        empty = np.zeros(0, dtype=np.int64)
        return feat, empty, empty, np.zeros(0, dtype=np.float32)
    dist = cdist(centre, centre)
    np.fill_diagonal(dist, np.inf)  # never pick a node as its own neighbour
    # Nearest first; ties (equally distant superpixels) go to the lower index. A stable sort of
    # the whole row defines that order on every numpy version (argpartition's tie order differs
    # between numpy 1 and 2), so a cache is the same whichever profile builds it.
    nbr = np.argsort(dist, axis=1, kind="stable")[:, :k]
    nd = np.take_along_axis(dist, nbr, axis=1)
    sigma = nd.mean(axis=1) + 1e-8
    weight = 0.5 * (np.exp(-((nd / sigma[:, None]) ** 2)) + np.exp(-((nd / sigma[nbr]) ** 2)))
    src = np.repeat(np.arange(n, dtype=np.int64), k)
    dst = nbr.reshape(-1).astype(np.int64)
    return feat, src, dst, weight.reshape(-1).astype(np.float32)


def _build_chunk(args: tuple[np.ndarray, SuperpixelParams]) -> list[tuple[np.ndarray, ...]]:
    images, params = args
    return [superpixel_graph(img, params) for img in images]


def build_split(images: np.ndarray, labels: np.ndarray, params: SuperpixelParams,
                workers: int | None = None, progress: bool = True,
                desc: str = "superpixels") -> GraphSplit:
    """Build the superpixel graphs of ``images`` (uint8, [n, H, W] or [n, H, W, 3])."""
    n = len(images)
    workers = max(1, min(workers or os.cpu_count() or 1, n)) if n else 1
    # Chunks big enough to amortise inter-process traffic, small enough to balance the load
    # and keep the progress bar moving.
    chunk = max(1, min(500, math.ceil(n / (workers * 8)))) if n else 1
    # fork avoids re-importing torch in every worker; workers only use numpy/skimage.
    ctx = mp.get_context("fork") if sys.platform.startswith("linux") else mp.get_context()
    pool_or_none = ctx.Pool(workers) if workers > 1 else nullcontext()
    chunks = ((images[start:start + chunk], params) for start in range(0, n, chunk))
    results: list[tuple[np.ndarray, ...]] = []
    with tqdm(total=n, desc=desc, disable=not progress, unit="img") as bar, pool_or_none as pool:
        for part in (pool.imap if pool else map)(_build_chunk, chunks):
            results.extend(part)
            bar.update(len(part))
    graphs = [Graph(torch.from_numpy(src), torch.from_numpy(dst), len(feat),
                    ndata={"feat": torch.from_numpy(feat)},
                    edata={"feat": torch.from_numpy(weight).reshape(-1, 1)})
              for feat, src, dst, weight in results]
    targets = list(torch.as_tensor(np.asarray(labels, dtype=np.int64)).reshape(-1, 1).unbind(0))
    return GraphSplit(graphs, targets)


# --------------------------------------------------------------------------- cache


def _cache_stem(name: str, params: SuperpixelParams, max_graphs: int | None) -> str:
    subset = "full" if max_graphs is None else f"first{max_graphs}"
    return f"{name}_{params.tag()}_{subset}"


def _file_set(cache_dir: Path, stem: str) -> FileSet:
    return FileSet({s: cache_dir / f"{stem}_{s}.npz" for s in SPLITS}, cache_dir / f"{stem}.json",
                   FORMAT_NAME, FORMAT_VERSION, CACHE_DIR_REMEDY)


def _cache_state(files: FileSet, params: SuperpixelParams,
                 source: dict) -> tuple[dict | None, str | None]:
    """:meth:`FileSet.state`, and ``(None, why)`` also for a cache built with other parameters
    or from other images than those of ``source`` (:func:`raw_source`)."""
    record, why = files.state()
    if record is None:
        return None, why
    counts = record.get("graphs")
    if record.get("params") != asdict(params) or not isinstance(counts, dict) \
            or set(counts) != set(SPLITS):
        return None, "was built with other parameters"
    # A cache serves without its raw files: it is compared with the images only where they are.
    built = record.get("source")
    if source["files"] and not (isinstance(built, dict) and built.get("files") == source["files"]):
        where = built.get("data_dir") if isinstance(built, dict) else None
        return None, f"was built from other images ({where}) than those in {source['data_dir']}"
    return record, None


def _split_pack(split: GraphSplit) -> GraphPack:
    pack = pack_graphs(split.graphs, node_keys=("feat",), edge_keys=("feat",))
    labels = [torch.as_tensor(y).reshape(-1) for y in split.labels]
    pack.graph["label"] = (torch.cat(labels) if labels else torch.zeros(0, dtype=torch.int64)
                           ).to(torch.int64).numpy()
    return pack


def _load_split(files: FileSet, split: str, n: int | None, expected: int,
                in_dim: int) -> GraphSplit:
    """The first ``n`` graphs (all when None) of a cached split of ``expected`` graphs;
    PackError when the file is not exactly what the meta json promises."""
    path = files.files[split]
    pack = files.read(split, expected, n)
    feat, weight = pack.node.get("feat"), pack.edge.get("feat")
    label = pack.graph.get("label")
    if len(pack) and (feat is None or feat.dtype != np.float32 or feat.ndim != 2
                      or feat.shape[1] != in_dim or weight is None
                      or weight.dtype != np.float32 or weight.shape[1:] != (1,)
                      or label is None or label.dtype.kind not in "iu"):
        raise PackError(f"{path} does not hold superpixel graphs of width {in_dim}")
    if not len(pack):
        return GraphSplit([], [])
    labels = torch.from_numpy(label.astype(np.int64)).reshape(-1, 1)
    try:  # garbled values: the cache is rebuilt like any unreadable one
        check_range(labels, 0, NUM_CLASSES, str(path), "label", item="graph")
        check_finite(torch.from_numpy(feat), str(path), "a node feature", item="node")
        check_finite(torch.from_numpy(weight), str(path), "an edge weight", item="edge")
    except DataError as exc:
        raise PackError(str(exc)) from None
    graphs = unpack_graphs(pack)
    return GraphSplit(graphs, list(labels.unbind(0)))


# --------------------------------------------------------------------------- loader


def _downloaded(name: str, source: str, data_dir: Path,
                max_graphs: int | None) -> dict[str, GraphSplit]:
    """DGL's ``<NAME>SuperPixelDataset`` (its training images split as ours) or PyG's
    ``GNNBenchmarkDataset`` (its own splits, under ``data_dir/pyg``) in our form: float32
    ``feat`` (N, IN_DIM), the intensity/RGB then the centre (y, x); float32 edge weights (E, 1)."""
    purpose = f"{name} with --data_source {source}"
    offline = "use --data_source raw with the raw images"
    if source == "dgl":
        where = f"dgl.data.{name}SuperPixelDataset"
        train, test = (download_dataset("dgl", f"{name}SuperPixelDataset", purpose, offline,
                                        raw_dir=str(data_dir), split=s) for s in ("train", "test"))

        def head(ds, start: int, stop: int) -> list:
            stop = min(stop, len(ds), start + (len(ds) if max_graphs is None else max_graphs))
            return [ds[i] for i in range(start, stop)]

        samples = {"train": head(train, NUM_VAL, len(train)), "val": head(train, 0, NUM_VAL),
                   "test": head(test, 0, len(test))}
    else:
        where = "torch_geometric.datasets.GNNBenchmarkDataset"
        samples = dict(dataset_splits("pyg", "GNNBenchmarkDataset", purpose, offline, max_graphs,
                                      root=str(data_dir / "pyg"), name=name))
    splits = {}
    for split, items in samples.items():
        graphs, labels = [], []
        for item in items:
            # PyG keeps the intensity/RGB in x and the centre in pos; ours is their concatenation.
            g, y = (from_dgl(item[0]), item[1]) if source == "dgl" else (from_pyg(item), item.y)
            parts = [g.ndata[k].float().reshape(g.num_nodes(), -1)
                     for k in ("feat", "pos") if k in g.ndata]
            feat = torch.cat(parts, 1) if parts else torch.zeros(g.num_nodes(), 0)
            if feat.shape[1] != IN_DIM[name]:
                raise DataError(f"{where}: node features of width {feat.shape[1]}, expected "
                                f"{IN_DIM[name]} (intensity/RGB, then the centre (y, x))")
            weight = g.edata.get("feat")
            weight = torch.ones(g.num_edges(), 1) if weight is None else weight.float()
            graphs.append(Graph(g.src, g.dst, g.num_nodes(), ndata={"feat": feat},
                                edata={"feat": weight.reshape(-1, 1)}))
            labels.append(torch.as_tensor(y, dtype=torch.int64).reshape(1))
        splits[split] = GraphSplit(graphs, labels)
        check_graph_split(splits[split], f"{source} {name} {split} split",
                          num_classes=NUM_CLASSES)
    return splits


def _build_raw(name: str, data_dir: Path, params: SuperpixelParams, max_graphs: int | None,
               workers: int | None, progress: bool) -> tuple[dict[str, GraphSplit], dict]:
    read = read_mnist if name == "MNIST" else read_cifar10
    train_x, train_y, test_x, test_y = read(data_dir)
    sources = {
        "train": (train_x[NUM_VAL:][:max_graphs], train_y[NUM_VAL:][:max_graphs]),
        "val": (train_x[:NUM_VAL][:max_graphs], train_y[:NUM_VAL][:max_graphs]),
        "test": (test_x[:max_graphs], test_y[:max_graphs]),
    }
    splits, times = {}, {}
    for split, (x, y) in sources.items():
        t0 = time.perf_counter()
        splits[split] = build_split(x, y, params, workers=workers, progress=progress,
                                    desc=f"{name} {split} superpixels")
        times[split] = time.perf_counter() - t0
        log.info("%s %s: built %d superpixel graphs in %.1fs", name, split, len(x), times[split])
    return splits, times


def load_superpixels(name: str, data_dir: str | os.PathLike,
                     cache_dir: str | os.PathLike | None = None, max_graphs: int | None = None,
                     source: str = "raw", workers: int | None = None, progress: bool = True,
                     write_cache: bool = True) -> GraphDataset:
    """MNIST or CIFAR10 superpixel graphs as a :class:`GraphDataset`.

    ``source="raw"`` builds from the raw images in ``data_dir`` (read only) and caches the result
    in ``cache_dir`` (default ``$AUTOGCN_CACHE/superpixels``, else ``~/.cache/autogcn/superpixels``:
    outside the source tree, so read-only checkouts work); later calls load the cache without
    touching ``data_dir``. ``write_cache=False`` (checkpoint evaluation, which writes nothing)
    reads a usable cache but neither creates, fills nor cleans one: without it the graphs are
    built in memory. ``max_graphs`` limits every split to its first N graphs. ``workers``
    processes build in parallel (default: all CPUs). ``source="dgl"`` converts DGL's built-in
    superpixel datasets (DGL profile), ``source="pyg"`` PyG's ``GNNBenchmarkDataset``.
    """
    if name not in NAMES:
        raise ValueError(f"unknown superpixel dataset {name!r}; valid names: {', '.join(NAMES)}")
    params = PARAMS[name]
    data_dir = Path(data_dir).expanduser()
    t0 = time.perf_counter()
    info: dict = {"source": source, "data_dir": str(data_dir), "max_graphs": max_graphs}
    if source in ("dgl", "pyg"):
        splits = _downloaded(name, source, data_dir, max_graphs)
        info.update(from_cache=False, build_time_s=time.perf_counter() - t0)
    elif source == "raw":
        root = Path(os.environ.get("AUTOGCN_CACHE") or Path.home() / ".cache" / "autogcn")
        cache = Path(root / "superpixels" if cache_dir is None else cache_dir).expanduser()
        info["params"] = asdict(params)
        splits = _load_raw(name, data_dir, cache, params, max_graphs, workers, progress, info, t0,
                           write_cache)
    else:
        raise ValueError(f"unknown superpixel source {source!r}; use one of {', '.join(SOURCES)}")
    ds = GraphDataset(name=name, train=splits["train"], val=splits["val"], test=splits["test"],
                      in_dim=IN_DIM[name], num_classes=NUM_CLASSES, num_edge_types=1)
    info["load_time_s"] = time.perf_counter() - t0
    info["splits"] = {k: v.stats() for k, v in ds.splits().items() if v is not None}
    ds.info = info
    return ds


def _load_raw(name: str, data_dir: Path, cache: Path, params: SuperpixelParams,
              max_graphs: int | None, workers: int | None, progress: bool, info: dict,
              t0: float, write_cache: bool = True) -> dict[str, GraphSplit]:
    """The splits from the cache, or built from the raw images and (``write_cache``) cached."""
    full = _file_set(cache, _cache_stem(name, params, None))
    subset = _file_set(cache, _cache_stem(name, params, max_graphs))
    # The full build also serves any subset: then only the first max_graphs graphs are read.
    candidates = [full] if max_graphs is None else [full, subset]
    problem = unreadable = None  # (meta, why) of an unusable cache, for the one log line
    source = raw_source(name, data_dir)
    for files in candidates:
        record, why = _cache_state(files, params, source)
        if record is None:
            problem = (files.meta, why) if why is not None else problem
            continue
        try:
            splits = {s: _load_split(files, s, max_graphs, int(record["graphs"][s]), IN_DIM[name])
                      for s in SPLITS}
        except (PackError, TypeError, ValueError) as exc:
            problem = unreadable = (files.meta, f"cannot be read ({' '.join(str(exc).split())})")
            if write_cache:
                files.remove()  # never tried again
            continue
        info.update(from_cache=True, cache_files={s: str(p) for s, p in files.files.items()},
                    build_time_s=record.get("build_time_s"),
                    split_build_time_s=record.get("split_build_time_s"),
                    cache_load_time_s=time.perf_counter() - t0)
        if unreadable is not None:  # the full cache was unreadable, a subset cache serves
            log.warning("%s: the superpixel cache %s %s; %s, using %s", name, *unreadable,
                        "removed it" if write_cache else "left it", files.meta)
        log.info("%s: loaded superpixel graphs from cache %s (%.1fs)", name, files.meta,
                 info["cache_load_time_s"])
        return splits

    if problem is not None:
        what = "it" if problem[0] == subset.meta else f"the first {max_graphs} graphs per split"
        log.warning("%s: the superpixel cache %s %s; building %s from the raw images in %s",
                    name, *problem, what, data_dir)
    splits, times = _build_raw(name, data_dir, params, max_graphs, workers, progress)
    build_time = sum(times.values())
    log.info("%s: superpixel build took %.1fs", name, build_time)
    record = {"name": name, "params": asdict(params), "max_graphs": max_graphs,
              "graphs": {s: len(sp) for s, sp in splits.items()},
              "build_time_s": build_time, "split_build_time_s": times,
              "workers": workers or os.cpu_count(), "data_dir": str(data_dir),
              "source": source, "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    info.update(from_cache=False, build_time_s=build_time, split_build_time_s=times)
    if not write_cache:
        log.info("%s: the graphs built in memory are not cached (this command writes nothing)",
                 name)
        return splits
    try:
        subset.write(((s, _split_pack(splits[s])) for s in SPLITS), record)
        info["cache_files"] = {s: str(p) for s, p in subset.files.items()}
    except OSError as exc:
        log.warning("%s: could not write the superpixel cache to %s (%s); the graphs "
                    "will be rebuilt next time", name, cache, " ".join(str(exc).split()))
    return splits


if __name__ == "__main__":  # it printed statistics once; scripts/diagnose.py does that now
    from data.common import retired_command

    retired_command("data.superpixels", "--sizes_only --dataset MNIST")

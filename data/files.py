"""Files the project writes and reads: path checks (:func:`output_problem`), the one atomic
write (:func:`write_atomic`, for results and checkpoints too), graph packs (a list of graphs as
one checked ``.npz``) and file sets (one pack per split plus a meta json written last). The
formats: docs/data.md, "Caches and generated files".
"""

from __future__ import annotations

import errno
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from autogcn.graph import Graph
from data.common import DataError, one_line

FREE_SPACE = "free some space there"
FULL_DISK = (errno.ENOSPC, errno.EDQUOT)  # errno of a full disk or an exceeded quota


class WriteError(OSError):
    """Writing a file failed (a full disk, a quota, an I/O error); the message names the file
    and its folder. A failure (exit code 1), not bad input."""


def write_error(err: OSError, path: Path, remedy: str = FREE_SPACE) -> WriteError:
    """The one-line :class:`WriteError` for ``err``, raised while writing ``path``; a full disk
    names the folder and ``remedy``."""
    if err.errno in FULL_DISK:
        what = "no space left on device" if err.errno == errno.ENOSPC else "disk quota exceeded"
        error = WriteError(f"{what} writing {path.parent} ({path.name}): {remedy}")
    else:
        error = WriteError(f"cannot write {path}: {err.strerror or err}")
    error.errno = err.errno
    return error


def write_atomic(path: str | os.PathLike, content: str | bytes | memoryview,
                 remedy: str = FREE_SPACE) -> None:
    """Write ``content`` to a temporary file beside ``path``, then rename it over ``path``: a
    reader never sees half a file, and a failed write leaves the previous ``path`` as it was.

    On any failure the temporary file is removed; an ``OSError`` becomes a :class:`WriteError`
    (a full disk: one line naming the folder and ``remedy``).
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    data = content.encode() if isinstance(content, str) else content
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException as err:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass  # the folder itself is gone or unwritable: nothing more can be done
        if isinstance(err, OSError) and not isinstance(err, WriteError):
            raise write_error(err, path, remedy) from None
        raise


def _limit(path: Path, name: str, default: int) -> int:
    try:
        return int(os.pathconf(path, name))
    except (OSError, ValueError):
        return default


def output_problem(path: str | os.PathLike, kind: str, suffixes: Sequence[str] | None = None,
                   writable: bool = True) -> str | None:
    """Why a ``kind`` (``"file"`` or ``"folder"``) cannot be written at ``path``, or ``None``.

    Nothing is created: the check looks at the nearest existing folder on the way (``~`` is
    expanded). Empty names, names longer than the file system allows, a folder given for a file
    (or a file for a folder; ``suffixes``: the endings a file name may have), a file or a
    broken link on the way, and (``writable``) unwritable folders are problems."""
    text = os.fspath(path)
    if not text.strip():
        return "must not be empty"
    if "\0" in text:
        return "contains a NUL character"
    out = existing = Path(os.path.expanduser(text)).absolute()
    while not os.path.exists(existing) and existing != existing.parent:
        # A link that cannot be followed (a loop, a link to nothing) does not "exist", so it
        # would pass as a folder to be created and mkdir would then fail with "File exists".
        if os.path.islink(existing):
            try:
                os.stat(existing)
            except OSError as err:
                why = ("a symbolic link loop" if err.errno == errno.ELOOP else
                       f"a symbolic link to {os.readlink(existing)}, which cannot be followed")
                why = f"{existing} is {why} ({err.strerror})"
                return why if Path(text) == out else f"{text}: {why}"
        existing = existing.parent
    if kind == "file" and existing == out:  # the file itself may exist (it is replaced)
        existing = out.parent
    name_max = _limit(existing, "PC_NAME_MAX", 255)
    long = [p for p in out.parts if len(os.fsencode(p)) > name_max]
    if long:
        return (f"the name {long[0][:40]}... is longer than the {name_max} bytes a file name may "
                "have here")
    if len(os.fsencode(str(out))) >= _limit(existing, "PC_PATH_MAX", 4096):
        return f"the path is too long ({len(str(out))} characters)"
    if kind == "file":
        if os.path.isdir(out) or text.endswith(("/", os.sep)):
            example = "out" + (suffixes[0] if suffixes else "")
            return f"{text} is a folder; give a file name, e.g. {Path(text) / example}"
        if suffixes and out.suffix.lower() not in suffixes:
            return f"{text}: the file name must end in {', '.join(suffixes)}"
    elif os.path.exists(out) and not os.path.isdir(out):
        return f"{text} is a file, not a folder"
    if not os.path.isdir(existing):
        return f"{text}: {existing} is a file, not a folder"
    if not writable:
        return None
    if kind == "file" and os.path.exists(out):
        return None if os.access(out, os.W_OK) else f"{text} exists and is not writable"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{text} is not writable" + ("" if existing == out else
                                            f" (its folder {existing} is not writable)")
    return None


# --------------------------------------------------------------------------------------------
# Graph packs
# --------------------------------------------------------------------------------------------


class PackError(DataError):
    """A graph pack cannot be read, or is not the kind/version asked for (one-line message)."""


@dataclass
class GraphPack:
    """The arrays of a graph pack (see the module docstring); ids as stored (local, unsigned)."""

    num_nodes: np.ndarray
    num_edges: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    node: dict[str, np.ndarray] = field(default_factory=dict)
    edge: dict[str, np.ndarray] = field(default_factory=dict)
    graph: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.num_nodes.shape[0])


def smallest_uint(max_value: int) -> np.dtype:
    """The smallest unsigned integer dtype that holds ``max_value``."""
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if max_value <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(f"{max_value} does not fit in 64 bits")


def pack_graphs(graphs: Sequence[Graph], node_keys: Sequence[str] = (),
                edge_keys: Sequence[str] = ()) -> GraphPack:
    """The pack arrays of ``graphs`` (their ``node_keys`` / ``edge_keys`` features)."""
    num_nodes = np.array([g.num_nodes() for g in graphs], dtype=np.int64)
    num_edges = np.array([g.num_edges() for g in graphs], dtype=np.int64)
    id_type = smallest_uint(max(int(num_nodes.max()) - 1, 0) if len(graphs) else 0)

    def cat(tensors: list[Tensor], empty: Tensor) -> np.ndarray:
        return torch.cat(tensors).numpy() if tensors else empty.numpy()

    none = torch.zeros(0, dtype=torch.int64)
    src = cat([g.src.cpu() for g in graphs], none).astype(id_type)
    dst = cat([g.dst.cpu() for g in graphs], none).astype(id_type)
    node = {k: cat([g.ndata[k].cpu() for g in graphs], none) for k in node_keys}
    edge = {k: cat([g.edata[k].cpu() for g in graphs], none) for k in edge_keys}
    return GraphPack(num_nodes, num_edges, src, dst, node, edge)


def write_graph_pack(path: str | os.PathLike, pack: GraphPack, fmt: str, version: int,
                     remedy: str = FREE_SPACE) -> None:
    """Write ``pack`` as an uncompressed npz at ``path`` with :func:`write_atomic`."""
    arrays = {"format": np.array(fmt), "version": np.array(version, dtype=np.int64),
              "num_nodes": np.asarray(pack.num_nodes, dtype=np.int64),
              "num_edges": np.asarray(pack.num_edges, dtype=np.int64),
              "src": pack.src, "dst": pack.dst}
    for prefix, group in (("node", pack.node), ("edge", pack.edge), ("graph", pack.graph)):
        arrays.update({f"{prefix}_{k}": np.ascontiguousarray(v) for k, v in group.items()})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_atomic(path, buffer.getbuffer(), remedy)


def read_graph_pack(path: str | os.PathLike, fmt: str, version: int,
                    take: int | None = None) -> GraphPack:
    """The first ``take`` graphs (all when None) of the pack at ``path``, checked.

    Raises :class:`PackError` (one line, naming the file) when the file is unreadable, of another
    format or version, or inconsistent.
    """
    path = Path(path)
    try:
        with open(path, "rb") as f, np.load(f, allow_pickle=False) as z:  # closed on errors too
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # truncated zip, garbage, pickled data, unreadable: all unusable
        raise PackError(f"{path} is not a readable graph file ({one_line(exc)})") from exc
    try:
        found = (str(arrays["format"]), int(arrays["version"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise PackError(f"{path} has no format/version entry: not a graph pack") from exc
    if found != (fmt, version):
        raise PackError(f"{path} is format {found[0]!r} version {found[1]}, expected {fmt!r} "
                        f"version {version}")
    try:
        pack = GraphPack(
            arrays["num_nodes"], arrays["num_edges"], arrays["src"], arrays["dst"],
            node={k[5:]: v for k, v in arrays.items() if k.startswith("node_")},
            edge={k[5:]: v for k, v in arrays.items() if k.startswith("edge_")},
            graph={k[6:]: v for k, v in arrays.items() if k.startswith("graph_")})
        _check_pack(pack)
    except (KeyError, ValueError) as exc:
        raise PackError(f"{path} is inconsistent ({one_line(exc)})") from exc
    return pack if take is None else _prefix(pack, take)


def _check_pack(pack: GraphPack) -> None:
    nodes, edges = pack.num_nodes, pack.num_edges
    if nodes.ndim != 1 or edges.shape != nodes.shape or nodes.dtype.kind not in "iu" \
            or edges.dtype.kind not in "iu" or (nodes.size and min(nodes.min(), edges.min()) < 0):
        raise ValueError("bad per-graph counts")
    total_n, total_e = int(nodes.sum()), int(edges.sum())
    if pack.src.shape != (total_e,) or pack.dst.shape != (total_e,) \
            or pack.src.dtype.kind != "u" or pack.dst.dtype.kind != "u":
        raise ValueError(f"edge arrays do not hold the {total_e} edges the counts say")
    if total_e:  # the largest endpoint of every graph with edges, below its node count
        has = edges > 0
        starts = (np.cumsum(edges) - edges)[has]
        for ids in (pack.src, pack.dst):
            if np.any(np.maximum.reduceat(ids, starts).astype(np.int64) >= nodes[has]):
                raise ValueError("an edge endpoint lies outside its graph")
    for group, rows, what in ((pack.node, total_n, "node"), (pack.edge, total_e, "edge"),
                              (pack.graph, nodes.size, "graph")):
        for key, value in group.items():
            if value.dtype.hasobject or value.ndim < 1 or value.shape[0] != rows:
                raise ValueError(f"{what}_{key} has shape {value.shape}, expected {rows} rows")


def _prefix(pack: GraphPack, take: int) -> GraphPack:
    g = min(int(take), len(pack))
    n_end, e_end = int(pack.num_nodes[:g].sum()), int(pack.num_edges[:g].sum())
    return GraphPack(pack.num_nodes[:g], pack.num_edges[:g], pack.src[:e_end], pack.dst[:e_end],
                     {k: v[:n_end] for k, v in pack.node.items()},
                     {k: v[:e_end] for k, v in pack.edge.items()},
                     {k: v[:g] for k, v in pack.graph.items()})


def unpack_graphs(pack: GraphPack, node_dtypes: Mapping[str, torch.dtype] | None = None,
                  edge_dtypes: Mapping[str, torch.dtype] | None = None) -> list[Graph]:
    """The graphs of ``pack`` (int64 ids; features cast to the given dtypes, else kept).

    The graphs' tensors are views into one tensor per array, so unpacking costs one copy.
    """
    node_dtypes, edge_dtypes = dict(node_dtypes or {}), dict(edge_dtypes or {})
    n_counts, e_counts = pack.num_nodes.tolist(), pack.num_edges.tolist()

    def tensor(a: np.ndarray, dtype: torch.dtype | None) -> Tensor:
        if a.dtype.kind == "u" and a.dtype != np.uint8:  # torch < 2.3 lacks uint16..uint64
            a = a.astype(np.int64)
        t = torch.from_numpy(np.ascontiguousarray(a))
        return t.to(dtype) if dtype is not None else t

    src = torch.split(torch.from_numpy(pack.src.astype(np.int64)), e_counts)
    dst = torch.split(torch.from_numpy(pack.dst.astype(np.int64)), e_counts)
    node = {k: torch.split(tensor(v, node_dtypes.get(k)), n_counts) for k, v in pack.node.items()}
    edge = {k: torch.split(tensor(v, edge_dtypes.get(k)), e_counts) for k, v in pack.edge.items()}
    return [Graph(src[i], dst[i], n, ndata={k: v[i] for k, v in node.items()},
                  edata={k: v[i] for k, v in edge.items()})
            for i, n in enumerate(n_counts)]


# --------------------------------------------------------------------------------------------
# File sets
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileSet:
    """One saved dataset: a graph pack per split (``files``) and the ``meta`` json, written
    last. ``remedy`` is what a full disk tells the user to do (e.g. name another folder)."""

    files: dict[str, Path]
    meta: Path
    fmt: str
    version: int
    remedy: str = FREE_SPACE

    def state(self) -> tuple[dict | None, str | None]:
        """``(record, None)``: a complete set in this format (the meta json's contents);
        ``(None, None)``: no set (no meta json: none written, or a write that did not finish);
        ``(None, why)``: a set that is there but cannot be used (to be rebuilt)."""
        if not self.meta.is_file():
            return None, None
        try:
            record = json.loads(self.meta.read_text())
        except (OSError, ValueError) as exc:
            return None, f"has an unreadable {self.meta.name} ({one_line(exc)})"
        if not isinstance(record, dict):
            return None, f"has a {self.meta.name} that is not a json object"
        found = (record.get("format"), record.get("format_version"))
        if found != (self.fmt, self.version):
            return None, (f"is format {found[0]!r} version {found[1]!r} (this code reads "
                          f"{self.fmt!r} version {self.version})")
        missing = [p.name for p in self.files.values() if not p.is_file()]
        if missing:
            return None, f"is incomplete ({', '.join(missing)} missing)"
        return record, None

    def read(self, split: str, expected: int, take: int | None = None) -> GraphPack:
        """The first ``take`` graphs (all when None) of ``split``, which the meta json says holds
        ``expected``; :class:`PackError` when the file does not hold them."""
        path = self.files[split]
        pack = read_graph_pack(path, self.fmt, self.version, take)
        want = expected if take is None else min(take, expected)
        if len(pack) != want:
            raise PackError(f"{path} holds {len(pack)} graphs, expected {want}")
        return pack

    def write(self, packs: Iterable[tuple[str, GraphPack]], record: dict[str, Any]) -> dict:
        """Write each ``(split, pack)`` of ``packs``, then the meta json: ``record`` plus the
        format, version and file names (returned). ``packs`` may be a generator that builds one
        split at a time and adds to ``record`` as it goes: the meta json is written after it."""
        self.meta.parent.mkdir(parents=True, exist_ok=True)
        self.meta.unlink(missing_ok=True)  # the set is incomplete while it is rewritten
        for split, pack in packs:
            write_graph_pack(self.files[split], pack, self.fmt, self.version, self.remedy)
        full = {"format": self.fmt, "format_version": self.version, **record,
                "files": {s: p.name for s, p in self.files.items()}}
        write_atomic(self.meta, json.dumps(full, indent=1) + "\n", self.remedy)
        return full

    def remove(self) -> None:
        """Delete the set, its meta json first (so that no half-deleted set looks complete)."""
        for path in (self.meta, *self.files.values()):
            path.unlink(missing_ok=True)

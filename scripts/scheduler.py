"""How the sweep runs its cells (:mod:`scripts.sweep` says what a cell is): one worker per device
slot, each cell a child process in its claimed folder, several cells on one device admitted by a
memory guard, signals passed on to the running cells. docs/reproducing.md tells what users see.
"""
from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import os
import queue
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.cli import cuda_device_count
from train import interrupts
from train.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent  # where the cells run
GIB = 1024 ** 3
# In every cell folder while a sweep runs the cell: an exclusive lock held by that sweep.
CLAIM_FILE = ".sweep.claim"
# What a main script prints when torch cannot allocate (CUDA or host), as it reaches stdout.log.
_OOM = re.compile(r"out of memory|OutOfMemoryError|can't allocate memory|MemoryError")
# A cell's exit codes after Ctrl-C or SIGTERM (a time limit): the main scripts' 130 / 143, or
# the negative signal number of a process the signal ended before it could say so.
INTERRUPT_CODES = {128 + s: s for s in (signal.SIGINT, signal.SIGTERM)}
POLL_S = 5.0  # how often a cell waiting for memory looks again (a cell ending wakes it too)


def say(line: str) -> None:
    """One time-stamped line of the sweep's progress on stdout."""
    print(f"[{time.strftime('%H:%M:%S')}] {line}", flush=True)


# ------------------------------------------------------------------------------- device slots
def parse_gpus(text: str, environ: dict[str, str] | None = None) -> list[str]:
    """The physical ids behind ``--gpus`` (ids as this process sees them), validated."""
    ids = [g.strip() for g in text.split(",") if g.strip()]
    if not ids or not all(g.isdigit() for g in ids):
        raise UsageError(f"--gpus expects comma-separated GPU ids like 0,1, got {text!r}")
    if len(set(ids)) != len(ids):
        raise UsageError(f"--gpus names a GPU twice: {text!r}")
    visible = (os.environ if environ is None else environ).get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return ids
    seen = [v.strip() for v in visible.split(",") if v.strip()]
    check_visible(text, ids, len(seen), f" under CUDA_VISIBLE_DEVICES={visible!r}")
    return [seen[int(g)] for g in ids]


def check_visible(text: str, ids: list[str], count: int, where: str = "") -> None:
    """:class:`UsageError` unless ``count`` visible GPUs hold every id of ``--gpus``: a cell
    given a GPU that is not there would run on the CPU (the main scripts fall back to it)."""
    if count == 0:
        raise UsageError(f"--gpus {text} but no CUDA GPU is visible{where} (leave out --gpus to "
                         "run the cells on the CPU, --jobs N at a time)")
    if any(int(g) >= count for g in ids):
        raise UsageError(f"--gpus {text}: {count} CUDA GPU(s) visible here{where} "
                         f"(ids 0-{count - 1})")


def device_slots(gpus: str | None, per_gpu: int | None, jobs: int | None,
                 probe: bool) -> list[str | None]:
    """One entry per slot: a GPU's physical id, or ``None`` for the CPU. ``probe``: check that
    the GPUs are there (a dry run may plan for another machine)."""
    if gpus is None:
        if per_gpu is not None:
            raise UsageError("--per_gpu is for cells on GPUs (with --gpus); on the CPU, --jobs N "
                             "runs N cells at a time")
        return [None] * (jobs or 1)
    if jobs is not None:
        raise UsageError("--jobs is for CPU cells; with --gpus, --per_gpu N runs N cells on "
                         "each GPU")
    ids = parse_gpus(gpus)
    if probe:
        check_visible(gpus, [g for g in gpus.split(",") if g.strip()], cuda_device_count())
    return [g for g in ids for _ in range(per_gpu or 1)]


# ------------------------------------------------------------------------------- memory guard
def free_bytes(device: str | None) -> int | None:
    """Free memory of a GPU (its physical id, as ``nvidia-smi -i`` takes it: the sweep holds no
    CUDA context) or, for ``None``, of the host; ``None`` when it cannot be read."""
    if device is None:
        try:
            found = re.search(r"^MemAvailable:\s+(\d+) kB", Path("/proc/meminfo").read_text(),
                              re.M)
        except OSError:
            return None
        return int(found.group(1)) * 1024 if found else None
    try:  # no nvidia-smi, an id it does not know: unguarded
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,"
                              "nounits", "-i", device], capture_output=True, text=True,
                             timeout=30, check=True).stdout
        return int(out.split()[0]) * 1024 ** 2
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def where(device: str | None) -> str:
    return "the CPU" if device is None else f"GPU {device}"


class MemoryGuard:
    """Admission of cells to devices: at most ``slots`` at a time on each, and a new one only
    while ``need`` bytes are free there (:func:`free_bytes`) or nothing else runs there
    (waiting could not help). Each decision is one ``memory guard:`` line."""

    def __init__(self, slots: dict[str | None, int], need: int,
                 read_free: Callable[[str | None], int | None] = free_bytes) -> None:
        self.limit = dict(slots)
        self.running = {d: 0 for d in slots}
        self.started = {d: 0 for d in slots}  # cells started on each device so far
        self.need, self.read_free = need, read_free
        self.cond = threading.Condition()
        self.unreadable: set[str | None] = set()

    def acquire(self, device: str | None, cell: str, stop: threading.Event
                ) -> tuple[int, int] | None:
        """Wait until ``cell`` may start on ``device``: a mark for :meth:`out_of_memory` (the
        cells running there and started so far), or ``None`` when ``stop`` is set first."""
        waited = False
        with self.cond:
            while not stop.is_set():
                if self.running[device] < self.limit[device]:
                    free = self._free(device)
                    low = free is not None and free < self.need
                    short = f"memory guard: {where(device)} has {(free or 0) / GIB:.1f} GiB " \
                            f"free, under --cell_memory {self.need / GIB:g}"
                    if low and self.running[device] == 0:
                        say(f"{short}; {cell} starts anyway, as nothing else runs there")
                    elif low and not waited:
                        say(f"{short}, with {self.running[device]} cell(s) running there: "
                            f"{cell} waits")
                        waited = True
                    elif waited and not low:
                        say(f"memory guard: {cell} starts on {where(device)}"
                            + ("" if free is None else f" ({free / GIB:.1f} GiB free)"))
                    if not low or self.running[device] == 0:
                        self.running[device] += 1
                        self.started[device] += 1
                        return self.running[device] - 1, self.started[device]
                self.cond.wait(timeout=POLL_S)
        return None

    def release(self, device: str | None) -> None:
        with self.cond:
            self.running[device] -= 1
            self.cond.notify_all()

    def out_of_memory(self, device: str | None, cell: str, mark: tuple[int, int]) -> bool:
        """``cell``, started at ``mark``, ran out of memory: True (queue it again, the device
        then taking one cell fewer) when others ran beside it (running then, or started since)."""
        with self.cond:
            beside = mark[0] + self.started[device] - mark[1]
            if beside == 0:
                return False
            self.limit[device] = max(1, min(self.limit[device], beside + 1) - 1)
            say(f"memory guard: {cell} ran out of memory beside {beside} other cell(s) on "
                f"{where(device)}: it is queued again, and {where(device)} now runs at most "
                f"{self.limit[device]} cell(s) at a time")
        return True

    def _free(self, device: str | None) -> int | None:
        if self.need <= 0:  # no guard: one cell per device
            return None
        free = self.read_free(device)
        if free is None and device not in self.unreadable:
            self.unreadable.add(device)
            say(f"memory guard: cannot read the free memory of {where(device)} "
                f"({'no /proc/meminfo' if device is None else 'no nvidia-smi'}): up to "
                f"{self.limit[device]} cell(s) at a time there, unguarded")
        return free


# ------------------------------------------------------------------------------- claims
def _current(path: Path, fd: int) -> bool:
    """Whether ``fd`` is the file at ``path`` now (not one removed meanwhile)."""
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except OSError:
        return False


@dataclass
class Claim:
    """A cell this process runs: an exclusive lock on ``<cell folder>/.sweep.claim``, which the
    kernel drops when the process ends, however it ends; its file (naming the holder, for the
    sweeps that skip the cell) may stay behind, and the next sweep takes it over, saying so."""

    path: Path
    fd: int

    def release(self) -> None:
        with contextlib.suppress(OSError):  # a read-only folder: the lock goes with the fd
            if _current(self.path, self.fd):
                self.path.unlink()
        os.close(self.fd)


def _holder(fd: int) -> str:
    """Who a claim file names: ``pid P on host H since T`` ("" for an empty file)."""
    return os.pread(fd, 4096, 0).decode(errors="replace").strip()


def _lock(fd: int, how: int = fcntl.LOCK_EX, tries: int = 5) -> bool:
    """A lock on ``fd`` without waiting for a holder; a few quick retries let a ``--list`` that
    looks at a claim (a shared lock held for microseconds) pass."""
    for attempt in range(tries):
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < tries:
                time.sleep(0.02)
    return False


def claim_cell(folder: Path) -> tuple[Claim | None, str]:
    """Claim a cell folder, never waiting: ``(claim, note)`` (``note`` names a dead holder whose
    file it took over) or ``(None, holder)``. Only a lock on the file in the folder now counts
    (one removed meanwhile is retried), so two sweeps can never both hold one cell."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CLAIM_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        locked = False
        try:
            if not _lock(fd):
                holder = _holder(fd) or "another process"
                os.close(fd)
                return None, holder
            locked = True
            if not _current(path, fd):
                os.close(fd)
                continue
            previous = _holder(fd)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on host {socket.gethostname()} since "
                          f"{time.strftime('%Y-%m-%d %H:%M:%S')}".encode(), 0)
        except BaseException:  # e.g. a full disk: no claim, and no claim file left behind
            if locked:
                Claim(path, fd).release()
            else:
                os.close(fd)
            raise
        return Claim(path, fd), (f"took over the claim of {previous}, which has ended"
                                 if previous else "")


def claim_holder(folder: Path) -> str | None:
    """Who holds the claim of a cell folder now (``None``: nobody), without claiming it."""
    try:
        fd = os.open(folder / CLAIM_FILE, os.O_RDONLY)
    except OSError:
        return None
    try:
        return None if _lock(fd, fcntl.LOCK_SH, tries=1) else _holder(fd) or "another process"
    except OSError:
        return None
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------- processes
def interrupt_code(code: int, status: str | None) -> int | None:
    """130 or 143 when a cell was interrupted (as its exit code or result's status says)."""
    signum = INTERRUPT_CODES.get(code) or (-code if -code in INTERRUPT_CODES.values() else None)
    signum = signum or (signal.SIGTERM if status == "interrupted" else None)
    return None if signum is None else 128 + signum


def run_cell(cmd: list[str], folder: Path, env: dict[str, str],
             procs: dict[int, subprocess.Popen], lock: threading.Lock) -> int:
    """Run a cell in the project root, its output appended to ``<folder>/stdout.log``."""
    with open(folder / "stdout.log", "a") as log:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        log.write(f"\n===== {stamp} sweep.py: {shlex.join(cmd)}\n")
        log.flush()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        with lock:
            procs[proc.pid] = proc
        try:
            return proc.wait()
        finally:
            with lock:
                procs.pop(proc.pid, None)


def ran_out_of_memory(log: Path, since: int) -> bool:
    """Whether a cell's ``stdout.log``, from byte ``since`` on, reports an allocation failure."""
    try:
        with open(log, "rb") as f:
            f.seek(since)
            return bool(_OOM.search(f.read().decode(errors="replace")))
    except OSError:
        return False


class Scheduler:
    """Runs jobs ``(cell, folder, planned)`` in their claimed folders on device slots (a device
    named N times runs up to N cells, a :class:`MemoryGuard` wanting ``cell_memory`` GiB free
    for each further one); unless set, ``OMP_NUM_THREADS`` splits the cores between them."""

    def __init__(self, devices: Sequence[str | None], base_env: dict[str, str],
                 cell_memory: float = 0.0,
                 read_free: Callable[[str | None], int | None] = free_bytes) -> None:
        self.devices = list(devices)
        self.base_env = {"OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1)
                                                    // len(self.devices))), **base_env}
        slots = {d: self.devices.count(d) for d in self.devices}
        self.guard = MemoryGuard(slots, int(cell_memory * GIB) if max(slots.values()) > 1
                                 else 0, read_free)
        self.work: queue.Queue = queue.Queue()
        self.codes: dict[str, int | str] = {}
        self.procs: dict[int, subprocess.Popen] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()  # a full disk, a signal: start no more cells
        self.retried: set[str] = set()  # cells queued again after running out of memory

    def run(self, jobs: Sequence[tuple[Any, Path, Any]], run_one: Callable[..., int | str]
            ) -> dict[str, int | str]:
        """Each job as ``run_one(cell, folder, planned, device, launch)``: by cell id, its exit
        code (1: the sweep could not run it) or why it did not run; those never started absent."""
        for job in jobs:
            self.work.put(job)
        threads = [threading.Thread(target=self._worker, args=(d, run_one), daemon=True)
                   for d in self.devices]
        for t in threads:
            t.start()
        try:
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(timeout=0.5)
                interrupts.check()  # Ctrl-C / SIGTERM only set a flag (train.interrupts)
        except KeyboardInterrupt as err:
            self._pass_on(interrupts.as_interrupted(err))
            raise
        return self.codes

    def _worker(self, device: str | None, run_one: Callable[..., int | str]) -> None:
        while not self.stop.is_set():
            try:
                job = self.work.get_nowait()
            except queue.Empty:
                return
            mark = self.guard.acquire(device, job[0].id, self.stop)
            if mark is None:
                return
            try:
                self._run_job(job, device, mark, run_one)
            finally:
                self.guard.release(device)

    def _run_job(self, job: tuple[Any, Path, Any], device: str | None, mark: tuple[int, int],
                 run_one: Callable[..., int | str]) -> None:
        """Run an admitted job in its claimed folder; again if it ran out of memory beside some."""
        cell, folder, planned = job
        log = folder / "stdout.log"
        start = log.stat().st_size if log.is_file() else 0
        try:
            claim, note = claim_cell(folder)
            if claim is None:
                self.codes[cell.id] = f"claimed by {note} (another sweep runs it)"
                return
            try:
                if note:
                    say(f"{cell.id}: {note}")
                env = self.base_env if device is None else {**self.base_env,
                                                            "CUDA_VISIBLE_DEVICES": device}
                code = self.codes[cell.id] = run_one(
                    cell, folder, planned, device,
                    lambda cmd: run_cell(cmd, folder, env, self.procs, self.lock))
            finally:
                claim.release()
            if isinstance(code, int) and code not in (0, *INTERRUPT_CODES) \
                    and cell.id not in self.retried and ran_out_of_memory(log, start) \
                    and self.guard.out_of_memory(device, cell.id, mark):
                self.retried.add(cell.id)
                del self.codes[cell.id]
                self.work.put(job)
        except Exception as err:  # never let one cell end the sweep silently
            self.codes[cell.id] = 1
            if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
                self.stop.set()
                text = (f"disk full: cannot write in {folder} ({cell.id}); free some space "
                        "there and rerun the sweep (no more cells are started)")
            elif isinstance(err, OSError):  # the cell's folder, log or claim
                text = f"{cell.id}: cannot write in {folder}: {err.strerror or err}"
            else:
                text = (f"{cell.id}: the sweep could not run it: {type(err).__name__}: "
                        f"{' '.join(str(err).split())}")
            print(f"error: {text}", file=sys.stderr, flush=True)

    def _pass_on(self, request: interrupts.Interrupted) -> None:
        """Pass the signal on (SIGTERM may have reached the sweep only; a cell that got it too
        takes the repeat as the same request) and wait for the cells to save their results."""
        print(f"{request.word}: waiting for the running cells to save their results", flush=True)
        self.stop.set()  # the workers start nothing more
        with self.lock:
            alive = list(self.procs.values())
        for p in alive:
            if p.poll() is None:
                p.send_signal(request.signum)
        for p in alive:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.terminate()

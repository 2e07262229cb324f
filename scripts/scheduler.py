"""How the sweep runs its cells: device slots, claims, the memory guard, processes and signals.

What a cell *is* (its command, whether a result is its own) is :mod:`scripts.sweep`'s; this
module runs jobs ``(cell, folder, planned state)``, knowing of a cell its ``id``:

* one worker per device slot (:func:`device_slots`), a GPU cell seeing its GPU only;
* a job's folder claimed while it runs (:func:`claim_cell`), so that two sweeps on one results
  folder never run the same cell;
* several cells on one device admitted by free memory, and one that runs out of memory beside
  others queued again with one cell fewer there (:class:`MemoryGuard`; each decision is one
  ``memory guard:`` line);
* each cell a child process appending to ``<folder>/stdout.log``; Ctrl-C or SIGTERM to the sweep
  (a Slurm time limit) starts no more cells and is passed on to the running ones, which save
  what they finished.
"""
from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import queue
import re
import shlex
import shutil
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


def say(line: str) -> None:
    """One time-stamped line of the sweep's progress on stdout."""
    print(f"[{time.strftime('%H:%M:%S')}] {line}", flush=True)


# ------------------------------------------------------------------------------- device slots
def parse_gpus(text: str, environ: dict[str, str] | None = None) -> list[str]:
    """The physical ids behind ``--gpus`` (ids as this process sees them), validated."""
    environ = os.environ if environ is None else environ
    ids = [g.strip() for g in text.split(",") if g.strip()]
    if not ids or not all(g.isdigit() for g in ids):
        raise UsageError(f"--gpus expects comma-separated GPU ids like 0,1, got {text!r}")
    if len(set(ids)) != len(ids):
        raise UsageError(f"--gpus names a GPU twice: {text!r}")
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return ids
    seen = [v.strip() for v in visible.split(",") if v.strip()]
    if not seen:
        raise UsageError(f"--gpus {text} but no CUDA GPU is visible (CUDA_VISIBLE_DEVICES is "
                         "empty; leave out --gpus to run the cells on the CPU)")
    missing = [g for g in ids if int(g) >= len(seen)]
    if missing:
        raise UsageError(f"--gpus {text}: CUDA_VISIBLE_DEVICES={visible!r} leaves "
                         f"{len(seen)} GPU(s) visible (ids 0-{len(seen) - 1})")
    return [seen[int(g)] for g in ids]


def cuda_device_count() -> int:
    """The CUDA GPUs this process can use (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_gpus(text: str) -> None:
    """:class:`UsageError` unless every id of ``--gpus`` is a CUDA GPU visible here: a cell
    given a GPU that is not there would run on the CPU (the main scripts fall back to it)."""
    count = cuda_device_count()
    if count == 0:
        raise UsageError(f"--gpus {text} but no CUDA GPU is visible (leave out --gpus to run "
                         "the cells on the CPU, --jobs N at a time)")
    absent = [g for g in text.split(",") if g.strip() and int(g) >= count]
    if absent:
        raise UsageError(f"--gpus {text}: {count} CUDA GPU(s) visible here (ids 0-{count - 1})")


def device_slots(gpus: str | None, per_gpu: int | None, jobs: int | None,
                 probe: bool) -> list[str | None]:
    """One entry per slot: a GPU's physical id, or ``None`` for the CPU. ``probe``: check that
    the GPUs are there (a dry run may plan for another machine)."""
    if gpus is not None:
        if jobs is not None:
            raise UsageError("--jobs is for CPU cells; with --gpus, --per_gpu N runs N cells "
                             "on each GPU")
        slots: list[str | None] = [g for g in parse_gpus(gpus) for _ in range(per_gpu or 1)]
        if probe:
            check_gpus(gpus)
        return slots
    if per_gpu is not None:
        raise UsageError("--per_gpu is for cells on GPUs (with --gpus); on the CPU, --jobs N "
                         "runs N cells at a time")
    return [None] * (jobs or 1)


def thread_share(environ: dict[str, str], slots: int) -> dict[str, str]:
    """The cells' environment: unless it is set, ``OMP_NUM_THREADS`` splits the cores between
    the cells that run at once."""
    env = dict(environ)
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // slots)))
    return env


def cell_env(base: dict[str, str], device: str | None) -> dict[str, str]:
    """The environment of a cell: pinned to its GPU (``device``: a physical id) or to none."""
    env = dict(base)
    if device is not None:
        env["CUDA_VISIBLE_DEVICES"] = device
    return env


# ------------------------------------------------------------------------------- memory guard
def free_bytes(device: str | None) -> int | None:
    """Free memory of a GPU (its physical id, as ``nvidia-smi -i`` takes it) or, for ``None``,
    of the host; ``None`` when it cannot be read."""
    if device is None:
        try:
            text = Path("/proc/meminfo").read_text()
        except OSError:
            return None
        found = re.search(r"^MemAvailable:\s+(\d+) kB", text, re.M)
        return int(found.group(1)) * 1024 if found else None
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,"
                              "nounits", "-i", device], capture_output=True, text=True,
                             timeout=30, check=True).stdout
        return int(out.split()[0]) * 1024 ** 2
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def ran_out_of_memory(log: Path, since: int) -> bool:
    """Whether a cell's ``stdout.log``, from byte ``since`` on, reports an allocation failure."""
    try:
        with open(log, "rb") as f:
            f.seek(since)
            return bool(_OOM.search(f.read().decode(errors="replace")))
    except OSError:
        return False


def where(device: str | None) -> str:
    return "the CPU" if device is None else f"GPU {device}"


class MemoryGuard:
    """Admission of cells to devices: at most ``slots`` at a time on each, and a new one only
    while ``need`` bytes are free there (:func:`free_bytes`: ``nvidia-smi`` for a GPU, so the
    sweep holds no CUDA context of its own; ``MemAvailable`` for the host) or nothing else runs
    there (waiting could not help)."""

    def __init__(self, slots: dict[str | None, int], need: int,
                 read_free: Callable[[str | None], int | None] = free_bytes,
                 poll_s: float = 5.0, say: Callable[[str], None] = print) -> None:
        self.limit = dict(slots)
        self.running = {d: 0 for d in slots}
        self.started = {d: 0 for d in slots}  # cells started on each device so far
        self.need, self.read_free, self.poll_s, self.say = need, read_free, poll_s, say
        self.cond = threading.Condition()
        self.unreadable: set[str | None] = set()

    def acquire(self, device: str | None, cell: str, stop: threading.Event) -> bool:
        """Wait until ``cell`` may start on ``device``; False when ``stop`` is set first.
        :meth:`company` then tells how many cells shared the device with it."""
        waited = False
        with self.cond:
            while not stop.is_set():
                if self.running[device] < self.limit[device]:
                    free = self._free(device)
                    if free is None or free >= self.need or self.running[device] == 0:
                        self._admit(device, cell, free, waited)
                        return True
                    if not waited:
                        self.say(f"memory guard: {where(device)} has {free / GIB:.1f} GiB free, "
                                 f"under --cell_memory {self.need / GIB:g}, with "
                                 f"{self.running[device]} cell(s) running there: {cell} waits")
                        waited = True
                self.cond.wait(timeout=self.poll_s)
        return False

    def _admit(self, device: str | None, cell: str, free: int | None, waited: bool) -> None:
        if free is not None and free < self.need:
            self.say(f"memory guard: {where(device)} has {free / GIB:.1f} GiB free, under "
                     f"--cell_memory {self.need / GIB:g}; {cell} starts anyway, as nothing "
                     "else runs there")
        elif waited:
            self.say(f"memory guard: {cell} starts on {where(device)} ({free / GIB:.1f} GiB "
                     "free)" if free is not None else
                     f"memory guard: {cell} starts on {where(device)}")
        self.running[device] += 1
        self.started[device] += 1

    def company(self, device: str | None) -> tuple[int, int]:
        """A mark taken when a cell starts (after :meth:`acquire`): pass it to :meth:`beside`."""
        with self.cond:
            return self.running[device] - 1, self.started[device]

    def beside(self, device: str | None, mark: tuple[int, int]) -> int:
        """How many other cells ran on ``device`` while the cell of ``mark`` did: those running
        when it started and those started since."""
        with self.cond:
            return mark[0] + self.started[device] - mark[1]

    def release(self, device: str | None) -> None:
        with self.cond:
            self.running[device] -= 1
            self.cond.notify_all()

    def out_of_memory(self, device: str | None, cell: str, beside: int) -> bool:
        """``cell`` ran out of memory with ``beside`` other cells on ``device``: True when it is
        to be queued again (it had company), the device then taking one cell fewer at a time."""
        if beside == 0:
            return False
        with self.cond:
            self.limit[device] = max(1, min(self.limit[device], beside + 1) - 1)
            self.say(f"memory guard: {cell} ran out of memory beside {beside} other cell(s) on "
                     f"{where(device)}: it is queued again, and {where(device)} now runs at most "
                     f"{self.limit[device]} cell(s) at a time")
        return True

    def _free(self, device: str | None) -> int | None:
        if self.need <= 0:  # no guard: one cell per device
            return None
        free = self.read_free(device)
        if free is None and device not in self.unreadable:
            self.unreadable.add(device)
            self.say(f"memory guard: cannot read the free memory of {where(device)} "
                     f"({'no /proc/meminfo' if device is None else 'no nvidia-smi'}): up to "
                     f"{self.limit[device]} cell(s) at a time there, unguarded")
        return free


# ------------------------------------------------------------------------------- claims
@dataclass
class Claim:
    """A cell this process runs: it holds an exclusive lock on ``<cell folder>/.sweep.claim``.

    The lock is the claim. The kernel drops it when the process ends, however it ends, so a
    crash never leaves a cell claimed; its file (naming the holder, for the messages of the
    sweeps that skip the cell) may stay behind, and the next sweep takes it over, saying so."""

    path: Path
    fd: int

    def release(self) -> None:
        try:
            if os.stat(self.path).st_ino == os.fstat(self.fd).st_ino:
                self.path.unlink()
        except OSError:
            pass  # gone already, or a read-only folder: the lock goes with the descriptor
        finally:
            os.close(self.fd)


def _holder(fd: int) -> str:
    """Who a claim file names: ``pid P on host H since T`` ("" for an empty file)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return ""
    if not isinstance(info, dict) or "pid" not in info:
        return ""
    return f"pid {info['pid']} on host {info.get('host')} since {info.get('since')}"


def _lock(fd: int, tries: int = 5) -> bool:
    """An exclusive lock on ``fd`` without waiting for a holder; a few quick retries let a
    ``--list`` that looks at the claim (a shared lock held for microseconds) pass."""
    for attempt in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < tries:
                time.sleep(0.02)
    return False


def claim_cell(folder: Path) -> tuple[Claim | None, str]:
    """Claim a cell folder for this process (``fcntl.flock`` on its claim file, never waiting).

    ``(claim, "")``; ``(claim, note)`` after taking over the claim file of a process that ended
    without releasing it; ``(None, holder)`` when another process holds the claim. The lock is
    taken on the file that is in the folder at that moment (a claim released and removed while
    we opened it is retried), so two sweeps can never both hold one cell."""
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
            try:
                current = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            if not current:
                os.close(fd)
                continue
            previous = _holder(fd)
            info = {"pid": os.getpid(), "host": socket.gethostname(),
                    "since": time.strftime("%Y-%m-%d %H:%M:%S")}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except BaseException:  # e.g. a full disk: no claim, and no claim file left behind
            try:
                if locked and os.stat(path).st_ino == os.fstat(fd).st_ino:
                    path.unlink()
                os.close(fd)
            except OSError:
                pass
            raise
        note = f"took over the claim of {previous}, which has ended" if previous else ""
        return Claim(path, fd), note


def claim_holder(folder: Path) -> str | None:
    """Who holds the claim of a cell folder now (``None``: nobody), without claiming it."""
    try:
        fd = os.open(folder / CLAIM_FILE, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(fd) or "another process"
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


# ------------------------------------------------------------------------------- processes
def interrupt_code(code: int, status: str | None) -> int | None:
    """130 or 143 when a cell that exited with ``code`` was interrupted (its exit code or its
    result's ``status`` says so), else ``None``."""
    signum = INTERRUPT_CODES.get(code) or (-code if -code in INTERRUPT_CODES.values() else None)
    if signum is None and status == "interrupted":
        signum = signal.SIGTERM
    return None if signum is None else 128 + signum


def run_cell(cmd: list[str], folder: Path, env: dict[str, str],
             procs: dict[int, subprocess.Popen], lock: threading.Lock) -> int:
    """Run one cell in the project root, appending its output to ``<folder>/stdout.log``;
    ``procs`` holds it while it runs (to pass a signal on)."""
    folder.mkdir(parents=True, exist_ok=True)
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


class Scheduler:
    """Runs jobs ``(cell, folder, planned)`` on device slots (a device named N times runs up to
    N cells at once, admitted by a :class:`MemoryGuard` wanting ``cell_memory`` GiB free for
    each further cell), each in its claimed folder."""

    def __init__(self, devices: Sequence[str | None], base_env: dict[str, str],
                 cell_memory: float = 0.0,
                 read_free: Callable[[str | None], int | None] = free_bytes) -> None:
        self.devices, self.base_env = list(devices), base_env
        slots = {d: self.devices.count(d) for d in self.devices}
        self.guard = MemoryGuard(slots, int(cell_memory * GIB) if max(slots.values()) > 1
                                 else 0, read_free, say=say)
        self.work: queue.Queue = queue.Queue()
        self.codes: dict[str, int | str] = {}
        self.procs: dict[int, subprocess.Popen] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()  # a full disk, a signal: start no more cells
        self.retried: set[str] = set()  # cells queued again after running out of memory

    def run(self, jobs: Sequence[tuple[Any, Path, Any]], run_one: Callable[..., int | str]
            ) -> dict[str, int | str]:
        """Run every job, as ``run_one(cell, folder, planned, device, launch)`` once its folder
        is claimed (``launch(cmd)``: :func:`run_cell` pinned to the slot's device). Returns each
        job's exit code (1 where the sweep itself could not run it) or why it was not run, by
        cell id; jobs never started (a full disk stops the sweep) are absent."""
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
                cell, folder, planned = self.work.get_nowait()
            except queue.Empty:
                return
            if not self.guard.acquire(device, cell.id, self.stop):
                return
            try:
                self._run_job(cell, folder, planned, device, run_one)
            finally:
                self.guard.release(device)

    def _run_job(self, cell: Any, folder: Path, planned: Any, device: str | None,
                 run_one: Callable[..., int | str]) -> None:
        """Run one admitted job; queue it again when it ran out of memory beside others."""
        mark = self.guard.company(device)
        log = folder / "stdout.log"
        start = log.stat().st_size if log.is_file() else 0
        try:
            code = self.codes[cell.id] = self._claimed(cell, folder, planned, device, run_one)
            if isinstance(code, int) and code not in (0, *INTERRUPT_CODES) \
                    and cell.id not in self.retried and ran_out_of_memory(log, start) \
                    and self.guard.out_of_memory(device, cell.id,
                                                 self.guard.beside(device, mark)):
                self.retried.add(cell.id)
                del self.codes[cell.id]
                self.work.put((cell, folder, planned))
        except OSError as err:  # the cell's folder, log or claim cannot be written
            self.codes[cell.id] = 1
            if err.errno in (errno.ENOSPC, errno.EDQUOT):
                self.stop.set()
                print(f"error: disk full: cannot write in {folder} ({cell.id}); free some "
                      "space there and rerun the sweep (no more cells are started)",
                      file=sys.stderr, flush=True)
            else:
                print(f"error: {cell.id}: cannot write in {folder}: {err.strerror or err}",
                      file=sys.stderr, flush=True)
        except Exception as err:  # never let one cell end the sweep silently
            self.codes[cell.id] = 1
            text = " ".join(str(err).split()) or type(err).__name__
            print(f"error: {cell.id}: the sweep could not run it: {type(err).__name__}: "
                  f"{text}", file=sys.stderr, flush=True)

    def _claimed(self, cell: Any, folder: Path, planned: Any, device: str | None,
                 run_one: Callable[..., int | str]) -> int | str:
        claim, note = claim_cell(folder)
        if claim is None:
            return f"claimed by {note} (another sweep runs it)"
        try:
            if note:
                say(f"{cell.id}: {note}")
            env = cell_env(self.base_env, device)
            return run_one(cell, folder, planned, device,
                           lambda cmd: run_cell(cmd, folder, env, self.procs, self.lock))
        finally:
            claim.release()

    def _pass_on(self, request: interrupts.Interrupted) -> None:
        """Pass the signal on and wait for the running cells. SIGTERM (kill, a Slurm time
        limit) may have reached this process only; a cell that got it already (Ctrl-C reaches
        the terminal's whole process group) takes the repeat as the same request. The cells
        record their finished runs as "interrupted"."""
        print(f"{request.word}: waiting for the running cells to save their results", flush=True)
        self.stop.set()  # workers waiting for memory start nothing more
        while not self.work.empty():
            self.work.get_nowait()
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

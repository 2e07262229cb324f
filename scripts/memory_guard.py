"""Several cells on one device, within its memory: the sweep's ``--per_gpu N`` and ``--jobs N``.

The sweep runs one worker per slot (``--gpus 0,1 --per_gpu 4``: four slots on each GPU;
``--jobs 2``: two on the CPU). Before a slot starts a cell, :class:`MemoryGuard` reads the
device's free memory (``nvidia-smi`` for a GPU, so the sweep holds no CUDA context of its own;
``MemAvailable`` for the host) and lets the cell start only while at least ``--cell_memory``
GiB are free, or when nothing else runs there (waiting could not help). A cell that still runs
out of memory beside others is queued again, once, and its device then runs one cell fewer at a
time. Every such decision is one line on stdout, starting ``memory guard:``.
"""

from __future__ import annotations

if not __package__:  # as every file in scripts/ (imports nothing of the project itself)
    import _project_root  # noqa: F401

import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

GIB = 1024 ** 3
# What a main script prints when torch cannot allocate (CUDA or host), as it reaches stdout.log.
_OOM = re.compile(r"out of memory|OutOfMemoryError|can't allocate memory|MemoryError")


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
    while ``need`` bytes are free there (:func:`free_bytes`, replaceable for tests)."""

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
                        if free is not None and free < self.need:
                            self.say(f"memory guard: {where(device)} has {free / GIB:.1f} GiB "
                                     f"free, under --cell_memory {self.need / GIB:g}; {cell} "
                                     "starts anyway, as nothing else runs there")
                        elif waited:
                            self.say(f"memory guard: {cell} starts on {where(device)} "
                                     f"({free / GIB:.1f} GiB free)" if free is not None else
                                     f"memory guard: {cell} starts on {where(device)}")
                        self.running[device] += 1
                        self.started[device] += 1
                        return True
                    if not waited:
                        self.say(f"memory guard: {where(device)} has {free / GIB:.1f} GiB free, "
                                 f"under --cell_memory {self.need / GIB:g}, with "
                                 f"{self.running[device]} cell(s) running there: {cell} waits")
                        waited = True
                self.cond.wait(timeout=self.poll_s)
        return False

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

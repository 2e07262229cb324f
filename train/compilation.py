"""``torch.compile`` for the dense parts of a net (``params.compile``): only the methods a module
names in ``compiled_regions``, once per class, with dynamic shapes; whatever fails to compile
runs eagerly, with one log line. The regions and the measurements: docs/performance.md.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from train.errors import first_line

log = logging.getLogger("autogcn")

SETTINGS = ("auto", "on", "off")
ALIASES = {True: "on", False: "off"}
#: Nested compiled regions, compiled module parameters as inputs (one graph per class, not per
#: instance) and its dynamic-shape handling need this release.
MIN_TORCH = (2, 5)
#: ``"auto"`` compiles a run of at least this many optimiser steps (epochs x batches): below
#: it, the warm-up (tens of seconds on a CPU) costs more than the fused kernels save.
MIN_STEPS = 2000
#: Compiled variants allowed per region (see :func:`_raise_recompile_limit`).
RECOMPILE_LIMIT = 64

_probed: dict[str, str | None] = {}  # device type -> None (works) or why not


def torch_version() -> tuple[int, int]:
    major, minor = torch.__version__.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def unavailable(device: torch.device) -> str | None:
    """Why compiling a tiny function fails on ``device`` (a missing C++ compiler, a broken
    Triton), once per device type; ``None``: it works."""
    if torch_version() < MIN_TORCH:
        return f"torch {torch.__version__} is older than {'.'.join(map(str, MIN_TORCH))}"
    if device.type not in _probed:
        try:
            probe = torch.compile(lambda x: torch.sigmoid(x) * x + 1, dynamic=True)
            probe(torch.ones(3, device=device))
            _probed[device.type] = None
        except Exception as err:  # any failure means eager; the reason is logged, not raised
            _probed[device.type] = _first_line(err)
    return _probed[device.type]


def decide(setting: str | bool, device: torch.device, steps: int,
           deterministic: bool = False) -> tuple[bool, str]:
    """Whether to compile, and why in words, for ``setting`` and a run of ``steps`` steps."""
    setting = ALIASES.get(setting, setting)
    if setting == "off":
        return False, "off (params.compile)"
    if setting == "auto" and deterministic:
        return False, "off (auto: params.deterministic is on)"
    if setting == "auto" and steps < MIN_STEPS:
        return False, f"off (auto: {steps} optimiser steps, fewer than {MIN_STEPS})"
    why_not = unavailable(device)
    if why_not is not None:
        return False, f"off, eager fallback: {why_not}"
    return True, f"on ({setting})"


def prepare(net: nn.Module, name: str, setting: str | bool, device: torch.device, steps: int,
            deterministic: bool = False) -> tuple[bool, str]:
    """:func:`decide`, then :func:`compile_regions`; whether ``net`` now runs compiled, and why."""
    compiled, why = decide(setting, device, steps, deterministic)
    if compiled and not compile_regions(net):
        return False, f"off: no part of {name} is compiled (docs/performance.md)"
    return compiled, why


def compile_regions(net: nn.Module) -> int:
    """Compile, in place, every method a module names in ``compiled_regions``; how many."""
    _raise_recompile_limit()
    replaced = 0
    for module in net.modules():
        for name in getattr(type(module), "compiled_regions", ()):
            setattr(module, name, _Region(module, name))
            replaced += 1
    return replaced


def _raise_recompile_limit() -> None:
    """A net can pass torch's default of 8 compiled variants per region (one per width, mode and
    set of inputs), after which the region would silently run eagerly."""
    config = torch._dynamo.config
    name = "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit"
    setattr(config, name, max(getattr(config, name), RECOMPILE_LIMIT))


def eager(net: nn.Module) -> None:
    """Undo :func:`compile_regions`: every module runs its own methods again."""
    for module in net.modules():
        for name in getattr(type(module), "compiled_regions", ()):
            module.__dict__.pop(name, None)


def is_compiled(net: nn.Module) -> bool:
    """Whether any region of ``net`` runs compiled (not replaced, or fallen back to eager)."""
    return any(getattr(m.__dict__.get(name), "compiled", None) is not None
               for m in net.modules() for name in getattr(type(m), "compiled_regions", ()))


class _Region:
    """A module's method compiled; it runs eagerly for good, logged once, if the compiler fails."""

    def __init__(self, module: nn.Module, name: str) -> None:
        self.module, self.name = module, name
        self.eager = getattr(type(module), name).__get__(module)
        self.compiled: Callable | None = torch.compile(self.eager, dynamic=True)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.compiled is None:
            return self.eager(*args, **kwargs)
        try:
            return self.compiled(*args, **kwargs)
        except Exception as err:
            if not _compiler_error(err):
                raise
            # The compiler also reports errors of the inputs (a wrong shape) as its own: the
            # eager call raises those itself, and the region stays compiled.
            out = self.eager(*args, **kwargs)
            log.warning("compile: %s.%s failed (%s); it runs eagerly from now on",
                        type(self.module).__name__, self.name, _first_line(err))
            self.compiled = None
            return out

    def __deepcopy__(self, memo: dict) -> _Region:
        """The copy of a module gets its own region, bound to the copy (the code is shared)."""
        module = copy.deepcopy(self.module, memo)
        region = _Region(module, self.name)
        if self.compiled is None:
            region.compiled = None
        return region


def _compiler_error(err: BaseException) -> bool:
    """An exception raised by the compiler stack (dynamo, AOTAutograd, inductor)."""
    from torch._dynamo.exc import TorchDynamoException

    if isinstance(err, TorchDynamoException):
        return True
    module = type(err).__module__ or ""
    return module.startswith(("torch._dynamo", "torch._inductor", "torch._functorch"))


def _first_line(err: BaseException) -> str:
    """The exception's type and the first line of its message."""
    name, line = type(err).__name__, first_line(err)
    return name if line == name else f"{name}: {line}"


class WarmUp:
    """The compile warm-up: how much longer a compiled run's first epoch took than its second."""

    def __init__(self, active: bool) -> None:
        self.active, self.first, self.seconds = active, None, None

    def epoch_done(self, seconds: float) -> None:
        if not self.active:
            return
        if self.first is None:
            self.first = seconds
            return
        self.active = False
        self.seconds = max(self.first - seconds, 0.0)
        log.info("compile: warm-up %.1f s (first epoch %.1f s, second %.1f s)", self.seconds,
                 self.first, seconds)

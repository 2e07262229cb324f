"""The benchmarks, one command: ``python -m scripts.bench SUBCOMMAND [options]``; ``--help``
lists the subcommands (:data:`SUBCOMMANDS`), ``SUBCOMMAND --help`` one's options, and
docs/performance.md the figures they gave. Bad input exits 2 with one line, Ctrl-C 130.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from train.interrupts import startup

#: Subcommand -> (its module, what it measures). A benchmark is a module with ``main(argv)``,
#: run as every tool is (``train/errors.py``: exit codes, one line for bad input); adding one is
#: a line here.
SUBCOMMANDS = {
    "autogcn": ("scripts.bench.autogcn", "AutoGCN's training epoch against GCN's"),
    "models": ("scripts.bench.models", "every model's training epoch relative to GCN's"),
    "layers": ("scripts.bench.layers", "one AutoGCN and one GCN layer against their floors"),
    "state": ("scripts.bench.state", "what saving a run's state after every epoch costs"),
    "conv": ("scripts.bench.conv", "AutoGCNConv beside PyG's GCNConv on PubMed, and its floor"),
}
PROG = "python -m scripts.bench"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark the first argument names; returns its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage: {PROG} {{{','.join(SUBCOMMANDS)}}} [options]\n\n"
              + "\n".join(f"  {name:<8} {what}" for name, (_, what) in SUBCOMMANDS.items())
              + f"\n\n{PROG} SUBCOMMAND --help lists its options")
        return 0
    if not argv or argv[0] not in SUBCOMMANDS:
        given = f"unknown benchmark {argv[0]!r}" if argv else "no benchmark given"
        print(f"error: {given}: choose one of {', '.join(SUBCOMMANDS)} (see {PROG} --help)",
              file=sys.stderr)
        return 2
    with startup("nothing was measured"):
        module = importlib.import_module(SUBCOMMANDS[argv[0]][0])
        from train.errors import run_tool
    return run_tool(module.main, argv[1:])


if __name__ == "__main__":
    sys.exit(main())

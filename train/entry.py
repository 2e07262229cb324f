"""The main scripts' one entry: their libraries load inside :func:`train.interrupts.startup`
(a Ctrl-C while torch loads is one line, exit 130), then :func:`train.runner.main` runs."""

import sys

from train.interrupts import startup


def run(task: str, description: str) -> None:
    """Run the experiment of ``task`` (the name of a :mod:`train.tasks` constant) and exit with
    its code."""
    with startup("stopped before training started"):
        from train import tasks
        from train.runner import main
    sys.exit(main(getattr(tasks, task), description=description))

"""Lets ``python scripts/NAME.py`` work like ``python -m scripts.NAME``.

Run as a file, a script's folder (``scripts/``) is first on ``sys.path`` and the project's
packages (``scripts``, ``train``, ``data``...) cannot be imported. Every script starts with::

    if not __package__:  # run as a file: python scripts/NAME.py
        import _project_root  # noqa: F401

which imports this module from that folder; it puts the project root in the folder's place.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = str(HERE.parent)

if sys.path and sys.path[0] and Path(sys.path[0]).resolve() == HERE:
    sys.path[0] = ROOT
elif ROOT not in sys.path:
    sys.path.insert(0, ROOT)

"""The results pipeline, one command: ``python -m scripts.report`` (:mod:`.__main__`), over
:mod:`.cells` (ours and the paper's per cell), :mod:`.tables`, :mod:`.records` (the committed
evidence), :mod:`.reproduction` (the report in ``docs/results.md``) and :mod:`.figures`."""

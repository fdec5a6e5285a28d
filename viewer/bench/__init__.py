"""Viewer timings: ``python -m viewer.bench.frame`` (whole displayed frames, headless or in a window)
and ``python -m viewer.bench.render`` (``Viewer.tick`` with the panel, in a window)."""

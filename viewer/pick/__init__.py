"""Picking: which item is under the pointer (``picker.py``: a ray test on the host, ``ray.py``, or the
same test in CUDA over the buffer the device wrote, ``device.py``; a field's cell by arithmetic; a
plot's point from ImPlot), and what the viewer shows of it (``tooltip.py``: the hover tooltip, the
pinned item's window and its highlight, the CPU and GPU values side by side under verification)."""

"""The viewer's GPU plumbing: CUDA–GL interop (interop.py) and the choice of EGL driver (egl.py).

Nothing here imports CuPy or cuda-bindings at import time: a machine without a GPU loads it too.
"""

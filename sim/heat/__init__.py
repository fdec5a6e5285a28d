"""The DLI heat-conduction stencil: a 2D five-point explicit step on float32, boundary held fixed.

``course`` holds the DLI programme's constants, initial field (glibc rand) and check;
``stencil_cpu`` the CPU twin (numba); ``stencil.cu`` every GPU variant (global, shared, pitched,
temporal), built as ``kernels`` lists and launched by ``gpu`` (CuPy); ``cli`` the ``heat``
command and ``bench`` the benchmark.
"""

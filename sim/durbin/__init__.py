"""The Levinson-Durbin recursion (PolyBench ``durbin``, versions 3.2 and 4.x; spec: durbin.md).

``inputs`` makes the right-hand sides (PolyBench's inits, AR(p) autocorrelations from reflection
coefficients, AR(1)); ``durbin_cpu`` is the CPU twin (numba, C summation order, bit-identical to the
C code) with a step-at-a-time solver and a batched solver; ``polybench`` prints each version's dump
and the course's hash; ``durbin.cu`` holds every GPU kernel (two launches per step, one persistent
launch on a thread-block cluster or a cooperative grid, batched systems), built as ``kernels`` lists
and launched by ``gpu`` (CuPy); ``layout`` says which CUDA block owns which entries of y; ``lpc``
is batched linear prediction of a PCM WAV file; ``cli`` the ``durbin`` and ``lpc`` commands and
``bench`` the benchmark.
"""

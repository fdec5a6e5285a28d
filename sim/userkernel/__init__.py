"""Your own kernel in a live stage: a user's ``.cu`` file replaces one stage a scene declares.

A scene declares its replaceable stages in its spec (``SceneSpec.user_stages``, ``UserStage``): the
kernel's C signature and each parameter's meaning, the launch rule, a template and how a result is
compared with the CPU twin. Code that knows one stage (its inputs, the CPU twin, the launch, the
comparison, how the scene hands its state in and takes the result back) is that scene's
``StageAdapter`` (``sim/<scene>/user_stage.py``); everything else is shared and lives here:

- ``adapter``: the adapter protocol and ``Comparison`` (what a check found, item by item);
- ``source``: the user's file read as text, compiled with NVRTC (the reference build's options and
  ``-lineinfo``), diagnostics with ``file:line``, the message and the offending line;
- ``guard``: output buffers poisoned and padded, the pads checked after each launch;
- ``live``: the live scene's stage run through the user's kernel in lockstep with the CPU twin (the
  viewer's ``--kernel-file``), and ``watch``: its file recompiled on save in the background;
- ``sandbox``: a worker process with a CUDA context of its own that runs the user's kernel, so a
  fault or a kernel that never returns costs the worker, never the caller (killed after a time limit,
  started again on the next request);
- ``grader``: ``check`` (fresh random inputs, edge sizes, a table, exit 0/1/2/3, ``--json``) and
  the ``bench --kernel-file`` timings beside the built-in variants;
- ``sanitizer``: one launch under NVIDIA's compute-sanitizer in a process of its own (``sanitize_child``),
  bounded, its report read and placed at the user's lines (``sanitizer_report``): ``check --sanitize``
  (``sanitize_check``) and the panel's "Run one step under the sanitizer";
- ``speed``: each variant's GB/s, GFLOP/s and % of the peaks and of the speed-of-light limit, from the
  stage's roofline model (``sim.gpu.roofline``) at the setup its adapter gives (``model_setup``);
- ``footprint`` and ``codegen``: what ptxas made of the kernel (registers, shared and local memory), the
  theoretical occupancy at the chosen block, and the PTX and SASS (``check --ptx/--sass``);
- ``commands``: the ``template``, ``check`` and ``bench --kernel-file`` commands main.py dispatches to;
  ``arguments``: their command lines.
"""

"""A scene built from the command line's request (``view``, ``run`` and every configuration ``bench`` times): the
options given, refused where they do not apply, and the resources checked before it is built."""

from __future__ import annotations

from typing import Any

from sim.cmdline.cli import UsageError
from sim.cmdline.requests import SceneRequest
from sim.gpu.backend import BackendUnavailable
from sim.registry import spec


def scene_kwargs(request: SceneRequest, s) -> dict:
    """Keyword arguments for the scene from the common options; options that do not apply are refused."""
    kwargs: dict[str, Any] = {"backend": request.backend}
    for name in ("preset", "seed"):
        if getattr(request, name) is not None:
            kwargs[name] = getattr(request, name)
    if request.count is not None:
        kwargs["n"] = request.count
    for name in ("variant", "block"):
        if getattr(request, name) is not None:
            kwargs[name] = getattr(request, name)
    for option in s.options:
        value = request.options.get(option.name)
        if value is not None:
            kwargs[option.name] = value
    return kwargs


def refuse_unused(request: SceneRequest, s, scene) -> None:
    """GPU-only options given for a scene whose GPU kernels will not run: refused, not ignored."""
    if scene.gpu_kernels_run():
        return
    hint = s.gpu.kernels_run_hint if s.gpu else ""
    unused = [f"--{o.name}" for o in s.options if o.gpu_only and request.options.get(o.name) is not None]
    if s.gpu and request.block is not None:
        unused.append("--block")
    if s.gpu and not s.gpu.cpu_variants and request.variant is not None:
        unused.append("--variant")
    if unused:
        verb = "applies" if len(unused) == 1 else "apply"
        raise UsageError(
            f"{' and '.join(unused)} {verb} to the {s.name} scene's GPU kernels, which do not run on the "
            f"{scene.backend.upper()} backend here ({hint})"
        )


def check_resources(request: SceneRequest, s, steps: int = 0) -> None:
    """Refuse (exit 2, with the estimate) a scene that cannot fit this machine, or ``steps`` of it that
    could not finish, before building it."""
    from sim.cmdline import resources
    from sim.gpu.backend import gpu_status

    preset_name = request.preset or s.default_preset
    preset = s.preset(preset_name) if preset_name else None
    count = request.count or (preset.count if preset else None)
    gpu = request.backend == "gpu" or (request.backend == "auto" and gpu_status().available)
    resources.check(resources.scene_estimate(s, count, gpu, steps, preset_name))


def make_scene(request: SceneRequest, steps: int = 0):
    """The scene of ``request``; ``steps``: how many it will run (refused when they could not finish)."""
    s = spec(request.scene_name)
    try:
        check_resources(request, s, steps)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        scene = s.create(**scene_kwargs(request, s))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except MemoryError as exc:  # a sound request too large for this machine
        raise BackendUnavailable(str(exc)) from None
    refuse_unused(request, s, scene)
    return scene

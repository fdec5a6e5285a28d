"""The panel's scene section: which scene, its preset, the physics backend (the GPU entry greyed
out with the reason), GPU notes and errors, and the item count of presets that take one."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import ERROR, GREY, SCENE, disabled_tooltip, item_width, tooltip, wrapped

BACKENDS = ("cpu", "gpu")


def gpu_advice(reason: str) -> tuple[str, str]:
    """(the cause in a few words, what to do about it) for a reason the GPU cannot be used."""
    text = reason.strip()
    lowered = text.lower()
    if "cupy is not installed" in lowered:
        return (
            text.split(";")[0],
            "Install the GPU extra: .venv/bin/pip install -e '.[gpu]' (NVIDIA driver R580+ "
            "for CUDA 13; with a CUDA 12 driver install cupy-cuda12x instead).",
        )
    if "no nvidia gpu" in lowered:  # no driver, or a driver without a GPU (sim.gpu.backend.nvidia_driver_problem)
        return (
            "no NVIDIA GPU or driver was found",
            "Everything runs on the CPU backend; the GPU controls need an NVIDIA GPU and its driver.",
        )
    if "nvidia driver did not start" in lowered:
        return (text.split(";")[0], "Check the driver with nvidia-smi; meanwhile everything runs on the CPU backend.")
    if "insufficient" in lowered or "driver version" in lowered or "driver is older" in lowered:
        return (
            "the NVIDIA driver is older than CuPy's CUDA",
            "Update the NVIDIA driver (R580+ for CUDA 13), or install the CuPy built for your driver's CUDA "
            "(cupy-cuda12x for CUDA 12).",
        )
    if (
        "no cuda device" in lowered
        or "no cuda-capable device" in lowered
        or "nodevice" in lowered
        or "no usable cuda device" in lowered
        and "driver" not in lowered
    ):
        return ("no NVIDIA GPU was found", "Everything runs on the CPU backend; the GPU controls need an NVIDIA GPU.")
    if "no gpu kernels" in lowered:
        return (text, "")
    if "compile" in lowered:
        return ("a kernel did not compile", "The CPU runs the scene; the error is above.")
    return (text, "")


class SceneSection(PanelSection):
    title = SCENE

    def __init__(self):
        self._count_choice: int | None = None
        self._count_source: tuple | None = None  # (scene, preset, target_n) the choice was taken from

    def draw(self, ctx: PanelContext) -> None:
        from sim.registry import SCENES

        ctl = ctx.controller
        scene, spec = ctl.scene, ctl.spec
        if imgui.begin_combo("scene", spec.name):
            for name, other in SCENES.items():
                if imgui.selectable(name, name == spec.name)[0]:
                    ctl.switch_scene(name)
                tooltip(other.title)
            imgui.end_combo()
        tooltip(spec.title)

        if imgui.begin_combo("preset", scene.preset):
            for preset in spec.presets:
                if imgui.selectable(preset.name, preset.name == scene.preset)[0]:
                    ctl.load_preset(preset.name)
                tooltip(preset.description + (f" (key {preset.key})" if preset.key else ""))
            imgui.end_combo()
        tooltip(spec.preset(scene.preset).description)

        gpu_reason = ctl.gpu.reason()
        if imgui.begin_combo("backend", scene.backend):
            for backend in BACKENDS:
                unavailable = gpu_reason if backend == "gpu" else None
                flags = imgui.SelectableFlags_.disabled if unavailable else 0
                label = f"{backend}  (unavailable)" if unavailable else backend
                if imgui.selectable(label, backend == scene.backend, flags)[0]:
                    ctl.gpu.set_backend(backend)
                disabled_tooltip(unavailable or "")
            imgui.end_combo()
        tooltip("a: physics on CPU / GPU")
        if gpu_reason:
            cause, advice = gpu_advice(gpu_reason)
            wrapped(GREY, f"GPU unavailable: {cause}" + (f". {advice.split('(')[0].strip()}" if advice else ""))
            tooltip(f"{gpu_reason}\n\n{advice}" if advice else gpu_reason)
        if scene.backend_note:
            wrapped(GREY, scene.backend_note)
        if scene.gpu_error:
            wrapped(ERROR, f"GPU error: {scene.gpu_error}")
        if scene.takes_count:
            self._count_slider(ctl)

    def _count_slider(self, ctl) -> None:
        scene = ctl.scene
        source = (ctl.spec.name, scene.preset, scene.target_n)
        if self._count_source != source or self._count_choice is None:
            self._count_source, self._count_choice = source, int(scene.target_n)
        lo, hi = (int(v) for v in scene.count_range)
        flags = imgui.SliderFlags_.always_clamp
        if hi > 100 * max(lo, 1):
            flags |= imgui.SliderFlags_.logarithmic
        imgui.set_next_item_width(item_width())
        _, self._count_choice = imgui.slider_int("##count", self._count_choice, lo, hi, f"%d {ctl.words.unit}", flags)
        # A stray click only moves the choice: reloading the preset waits for Apply, or for Enter
        # after typing a count (ctrl+click).
        entered = imgui.is_item_deactivated_after_edit() and _enter_pressed()
        tooltip("Apply (or Enter after ctrl+click typing) reloads the preset with this count")
        imgui.same_line()
        changed = self._count_choice != scene.target_n
        imgui.begin_disabled(not changed)
        clicked = imgui.button("Apply")
        imgui.end_disabled()
        if (entered or clicked) and changed:
            ctl.set_count(self._count_choice)
            self._count_source = None  # resync with what the scene accepted


def _enter_pressed() -> bool:
    return imgui.is_key_pressed(imgui.Key.enter, False) or imgui.is_key_pressed(imgui.Key.keypad_enter, False)

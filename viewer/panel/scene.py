"""The panel's scene section: which scene, its preset, the physics backend (the GPU entry greyed
out with the reason), GPU notes and errors, and the item count of presets that take one."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.style import ERROR, GREY, ITEM_WIDTH, disabled_tooltip, tooltip, wrapped

BACKENDS = ("cpu", "gpu")


class SceneSection:
    def __init__(self):
        self._count_choice: int | None = None
        self._count_source: tuple | None = None  # (scene, preset, target_n) the choice was taken from

    def draw(self, ctl) -> None:
        from sim.registry import SCENES

        scene, spec = ctl.scene, ctl.spec
        imgui.separator_text("Scene")
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

        gpu_reason = ctl.gpu_reason()
        if imgui.begin_combo("backend", scene.backend):
            for backend in BACKENDS:
                unavailable = gpu_reason if backend == "gpu" else None
                flags = imgui.SelectableFlags_.disabled if unavailable else 0
                label = f"{backend}  (unavailable)" if unavailable else backend
                if imgui.selectable(label, backend == scene.backend, flags)[0]:
                    ctl.set_backend(backend)
                disabled_tooltip(unavailable or "")
            imgui.end_combo()
        tooltip("a: physics on CPU / GPU")
        if gpu_reason:
            # First clause only, the whole reason on hover: CUDA errors can be long.
            wrapped(GREY, "GPU: " + gpu_reason.split(":")[0])
            tooltip(gpu_reason)
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
        imgui.set_next_item_width(ITEM_WIDTH)
        _, self._count_choice = imgui.slider_int("##count", self._count_choice, lo, hi,
                                                 f"%d {ctl.words.unit}", flags)
        released = imgui.is_item_deactivated_after_edit()
        tooltip("applies when released (reloads the preset); ctrl+click to type")
        imgui.same_line()
        changed = self._count_choice != scene.target_n
        imgui.begin_disabled(not changed)
        clicked = imgui.button("Apply")
        imgui.end_disabled()
        if (released or clicked) and changed:
            ctl.set_count(self._count_choice)
            self._count_source = None  # resync with what the scene accepted

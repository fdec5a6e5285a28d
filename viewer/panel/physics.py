"""The panel's physics section: the scene's sliders (``scene.params``) and its switches that are not
GPU controls."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.style import item_width, section, tooltip


def draw_physics_section(ctl) -> None:
    scene, spec = ctl.scene, ctl.spec
    switches = [t for t in spec.toggles if not t.gpu_only]
    if not scene.params and not switches:
        return
    if not section("Physics"):
        return
    imgui.push_item_width(item_width())
    for param in scene.params:
        value = ctl.param_value(param.name)
        if value is None:
            continue
        flags = imgui.SliderFlags_.logarithmic if param.log else 0
        changed, new = imgui.slider_float(param.label, value, param.lo, param.hi, param.fmt, flags)
        if changed:
            ctl.set_param(param.name, new)
        tooltip(param.help)
    imgui.pop_item_width()
    for toggle in switches:
        if imgui.checkbox(toggle.label, bool(scene.controls.toggles[toggle.name]))[0]:
            ctl.toggle(toggle.name)
        tooltip((f"{toggle.key}: " if toggle.key else "") + toggle.help)

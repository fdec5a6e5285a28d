"""The panel's physics section: the scene's sliders (``scene.params``) and its switches that are not
GPU controls."""

from __future__ import annotations

from imgui_bundle import imgui

from viewer.panel.section import PanelContext, PanelSection
from viewer.panel.style import PHYSICS, item_width, tooltip


def _switches(spec) -> list:
    return [t for t in spec.toggles if not t.gpu_only]


class PhysicsSection(PanelSection):
    title = PHYSICS

    def shows(self, ctx: PanelContext) -> bool:
        return bool(ctx.scene.params or _switches(ctx.scene.spec))

    def draw(self, ctx: PanelContext) -> None:
        _draw(ctx.controller)


def _draw(ctl) -> None:
    scene, spec = ctl.scene, ctl.spec
    switches = _switches(spec)
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

"""What the user sets on a scene besides its GPU knobs (``sim.framework.knobs``): the toggles, the pointer tool and
the sliders. The scene holds one (``Scene.controls``); a change reaches the scene through its hooks
``Scene.toggle_changed`` and ``Scene.param_changed``, and the sliders' values live in the scene's
``settings``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sim.contract import Param

if TYPE_CHECKING:
    from sim.framework.scene import Scene


class Controls:
    def __init__(self, scene: Scene):
        self.scene = scene
        spec = scene.spec
        self.toggles = {t.name: t.default for t in spec.toggles}
        self.tool_on = bool(spec.tool and spec.tool.default_on)
        self.tool_values = {p.name: p.lo + 0.5 * (p.hi - p.lo) for p in (spec.tool.params if spec.tool else ())}

    # --- toggles ---------------------------------------------------------------------------------
    def set_toggle(self, name: str, on: bool) -> None:
        scene = self.scene
        if name not in self.toggles:
            raise ValueError(f"{scene.spec.name} has no switch {name!r}")
        self.toggles[name] = bool(on)
        scene.toggle_changed(name)
        scene.checks.clear()

    # --- the pointer tool ---------------------------------------------------------------------------
    def set_tool(self, on: bool) -> None:
        if on and self.scene.spec.tool is None:
            raise ValueError(f"the {self.scene.spec.name} scene has no pointer tool")
        self.tool_on = bool(on)

    def set_tool_value(self, name: str, value: float) -> float:
        spec = self.scene.spec
        param = next((p for p in (spec.tool.params if spec.tool else ()) if p.name == name), None)
        if param is None:
            raise KeyError(f"{spec.name}'s tool has no setting {name!r}")
        value = _clamped(param, value, self.tool_values[name])
        self.tool_values[name] = value
        return value

    # --- sliders (``Scene.params``; their values are the scene's ``settings``) -------------------------
    def param_value(self, name: str) -> float:
        return float(getattr(self.scene.settings, name))

    def set_param(self, name: str, value: float) -> float:
        """Set a slider value, clamped to its range; NaN or junk keeps the old value. Returns the value kept
        (the scene's ``param_changed`` may round it)."""
        scene = self.scene
        param = next((p for p in scene.params if p.name == name), None)
        if param is None:
            raise KeyError(f"{scene.spec.name} has no parameter {name!r}")
        value = _clamped(param, value, self.param_value(name))
        setattr(scene.settings, name, value)
        return scene.param_changed(name, value)


def _clamped(param: Param, value, fallback: float) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return fallback
    if not math.isfinite(value):
        return fallback
    return min(max(value, param.lo), param.hi)

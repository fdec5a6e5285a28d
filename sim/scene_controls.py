"""What the user sets on a scene, for the base class (``sim.scene.Scene``): the GPU knobs (the scene's
``Knobs``, ``sim.knobs``), toggles, the pointer tool and the sliders. The scene holds ``knobs``, ``toggles``,
``tool_on``, ``tool_values``, ``settings``, ``spec`` and ``params``, and its hooks ``_toggle_changed`` and
``_invalidate_checks``."""

from __future__ import annotations

import math

from sim.contract import Param


class SceneControls:
    # --- GPU knobs: the scene's ``Knobs`` (sim.knobs) ------------------------------------------------
    @property
    def variant(self) -> str:
        return self.knobs.variant

    @property
    def block(self):
        return self.knobs.block

    @property
    def options(self) -> dict[str, str]:
        return self.knobs.options

    def set_variant(self, variant: str) -> None:
        self.knobs.set_variant(variant)

    def set_block(self, block) -> None:
        self.knobs.set_block(block)

    def set_option(self, name: str, value: str, apply: bool = True) -> None:
        self.knobs.set_option(name, value, apply)

    # --- toggles ---------------------------------------------------------------------------------
    def set_toggle(self, name: str, on: bool) -> None:
        if name not in self.toggles:
            raise ValueError(f"{self.spec.name} has no switch {name!r}")
        self.toggles[name] = bool(on)
        self._toggle_changed(name)
        self.checks.clear()

    # --- the pointer tool ---------------------------------------------------------------------------
    def set_tool(self, on: bool) -> None:
        if on and self.spec.tool is None:
            raise ValueError(f"the {self.spec.name} scene has no pointer tool")
        self.tool_on = bool(on)

    def tool_reach(self) -> float | None:
        """How far the tool acts around the pointer, in scene units; None when it has no such reach."""
        return None

    def set_tool_value(self, name: str, value: float) -> float:
        param = next((p for p in (self.spec.tool.params if self.spec.tool else ()) if p.name == name), None)
        if param is None:
            raise KeyError(f"{self.spec.name}'s tool has no setting {name!r}")
        value = _clamped(param, value, self.tool_values[name])
        self.tool_values[name] = value
        return value

    # --- sliders -------------------------------------------------------------------------------------
    def param_value(self, name: str) -> float:
        return float(getattr(self.settings, name))

    def set_param(self, name: str, value: float) -> float:
        """Set a slider value, clamped to its range; NaN or junk keeps the old value."""
        param = next((p for p in self.params if p.name == name), None)
        if param is None:
            raise KeyError(f"{self.spec.name} has no parameter {name!r}")
        value = _clamped(param, value, self.param_value(name))
        setattr(self.settings, name, value)
        return value


def _clamped(param: Param, value, fallback: float) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return fallback
    if not math.isfinite(value):
        return fallback
    return min(max(value, param.lo), param.hi)

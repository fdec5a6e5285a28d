"""The window's share of the settings (``viewer.settings``): what it captures on exit or on a scene
switch, and how it applies what was saved (each value through the scene's or the viewer's own
setters, so a value that no longer fits is refused or clamped there, one failure not stopping the
rest)."""

from __future__ import annotations

import math

import numpy as np

from viewer.panel import style
from viewer.record.recorder import CLOCKS, RecordOptions
from viewer.render.camera import OrbitCamera


# --- cameras ------------------------------------------------------------------------------------------
def camera_dict(camera: OrbitCamera) -> dict:
    return {
        "target": [float(v) for v in camera.target],
        "distance": float(camera.distance),
        "yaw": float(camera.yaw),
        "pitch": float(camera.pitch),
    }


def camera_from(saved, base: OrbitCamera) -> OrbitCamera | None:
    """``base`` (the view's default camera: its limits) moved to a saved place; None if malformed."""
    if not isinstance(saved, dict):
        return None
    try:
        target = np.array([float(v) for v in saved["target"]], dtype=np.float64)
        distance, yaw, pitch = (float(saved[k]) for k in ("distance", "yaw", "pitch"))
    except (KeyError, TypeError, ValueError):
        return None
    if target.shape != (3,) or not np.isfinite(target).all() or not all(map(math.isfinite, (distance, yaw, pitch))):
        return None
    camera = base.copy()
    camera.target = target
    camera.distance = min(max(distance, camera.min_distance), camera.max_distance)
    if camera.orbit_enabled:
        camera.yaw, camera.pitch = yaw % 360.0, min(max(pitch, -89.0), 89.0)
    return camera


# --- one scene ----------------------------------------------------------------------------------------
def capture_scene(scene, color_mode: str, camera: OrbitCamera | None, bookmarks: dict) -> dict:
    """What is kept of the scene the window shows."""
    spec = scene.spec
    saved = {
        "preset": scene.preset,
        "color_mode": color_mode,
        "params": {p.name: float(scene.controls.param_value(p.name)) for p in scene.params},
        "toggles": dict(scene.controls.toggles),
        "options": dict(scene.knobs.options),
        "color_ranges": {mode: list(span) for mode, span in scene.color_scales.ranges.items()},
        "bookmarks": {k: v for k, v in bookmarks.items() if k in _bookmark_names()},
    }
    if scene.takes_count:
        saved["count"] = int(scene.target_n)
    if spec.gpu is not None:
        saved["variant"] = scene.knobs.variant
        saved["block"] = list(scene.knobs.block) if isinstance(scene.knobs.block, tuple) else int(scene.knobs.block)
    if spec.tool is not None:
        saved["tool"] = {**scene.controls.tool_values, "on": bool(scene.controls.tool_on)}
    if camera is not None:
        saved["camera"] = camera_dict(camera)
    return saved


def _bookmark_names():
    from viewer.settings import BOOKMARKS

    return BOOKMARKS


def apply_scene(ctl, saved: dict) -> list[str]:
    """Apply a scene's saved values through the controller's scene; returns what could not be applied."""
    scene, spec, failed = ctl.scene, ctl.spec, []

    def attempt(what: str, action) -> None:
        try:
            action()
        except Exception as exc:  # noqa: BLE001  one stale value must not stop the others
            failed.append(f"{what} ({str(exc).strip() or type(exc).__name__})")

    if spec.gpu is not None:
        if isinstance(saved.get("variant"), str) and saved["variant"] != scene.knobs.variant:
            attempt(f"variant {saved['variant']}", lambda: scene.knobs.set_variant(saved["variant"]))
        block = saved.get("block")
        block = tuple(block) if isinstance(block, list) else block
        if block is not None and block != scene.knobs.block:
            attempt(f"block {block}", lambda: scene.knobs.set_block(block))
    for name, value in _table(saved, "options").items():
        if name in scene.knobs.options and value != scene.knobs.options[name]:
            attempt(f"{name} {value}", lambda name=name, value=value: scene.knobs.set_option(name, value))
    gpu_here = not scene.gpu_reason
    for toggle in spec.toggles:
        value = _table(saved, "toggles").get(toggle.name)
        changed = value != scene.controls.toggles[toggle.name]
        if isinstance(value, bool) and changed and (gpu_here or not toggle.gpu_only):
            attempt(toggle.label, lambda toggle=toggle, value=value: scene.controls.set_toggle(toggle.name, value))
    names = {p.name for p in scene.params}
    params = _table(saved, "params") if saved.get("preset") == scene.preset else {}  # a preset's, not another's
    for name, value in params.items():
        if name in names and _number(value):
            attempt(name, lambda name=name, value=value: scene.controls.set_param(name, float(value)))
    if spec.tool is not None:
        tool = _table(saved, "tool")
        for param in spec.tool.params:
            if _number(tool.get(param.name)):
                attempt(
                    param.name, lambda param=param: scene.controls.set_tool_value(param.name, float(tool[param.name]))
                )
        if isinstance(tool.get("on"), bool):
            attempt("tool", lambda: scene.controls.set_tool(tool["on"]))
    for mode, span in _table(saved, "color_ranges").items():
        if mode in scene.color_modes and isinstance(span, list) and len(span) == 2 and all(map(_number, span)):
            attempt(f"{mode} range", lambda mode=mode, span=span: scene.color_scales.set(mode, tuple(span)))
    mode = saved.get("color_mode")
    if isinstance(mode, str) and mode in scene.color_modes:
        ctl.set_color_mode(mode)
    return failed


def saved_bookmarks(saved: dict) -> dict:
    return {k: v for k, v in _table(saved, "bookmarks").items() if k in _bookmark_names() and isinstance(v, dict)}


# --- the window ---------------------------------------------------------------------------------------
def capture_window(settings, window_size, fullscreen: bool, ui_scale: float, record: RecordOptions) -> None:
    window = settings.table("window")
    if not fullscreen:  # the size to come back to is the windowed one
        window["width"], window["height"] = (int(v) for v in window_size)
    window["fullscreen"] = bool(fullscreen)
    window["ui_scale"] = float(ui_scale)
    settings.table("panel")["open"] = dict(style.layout)
    settings.data["record"] = {
        "clock": record.clock,
        "every": int(record.every),
        "fps": float(record.fps),
        "panel": bool(record.panel),
    }


def record_options(settings) -> RecordOptions:
    saved, options = settings.table("record"), RecordOptions()
    if saved.get("clock") in CLOCKS:
        options.clock = saved["clock"]
    if isinstance(saved.get("every"), int) and not isinstance(saved["every"], bool) and saved["every"] >= 1:
        options.every = saved["every"]
    if _number(saved.get("fps")) and 1 <= float(saved["fps"]) <= 240:
        options.fps = float(saved["fps"])
    if isinstance(saved.get("panel"), bool):
        options.panel = saved["panel"]
    return options


def panel_layout(settings) -> dict[str, bool]:
    return {k: v for k, v in _table(settings.table("panel"), "open").items() if isinstance(v, bool)}


def _table(saved: dict, name: str) -> dict:
    value = saved.get(name)
    return value if isinstance(value, dict) else {}


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

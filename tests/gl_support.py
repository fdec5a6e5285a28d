"""What several viewer tests share: whether an EGL context can be had, a scene sent through host uploads,
a device field read back from the texture CUDA-GL interop filled, and a plot point dragged headless."""

import dataclasses
import functools

import pytest

import viewer  # noqa: F401  first: it picks NVIDIA's EGL before any context loads libEGL


@functools.cache
def egl_problem() -> str | None:
    """None when a standalone EGL OpenGL 3.3 context opens here, else why not."""
    try:
        from viewer.gpu.egl import standalone_context

        standalone_context().release()
    except Exception as exc:  # noqa: BLE001  any failure means: skip with the reason
        return f"no EGL OpenGL 3.3 context: {exc}"
    return None


needs_egl = pytest.mark.skipif(egl_problem() is not None, reason=str(egl_problem()))


class HostOnly:
    """A device scene made to go through host uploads: its views lose ``write``, so the viewer reads
    ``host()`` (a copy to the host)."""

    def __init__(self, scene):
        self._scene = scene

    def __getattr__(self, name):
        return getattr(self._scene, name)

    def view(self, color_mode):
        return dataclasses.replace(self._scene.view(color_mode), write=None)


def field_through_interop(scene, color_mode: str, shape):
    """Show the scene's field view in ``color_mode`` on a standalone EGL context as the viewer does,
    assert that it went through CUDA–GL interop (not the host fallback), and return the values the
    field's shader reads (float32, ``shape``), read back before the context is released."""
    from viewer.gpu.egl import standalone_context
    from viewer.render.view import SceneView

    ctx = standalone_context()
    view = SceneView(ctx)
    try:
        view.show(scene, color_mode)
        assert view.feed.path == "CUDA–GL interop", view.feed.fallback_reason
        values = view.field.feed.read()
        assert values.shape == tuple(shape), values.shape
        return values
    finally:
        view.release()
        ctx.release()


def drag_plot_point(scene, point: str, offsets, size=(900, 600), color_mode: str = ""):
    """Drag a plot's drag point with the mouse, headless, as the window does: ImGui/ImPlot frames of the
    scene's plots, the mouse pressed on ``point``, moved by each (dx, dy) pixel offset in turn, released.
    The moves reach the scene through a Controller; returns it (its message line says if one failed)."""
    from imgui_bundle import imgui

    from sim.contract import PointerEvent
    from viewer.gpu.egl import standalone_context
    from viewer.panel.gui import Gui
    from viewer.render.offscreen import Offscreen
    from viewer.render.view import SceneView
    from viewer.window.controller import Controller

    ctx = standalone_context()
    gui, view, target = Gui(ctx), SceneView(ctx), Offscreen(ctx, size)
    ctl = Controller(scene, paused=True)

    def frame(mouse=None, button=None):
        gui.make_current()
        io = imgui.get_io()
        if mouse is not None:
            io.add_mouse_pos_event(*mouse)
        if button is not None:
            io.add_mouse_button_event(0, button)
        view.show(scene, color_mode)
        gui.new_frame(size, size, 1 / 60)
        view.draw_plots(
            (0.0, 0.0, float(size[0]), float(size[1])),
            lambda name, x, y: ctl.pointer(PointerEvent("point", x, y, target=name)),
        )
        gui.end_frame()
        gui.draw(target.fbo)

    try:
        for _ in range(2):
            frame()
        x, y = view.plots.point_pixels[point]
        frame(mouse=(x, y))
        frame(button=True)
        for dx, dy in offsets:
            frame(mouse=(x + dx, y + dy))
        frame(button=False)
    finally:
        target.release()
        view.release()
        gui.release()
        ctx.release()
    return ctl

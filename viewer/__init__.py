"""The kernel-lab desktop viewer: pyglet window and input, moderngl drawing, an ImGui panel.

The viewer holds no physics and names no scene: it reads a scene only through the contract
(``sim.contract``: the scene's ``SceneSpec`` and the view it returns each frame), draws that view,
and sends the user's settings back through the ``sim.framework.scene.Scene`` methods. Rooms:
``window/`` (the window, keys, input, the controller), ``panel/`` (the ImGui panel and its
sections), ``render/`` (one renderer per view kind: points, field, plots), ``gpu/`` (CUDA–GL
interop, EGL), ``headless.py`` (pictures without a window), ``bench/`` (frame and render timings).

pyglet options are set here, before any viewer module imports ``pyglet.window``:
- no shadow window, so importing ``pyglet.window`` needs no display (headless use,
  ``display_problem()``); the viewer has a single window anyway;
- no per-call GL error checks: moderngl does the drawing and reports its own errors;
- headless (EGL) when there is no display to open windows on, so that ``pyglet.window`` imports
  on a GPU machine without X libraries; ``AUTO_HEADLESS`` records that choice.

The NVIDIA EGL driver is preferred where it is installed outside glvnd's search path (see
``viewer.gpu.egl``), before anything loads libEGL.
"""

import os
import sys

import pyglet

from viewer.gpu.egl import prefer_nvidia_egl

pyglet.options["shadow_window"] = False
pyglet.options["debug_gl"] = False
prefer_nvidia_egl()
AUTO_HEADLESS = (
    sys.platform.startswith("linux")
    and not pyglet.options.get("headless")
    and not os.environ.get("DISPLAY")
    and not os.environ.get("WAYLAND_DISPLAY")
)
if AUTO_HEADLESS:
    pyglet.options["headless"] = True

"""The kernel-lab desktop viewer: pyglet window and input, moderngl drawing, an ImGui panel.

The viewer holds no physics: it reads a scene's render arrays, draws them, and sends the
user's settings back through the scene's methods.

pyglet options are set here, before any viewer module imports ``pyglet.window``:
- no shadow window, so importing ``pyglet.window`` needs no display (headless use,
  ``display_problem()``); the viewer has a single window anyway;
- no per-call GL error checks: moderngl does the drawing and reports its own errors.
"""

import pyglet

pyglet.options["shadow_window"] = False
pyglet.options["debug_gl"] = False

"""GLSL programs by name (NAME.glsl), packaged with the code; loaded by viewer.render.shaders."""

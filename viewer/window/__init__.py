"""The window and what the user does in it: the viewer wiring its parts (app.py; what it reads through
to them: shortcuts.py; opening the window: display.py; the command line's viewer run: launch.py),
pyglet's events (events.py), the window's own actions (actions.py), how frames follow one another
(loop.py), the settings kept between sessions (session.py), the controller that turns keys and panel
clicks into scene calls (controller.py, its GPU switches: gpu_switches.py), input forwarding to ImGui
and pointer routing to the camera or the scene's tool (input.py). The key table is ``viewer.keys``; a
frame is drawn by ``viewer.frame.FrameComposer``."""

"""The window and what the user does in it: the pyglet window (app.py; opening it: display.py; its
frame loop: loop.py), the controller that turns keys and panel clicks into scene calls
(controller.py, its GPU switches: gpu_switches.py), the key table (keys.py), input forwarding
to ImGui and pointer routing to the camera or the scene's tool (input.py)."""

"""The ImGui side panel and its sections, one module each: scene, GPU, run, physics, tool, colour
(with the view's legend), counters, stage timings, the live distance histogram; the F1 help;
the ImGui context (gui.py) and its moderngl renderer (imgui_renderer.py). ``panel.Panel`` draws
the sections in order."""

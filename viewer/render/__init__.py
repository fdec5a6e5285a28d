"""Drawing a scene's view: ``view.SceneView`` dispatches on the view kind to the points renderer
(points/: spheres or discs with their trough or box), the field renderer (field.py) or the plots
(plots.py, ImPlot); the camera, shader loading and offscreen framebuffers are shared."""

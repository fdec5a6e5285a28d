"""The scene framework: the Scene base class and the parts it composes, views, colour scales, user stages."""

"""The window icon: the PNGs under assets/ are what ``viewer.window.icon`` draws, in both sizes, with
transparent rounded corners and lit spheres; a window takes them without complaint."""

import numpy as np
import pytest

import assets
from viewer.image import read_image
from viewer.window.icon import SIZES, draw_icon


@pytest.mark.parametrize("name", list(SIZES))
def test_icon_files_are_the_drawn_icons(name):
    size = SIZES[name]
    pixels = read_image(assets.path(name))
    assert pixels.shape == (size, size, 4)
    np.testing.assert_array_equal(pixels, draw_icon(size))
    assert pixels[0, 0, 3] == 0 and pixels[size // 2, size // 2, 3] == 255, "rounded corners, opaque middle"
    opaque = pixels[pixels[..., 3] == 255][:, :3].astype(int)
    assert len(np.unique(opaque, axis=0)) > (200 if size >= 256 else 50), "shaded spheres, not flat colour"


def _display_problem():
    from viewer.window.display import display_problem

    return display_problem()


@pytest.mark.window
@pytest.mark.skipif(_display_problem() is not None, reason=f"needs a display: {_display_problem()}")
def test_a_window_takes_the_icon(capsys):
    from viewer.window.display import _make_window
    from viewer.window.icon import set_window_icon

    window = _make_window(320, 240, False, "icon")
    try:
        set_window_icon(window)
    finally:
        window.close()
    assert "no window icon" not in capsys.readouterr().err

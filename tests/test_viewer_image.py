"""Pictures written by viewer.image (PNG here), shared by F12 screenshots and headless rendering."""

import zlib

import numpy as np
import pytest

from viewer.image import encode_image, read_image, write_image


def test_round_trip_rgb_and_rgba(tmp_path):
    rng = np.random.default_rng(1)
    for channels in (3, 4):
        pixels = rng.integers(0, 256, size=(17, 23, channels), dtype=np.uint8)
        path = write_image(tmp_path / "sub" / f"img{channels}.png", pixels)
        assert path.is_file()
        np.testing.assert_array_equal(read_image(path), pixels)


def test_header_and_chunks_are_valid():
    data = encode_image(np.zeros((2, 3, 3), np.uint8), "PNG")
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (3, 2)
    crc = int.from_bytes(data[29:33], "big")
    assert crc == zlib.crc32(data[12:29])
    assert data.endswith(b"IEND\xaeB`\x82")


def test_rejects_wrong_shapes():
    with pytest.raises(ValueError):
        encode_image(np.zeros((4, 4), np.uint8))
    with pytest.raises(ValueError):
        encode_image(np.zeros((4, 4, 3), np.float32))

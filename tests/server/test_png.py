"""The one PNG encoder (``wasdi_server.png``), decoded by Pillow: exact pixels from bytes and from numpy arrays,
non-contiguous arrays, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
from tests.png_decoding import decode_png

from wasdi_server.domains.products.style_previews import ramp_png
from wasdi_server.png import encode_pixels, encode_png


def test_bytes_and_arrays_encode_the_same_exact_pixels() -> None:
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(37, 53, 4), dtype=np.uint8)  # odd sizes, every byte value
    from_array = encode_pixels(pixels)
    assert decode_png(from_array).tolist() == pixels.tolist()
    assert encode_png(53, 37, pixels.tobytes()) == from_array
    view = pixels[:, ::2]  # not contiguous: copied before encoding
    assert decode_png(encode_pixels(view)).tolist() == view.tolist()
    assert decode_png(encode_png(1, 1, bytes([1, 2, 3, 4]))).tolist() == [[[1, 2, 3, 4]]]


def test_the_style_bar_is_a_png_of_its_colours() -> None:
    bar = decode_png(ramp_png([(255, 0, 0, 255), (0, 0, 255, 128)], width=64, height=8, smooth=False))
    assert bar.shape == (8, 64, 4)
    assert bar[:, :32].reshape(-1, 4).tolist() == [[255, 0, 0, 255]] * 256
    assert bar[:, 32:].reshape(-1, 4).tolist() == [[0, 0, 255, 128]] * 256


@pytest.mark.parametrize("width, height, data, message", [
    (0, 1, b"", "bad image size"),
    (2, 2, bytes(15), "15 bytes"),
    (70000, 1, bytes(280000), "bad image size"),
])
def test_what_is_not_an_rgba_image_is_refused(width: int, height: int, data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        encode_png(width, height, data)
    with pytest.raises(ValueError, match="uint8"):
        encode_pixels(np.zeros((2, 2, 4), np.float32))
    with pytest.raises(ValueError, match="uint8"):
        encode_pixels(np.zeros((2, 2, 3), np.uint8))

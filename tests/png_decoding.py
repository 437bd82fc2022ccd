"""Every PNG the tests check is decoded by Pillow, a decoder independent of the server's encoder."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def decode_png(data: bytes) -> np.ndarray:
    """The ``(height, width, 4)`` RGBA pixels of a PNG the server sent or wrote (8-bit RGBA), checked whole
    (signature, chunk CRCs, the image data) by Pillow."""
    with Image.open(io.BytesIO(data)) as probe:
        assert probe.format == "PNG", probe.format
        probe.verify()  # every chunk's CRC and the end of the stream
    with Image.open(io.BytesIO(data)) as image:
        assert image.mode == "RGBA", image.mode
        image.load()
        return np.asarray(image).copy()

"""`media="downscale"`: re-encode an image within the limit it broke (needs Pillow,
the `[media]` extra). Whatever cannot be brought within it gets the placeholder."""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Callable

from .blocks import Media

ATTEMPTS = 6
MAX_PIXELS = 40_000_000
"""Larger images are not decoded at all (a stored header can claim any size): placeholder."""
FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}


def downscaled(
    media: Media, side: int | None, max_size: int, size_of: Callable[[str], int]
) -> str | None:
    """The base64 of `media` re-encoded, in its own type, with no side over `side` and
    `size_of` it within `max_size`; None when Pillow is missing or it cannot be done."""
    try:
        from PIL import Image
    except ImportError:
        return None
    target = FORMATS.get(media.mime or "")
    if target is None:
        return None
    try:
        image = Image.open(io.BytesIO(base64.b64decode(media.data)))
        width, height = image.size
        if width * height > MAX_PIXELS:
            return None
        image.load()
    except Exception:  # not an image Pillow reads (broken, truncated, hostile): placeholder
        return None
    scale = min(1.0, side / max(width, height)) if side else 1.0
    for _ in range(ATTEMPTS):
        size = (max(1, int(width * scale)), max(1, int(height * scale)))
        data = _encoded(image.resize(size, Image.Resampling.LANCZOS), target)
        measured = size_of(data)
        if measured <= max_size:
            return data
        scale *= math.sqrt(max_size / measured) * 0.9
    return None


def _encoded(image: object, target: str) -> str:
    from PIL import Image

    assert isinstance(image, Image.Image)
    if target == "JPEG" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    buffer = io.BytesIO()
    options = {"quality": 85} if target in ("JPEG", "WEBP") else {"optimize": True}
    image.save(buffer, format=target, **options)
    return base64.b64encode(buffer.getvalue()).decode("ascii")

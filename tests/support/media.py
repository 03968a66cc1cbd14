"""Real media for the content-rule tests: images with valid headers, of the sizes and
dimensions a test asks for, and the block forms LangChain stores them in."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import struct
import zlib
from typing import Any

from PIL import Image

MB = 1024 * 1024
ANTHROPIC_LIMIT = 5 * MB
"""Anthropic's image limit, counted on the base64 text."""


def png_bytes(width: int, height: int, *, noise: bool = False, seed: int = 0) -> bytes:
    """A PNG Pillow can read; with `noise` it does not compress (about 3 bytes a pixel)."""
    if noise:
        pixels = _noise(width * height * 3, seed)
        image = Image.frombytes("RGB", (width, height), pixels)
    else:
        image = Image.new("RGB", (width, height), (200, 30, 30))
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def jpeg_bytes(width: int, height: int, *, exif_padding: int = 0, seed: int = 0) -> bytes:
    """A JPEG of noise; `exif_padding` puts an APP1 segment that large before its frame
    header, as cameras do."""
    image = Image.frombytes("RGB", (width, height), _noise(width * height * 3, seed))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=95)
    data = buffer.getvalue()
    if not exif_padding:
        return data
    segment = b"\xff\xe1" + struct.pack(">H", exif_padding + 2) + b"\x00" * exif_padding
    return data[:2] + segment + data[2:]


def image_bytes(fmt: str, width: int, height: int) -> bytes:
    """A small image in `fmt` (`GIF`, `WEBP`, `TIFF`, ...) as Pillow writes it."""
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 30)).save(buffer, fmt)
    return buffer.getvalue()


def png_of_size(width: int, height: int, total: int) -> bytes:
    """A valid small PNG of `width` x `height`, padded after its end to `total` bytes:
    a header read gives the dimensions, the length is exact."""
    raw = b"".join(b"\x00" + b"\x7f" * (width * 3) for _ in range(min(height, 4)))
    head = b"\x89PNG\r\n\x1a\n" + _chunk(
        b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    )
    body = head + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b"")
    assert total >= len(body)
    return body + b"\x00" * (total - len(body))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def raw_size_for_base64(length: int) -> int:
    """The byte count whose base64 text is `length` characters (a multiple of 4)."""
    assert length % 4 == 0
    return length // 4 * 3


def block_forms(data: str, mime: str) -> dict[str, dict[str, Any]]:
    """The same inline image in every form LangChain stores (name -> block)."""
    return {
        "standard": {"type": "image", "base64": data, "mime_type": mime},
        "source_type": {"type": "image", "source_type": "base64", "data": data, "mime_type": mime},
        "openai_image_url": {
            "type": "image_url",
            "image_url": {"url": f"data:{mime};base64,{data}"},
        },
        "openai_image_url_str": {"type": "image_url", "image_url": f"data:{mime};base64,{data}"},
        "anthropic": {
            "type": "image",
            "source": {"type": "base64", "media_type": mime, "data": data},
        },
        "standard_data_url": {"type": "image", "url": f"data:{mime};base64,{data}"},
    }


def document_forms(data: str, mime: str) -> dict[str, dict[str, Any]]:
    """The same inline document in every form LangChain stores."""
    return {
        "standard": {"type": "file", "base64": data, "mime_type": mime},
        "source_type": {"type": "file", "source_type": "base64", "data": data, "mime_type": mime},
        "openai_file": {
            "type": "file",
            "file": {"filename": "f", "file_data": f"data:{mime};base64,{data}"},
        },
        "anthropic": {
            "type": "document",
            "source": {"type": "base64", "media_type": mime, "data": data},
        },
    }


def _chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def _noise(size: int, seed: int) -> bytes:
    """Incompressible bytes, the same for the same seed (so runs compare)."""
    if seed == 0:
        return os.urandom(size)
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.blake2b(f"{seed}:{counter}".encode(), digest_size=64).digest()
        counter += 1
    return bytes(out[:size])

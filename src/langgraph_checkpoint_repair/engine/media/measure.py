"""What a media block weighs and how wide it is, read without decoding pixels.

Width and height come from the file header: PNG's IHDR, GIF's logical screen,
WebP's VP8/VP8L/VP8X header, JPEG's first start-of-frame marker. The type is
sniffed from the same bytes, as a provider checks it against the declared one.
"""

from __future__ import annotations

import base64
import binascii
import struct

HEAD_CHARS = 65_536
"""Base64 characters decoded first; a JPEG whose frame header lies further (large
EXIF or ICC segments) is decoded whole."""


def head_bytes(data: str, whole: bool = False) -> bytes:
    """The first bytes of the base64 `data` (all of them with `whole`); b'' if not base64."""
    text = data if whole else data[:HEAD_CHARS]
    text = text[: len(text) - len(text) % 4] if not whole else text
    try:
        return base64.b64decode(text)
    except (binascii.Error, ValueError):
        return b""


def sniff_type(head: bytes) -> str | None:
    """The image type the bytes are, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: str) -> tuple[int, int] | None:
    """(width, height) of the base64 image `data`, or None when the header does not say."""
    head = head_bytes(data)
    kind = sniff_type(head)
    if kind == "image/jpeg":
        return _jpeg(head) or (
            _jpeg(head_bytes(data, whole=True)) if len(data) > HEAD_CHARS else None
        )
    reader = _READERS.get(kind or "")
    return reader(head) if reader else None


def _png(head: bytes) -> tuple[int, int] | None:
    if len(head) < 24 or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _gif(head: bytes) -> tuple[int, int] | None:
    if len(head) < 10:
        return None
    width, height = struct.unpack("<HH", head[6:10])
    return width, height


def _webp(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments to the first start-of-frame marker."""
    n = 2
    while n + 9 <= len(data):
        if data[n] != 0xFF:
            return None
        marker = data[n + 1]
        if marker == 0xFF:  # fill byte
            n += 1
            continue
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[n + 5 : n + 9])
            return width, height
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            n += 2
            continue
        n += 2 + int.from_bytes(data[n + 2 : n + 4], "big")
    return None


_READERS = {"image/png": _png, "image/gif": _gif, "image/webp": _webp}

"""Find the media in a content block, whatever form LangChain stored it in.

A block is media when it carries its bytes inline as base64: LangChain's
standard blocks (`base64`), the older `source_type="base64"` form, OpenAI
`image_url` / `file` / `input_audio` with a data URL or raw base64, and
Anthropic `image` / `document` with a base64 `source`. A block that points
elsewhere (a URL that is not data, a file id) is not: its size cannot be
known here, so it is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Block = dict[str, Any]
Path = tuple[str, ...]
"""Where a block keeps its payload: the keys leading to it."""

MEDIA_TYPES = frozenset(
    {
        "image",
        "file",
        "audio",
        "video",
        "document",
        "image_url",
        "input_audio",
        "input_image",
        "input_file",
    }
)
"""Block types that may carry media; any other block is never looked into."""

_KINDS = {
    "document": "file",
    "image_url": "image",
    "input_image": "image",
    "input_file": "file",
    "input_audio": "audio",
}


@dataclass(frozen=True)
class Media:
    """An inline media block, as the rules see it."""

    kind: str
    """`image`, `file`, `audio` or `video` (an Anthropic `document` is a `file`)."""
    mime: str | None
    """The declared type (`image/png`), lower case; None when the block names none."""
    data: str
    """The base64 text, without a data-URL prefix."""
    path: Path
    prefix: str = ""
    """A data URL's `data:...;base64,` head, put back when the payload is replaced."""


def find_media(block: object) -> Media | None:
    """The inline media `block` carries, or None (text, a URL, a file id, odd data)."""
    if not isinstance(block, dict):
        return None
    declared = block.get("type")
    if not isinstance(declared, str) or declared not in MEDIA_TYPES:
        return None
    kind = _KINDS.get(declared, declared)
    for path in _PATHS:
        value = _at(block, path)
        if isinstance(value, str) and value:
            return _media(block, kind, path, value)
    return None


_PATHS: tuple[Path, ...] = (
    ("base64",),
    ("data",),
    ("source", "data"),
    ("url",),
    ("image_url", "url"),
    ("image_url",),
    ("input_audio", "data"),
    ("file", "file_data"),
    ("file_data",),
)


def _at(block: Block, path: Path) -> object:
    value: object = block
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _media(block: Block, kind: str, path: Path, value: str) -> Media | None:
    """The media at `path`, or None when it is not inline data."""
    if value.startswith("data:"):
        head, comma, payload = value.partition(",")
        if not comma or not head.endswith(";base64"):
            return None
        mime = head[5:-7].split(";")[0].strip().lower() or None
        return Media(kind, mime or _declared(block, path), payload, path, head + comma)
    if path in (("url",), ("image_url", "url"), ("image_url",)):
        return None  # a link, not data
    if path == ("data",) and block.get("source_type") not in (None, "base64"):
        return None
    if path == ("source", "data") and block["source"].get("type") != "base64":
        return None
    return Media(kind, _declared(block, path), value, path)


def _declared(block: Block, path: Path) -> str | None:
    """The type the block declares beside its payload."""
    if path == ("source", "data"):
        mime = block["source"].get("media_type")
    elif path == ("input_audio", "data"):
        audio_format = block["input_audio"].get("format")
        mime = f"audio/{audio_format}" if isinstance(audio_format, str) else None
    else:
        mime = block.get("mime_type")
    return mime.strip().lower() if isinstance(mime, str) and mime.strip() else None


def with_payload(block: Block, media: Media, data: str) -> Block:
    """A copy of `block` holding the base64 `data` where `media` was (same type)."""
    return _replaced(block, media.path, media.prefix + data)


def _replaced(block: Block, path: Path, value: str) -> Block:
    copy = dict(block)
    if len(path) == 1:
        copy[path[0]] = value
    else:
        copy[path[0]] = _replaced(block[path[0]], path[1:], value)
    return copy


def decoded_size(data: str) -> int:
    """The number of bytes `data` decodes to, without decoding it."""
    padding = 2 if data.endswith("==") else 1 if data.endswith("=") else 0
    return len(data) * 3 // 4 - padding


def summarized(content: Any) -> Any:
    """`content` with each inline media block shown as its kind, type and size, for
    views that must never print the data (`show`, `show --json`)."""
    if not isinstance(content, list):
        return content
    out: list[Any] = []
    for block in content:
        media = find_media(block)
        if media is None:
            out.append(block)
        else:
            out.append({
                "type": block["type"], "kind": media.kind, "mime_type": media.mime,
                "bytes": decoded_size(media.data),
            })  # fmt: skip
    return out

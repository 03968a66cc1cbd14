"""Limits on a whole request rather than one block, measured and reported, never fixed.

No prefix-stable fix exists for them: whether a request holds more than 20
images, or more than 32 MB, depends on what the next turns add, so a rule
would rewrite finished turns later and break provider prompt caches.
`langgraph-repair scan` counts the threads that break them instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from .blocks import MEDIA_TYPES, decoded_size, find_media
from .limits import MB
from .measure import dimensions

HISTORY_LIMITS = {
    "anthropic_many_images_over_2000px": (
        "Anthropic: more than 20 images in the request and one with a side over 2000 px"
    ),
    "anthropic_request_over_32mb": "Anthropic: media over the 32 MB request limit",
    "openai_images_over_50mb": "OpenAI: images over 50 MB in one request",
}
"""Each code `history_limits` reports, and what it means."""


def history_limits(messages: Sequence[BaseMessage], provider: str | None) -> list[str]:
    """The codes of the request-wide limits `messages` break for `provider`."""
    if provider not in ("anthropic", "openai", "openai-responses"):
        return []
    images: list[str] = []
    media_chars = 0
    for message in messages:
        content = message.content
        if not isinstance(content, list):
            continue
        for block in content:
            if not (isinstance(block, dict) and block.get("type") in MEDIA_TYPES):
                continue
            media = find_media(block)
            if media is not None:
                media_chars += len(media.data)
                if media.kind == "image":
                    images.append(media.data)
    if provider == "anthropic":
        return _anthropic(images, media_chars)
    total = sum(decoded_size(data) for data in images)
    return ["openai_images_over_50mb"] if total > 50 * MB else []


def _anthropic(images: list[str], media_chars: int) -> list[str]:
    found = []
    if len(images) > 20 and any(max(dimensions(data) or (0, 0)) > 2000 for data in images):
        found.append("anthropic_many_images_over_2000px")
    if media_chars > 32 * MB:
        found.append("anthropic_request_over_32mb")
    return found

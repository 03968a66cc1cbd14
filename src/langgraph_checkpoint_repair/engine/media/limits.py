"""Who takes what: each provider's per-block limits and a model profile's kinds.

Numbers come from the providers' documentation (docs/how-to/media.md lists the sources).
`None` means not known: a block is never removed for a limit nobody stated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .blocks import Media, decoded_size
from .measure import dimensions, head_bytes, sniff_type

MB = 1024 * 1024
IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


@dataclass(frozen=True)
class ProviderLimits:
    """What one provider takes in one media block."""

    name: str
    image_bytes: int
    counts_base64: bool
    """Size measured as the base64 text (Anthropic) rather than the decoded bytes."""
    image_side: int | None
    document_types: frozenset[str] | None
    document_bytes: int | None
    audio_types: frozenset[str] | None
    takes_video: bool | None
    media_in_results: bool
    media_in_replies: bool
    image_types: frozenset[str] = IMAGES

    def size_of(self, media: Media) -> int:
        return len(media.data) if self.counts_base64 else decoded_size(media.data)


PROVIDER_LIMITS: dict[str, ProviderLimits] = {
    "anthropic": ProviderLimits(
        "anthropic",
        5 * MB,
        True,
        8000,
        frozenset({"application/pdf", "text/plain"}),
        32 * MB,
        frozenset(),
        False,
        media_in_results=True,
        media_in_replies=True,
    ),
    "openai": ProviderLimits(
        "openai",
        20 * MB,
        False,
        None,
        frozenset({"application/pdf"}),
        None,
        frozenset({"audio/wav", "audio/x-wav", "audio/mp3", "audio/mpeg"}),
        False,
        media_in_results=False,
        media_in_replies=False,
    ),
    "openai-responses": ProviderLimits(
        "openai-responses",
        20 * MB,
        False,
        None,
        frozenset({"application/pdf"}),
        None,
        None,
        False,
        media_in_results=True,
        media_in_replies=False,
    ),
    "bedrock": ProviderLimits(
        "bedrock",
        3 * MB + 3 * MB // 4,
        False,
        8000,
        frozenset(
            {
                "application/pdf",
                "text/csv",
                "application/msword",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                "application/vnd.ms-excel",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                "text/html",
                "text/plain",
                "text/markdown",
            }
        ),
        4 * MB + MB // 2,
        None,
        None,
        media_in_results=True,
        media_in_replies=False,
    ),
    "mistral": ProviderLimits(
        "mistral",
        10 * MB,
        False,
        None,
        None,
        None,
        None,
        None,
        media_in_results=True,
        media_in_replies=True,
    ),
}


@dataclass(frozen=True)
class Verdict:
    """Why a block cannot stay: the words for the placeholder and the action."""

    reason: str
    """`size`, `side`, `type`, `place` or `profile`."""
    limit: str
    """The limit broken, in words (`5.0 MB`, `8000 px`, ...)."""
    fits_by_downscaling: bool = False
    measured: str = ""
    """How the provider counts the block, where that is not its plain size."""
    sides: tuple[int, int] | None = None
    """(width, height), for a side over the limit."""


def judge(
    media: Media,
    role: str,
    limits: ProviderLimits | None,
    profile: Mapping[str, Any] | None,
) -> Verdict | None:
    """Why `media` in a message of `role` (`human`, `ai`, `tool`) must go, or None."""
    category = _category(media)
    verdict = _by_profile(category, role, profile) if profile else None
    if verdict is None and limits is not None:
        verdict = _by_provider(media, category, role, limits)
    return verdict


def _category(media: Media) -> str:
    """`image`, `pdf`, `audio`, `video` or `file`, by the declared type first."""
    mime = media.mime or ""
    if mime.startswith("image/") or (media.kind == "image" and not mime):
        return "image"
    if mime == "application/pdf":
        return "pdf"
    if mime.startswith("audio/") or media.kind == "audio":
        return "audio"
    if mime.startswith("video/") or media.kind == "video":
        return "video"
    return "file"


def _by_profile(category: str, role: str, profile: Mapping[str, Any]) -> Verdict | None:
    """A kind the model's profile says it does not take (a missing key: it may)."""
    keys = [f"{category}_inputs"]
    if role == "tool" and category in ("image", "pdf"):
        keys.append(f"{category}_tool_message")
    for key in keys:
        if profile.get(key) is False:
            return Verdict("profile", key)
    return None


def _by_provider(media: Media, category: str, role: str, limits: ProviderLimits) -> Verdict | None:
    if role == "tool" and not limits.media_in_results:
        return Verdict("place", "tool results")
    if role == "ai" and not limits.media_in_replies:
        return Verdict("place", "assistant messages")
    if category == "image":
        return _image(media, limits)
    if category == "audio":
        return _listed(media, limits.audio_types)
    if category == "video":
        return Verdict("type", "no video") if limits.takes_video is False else None
    verdict = _listed(media, limits.document_types)
    if verdict is None and limits.document_bytes is not None:
        size = limits.size_of(media)
        if size > limits.document_bytes:
            counted = f", {megabytes(size)} as base64" if limits.counts_base64 else ""
            return Verdict("size", megabytes(limits.document_bytes), measured=counted)
    return verdict


def _listed(media: Media, accepted: frozenset[str] | None) -> Verdict | None:
    if accepted is None or (media.mime is not None and media.mime in accepted):
        return None
    return Verdict("type", ", ".join(sorted(accepted)) if accepted else "none")


def _image(media: Media, limits: ProviderLimits) -> Verdict | None:
    mime = media.mime or sniff_type(head_bytes(media.data[:64]))
    if mime not in limits.image_types:
        return Verdict("type", ", ".join(sorted(limits.image_types)))
    size = limits.size_of(media)
    if size > limits.image_bytes:
        counted = f", {megabytes(size)} as base64" if limits.counts_base64 else ""
        return Verdict("size", megabytes(limits.image_bytes), True, counted)
    if limits.image_side is not None:
        sides = dimensions(media.data)
        if sides is not None and max(sides) > limits.image_side:
            return Verdict("side", f"{limits.image_side} px", True, sides=sides)
    return None


def megabytes(size: int) -> str:
    """`5.0 MB`, `812 KB`, `93 bytes`: sizes as operators read them (1 MB = 1024 KB)."""
    if size >= MB:
        return f"{size / MB:.1f} MB"
    if size >= 1024:
        return f"{size // 1024} KB"
    return f"{size} bytes"

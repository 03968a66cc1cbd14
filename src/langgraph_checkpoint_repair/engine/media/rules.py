"""The content rules for one message: media over a limit or of a kind the model does
not take is replaced (or downscaled), a tool result over `max_result_chars` is cut.

Each rule returns the message it was given when it changes nothing, so a clean
history costs one look per message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from ..hygiene.fixes import Fix
from .blocks import MEDIA_TYPES, Media, decoded_size, find_media, with_payload
from .downscale import downscaled
from .limits import PROVIDER_LIMITS, ProviderLimits, Verdict, judge, megabytes
from .scrub import scrubbed_fields
from .texts import describe_media, removed_text
from .truncate import text_length, truncated_content


@dataclass(frozen=True)
class ContentRules:
    """The content rules of one policy, ready to apply to message after message."""

    limits: ProviderLimits | None
    profile: Mapping[str, Any] | None
    media: str
    max_result_chars: int | None
    language: str

    @property
    def judges_media(self) -> bool:
        return self.media != "keep" and (self.limits is not None or bool(self.profile))

    def apply(self, message: BaseMessage) -> tuple[BaseMessage, list[Fix]]:
        """`message` within the rules, and what was done; the same object if nothing."""
        fixes: list[Fix] = []
        if self.judges_media and isinstance(message.content, list):
            message, fixes = self._media(message)
        if self.max_result_chars is not None and isinstance(message, ToolMessage):
            message, more = self._truncated(message)
            fixes += more
        return message, fixes

    def _media(self, message: BaseMessage) -> tuple[BaseMessage, list[Fix]]:
        role = (
            "tool"
            if isinstance(message, ToolMessage)
            else "ai"
            if isinstance(message, AIMessage)
            else "human"
        )
        content: list[Any] = message.content  # type: ignore[assignment]
        out: list[Any] | None = None
        fixes: list[Fix] = []
        removed: list[str] = []
        for n, block in enumerate(content):
            if not (isinstance(block, dict) and block.get("type") in MEDIA_TYPES):
                continue
            media = find_media(block)
            verdict = judge(media, role, self.limits, self.profile) if media else None
            if media is None or verdict is None:
                continue
            replacement, fix = self._replacement(block, media, verdict, message)
            if out is None:
                out = list(content)
            out[n] = replacement
            fixes.append(fix)
            removed.append(media.data)
        if out is None:
            return message, []
        update: dict[str, Any] = {"content": out, **scrubbed_fields(message, removed)}
        return message.model_copy(update=update), fixes

    def _replacement(
        self, block: dict[str, Any], media: Media, verdict: Verdict, message: BaseMessage
    ) -> tuple[Any, Fix]:
        call_id, name = _call_of(message)
        what = describe_media(media)
        if self.media == "downscale" and verdict.fits_by_downscaling and self.limits:
            limits = self.limits
            data = downscaled(
                media,
                limits.image_side,
                limits.image_bytes,
                lambda d: len(d) if limits.counts_base64 else decoded_size(d),
            )
            if data is not None:
                detail = f"{what} -> {megabytes(decoded_size(data))} ({verdict.limit} limit)"
                return with_payload(block, media, data), Fix(
                    "media_downscaled", detail, call_id, name
                )
        provider = self.limits.name if self.limits else "model"
        text = removed_text(media, verdict, provider, self.language)
        return {"type": "text", "text": text}, Fix(
            "media_removed",
            f"{what}: {verdict.reason} ({verdict.limit}{verdict.measured})",
            call_id,
            name,
        )

    def _truncated(self, message: ToolMessage) -> tuple[ToolMessage, list[Fix]]:
        limit = self.max_result_chars
        assert limit is not None
        length = text_length(message.content)
        if length <= limit:
            return message, []
        content = truncated_content(message.content, limit, self.language)
        fix = Fix(
            "result_truncated",
            f"{length:,} -> {limit:,} characters",
            message.tool_call_id,
            message.name,
        )
        return message.model_copy(update={"content": content}), [fix]


def rules_for(
    provider: str | None,
    profile: Mapping[str, Any] | None,
    media: str,
    max_result_chars: int | None,
    language: str,
) -> ContentRules:
    limits = PROVIDER_LIMITS[provider] if provider else None
    return ContentRules(limits, profile, media, max_result_chars, language)


def _call_of(message: BaseMessage) -> tuple[str | None, str | None]:
    if isinstance(message, ToolMessage):
        return message.tool_call_id, message.name
    return None, None

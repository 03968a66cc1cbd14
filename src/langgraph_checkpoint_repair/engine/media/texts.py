"""The words that replace what was removed, in the policy's language."""

from __future__ import annotations

from .blocks import Media, decoded_size
from .limits import Verdict, megabytes

REASONS: dict[str, dict[str, str]] = {
    "en": {
        "size": "over the {provider} limit of {limit}{measured}",
        "side": "{width}x{height} px, over the {provider} limit of {limit} a side",
        "type": "a type {provider} does not take (it takes {limit})",
        "place": "{provider} takes no media in {limit}",
        "profile": "the model does not take it ({limit} is false in its profile)",
    },
    "zh": {
        "size": "超过 {provider} 的 {limit} 上限{measured}",
        "side": "{width}x{height} 像素，超过 {provider} 每边 {limit} 的上限",
        "type": "{provider} 不接受此类型（接受 {limit}）",
        "place": "{provider} 不接受 {limit} 中的媒体",
        "profile": "模型不接受此内容（其配置中 {limit} 为 false）",
    },
}

REMOVED = {
    "en": "[{kind} removed: {mime}, {size}; {why}]",
    "zh": "[{kind}已移除：{mime}，{size}；{why}]",  # noqa: RUF001
}

TRUNCATED = {
    "en": "\n[... {removed:,} characters of this tool result removed ...]\n",
    "zh": "\n[……此工具结果已删去 {removed:,} 个字符……]\n",
}


def describe_media(media: Media) -> str:
    """`image image/png 6.2 MB`: what a block is, never what it holds."""
    return f"{media.kind} {media.mime or 'unknown type'} {megabytes(decoded_size(media.data))}"


def removed_text(media: Media, verdict: Verdict, provider: str, language: str) -> str:
    """The text block that takes a removed block's place."""
    width, height = verdict.sides or (0, 0)
    why = REASONS[language][verdict.reason].format(
        provider=provider,
        limit=verdict.limit,
        width=width,
        height=height,
        measured=verdict.measured,
    )
    return REMOVED[language].format(
        kind=media.kind,
        mime=media.mime or "unknown type",
        size=megabytes(decoded_size(media.data)),
        why=why,
    )

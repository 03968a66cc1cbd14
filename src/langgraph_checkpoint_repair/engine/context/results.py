"""The first, smallest loss: a tool result over a quarter of the budget is cut to a
quarter, its head and tail kept (as `max_result_chars` cuts, by characters)."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, ToolMessage

from ..hygiene.fixes import Fix
from ..media.truncate import text_length, truncated_content
from ..policy import MIN_RESULT_CHARS, TokenCounter
from .counting import count_tokens

_TRIES = 8
"""Cuts tried, each sized from the last one's count, before settling."""


def cut_long_results(
    messages: list[BaseMessage],
    counts: list[int],
    quarter: int,
    counter: TokenCounter | None,
    language: str,
) -> tuple[list[BaseMessage], list[tuple[int, Fix]]]:
    """`messages` with every result over `quarter` tokens cut, and what was cut.
    `counts` is updated in place to the new counts."""
    out = messages
    fixes: list[tuple[int, Fix]] = []
    for n, tokens in enumerate(counts):
        message = messages[n]
        if tokens <= quarter or not isinstance(message, ToolMessage):
            continue
        cut, cut_tokens = _cut(message, tokens, quarter, counter, language)
        if cut is message:
            continue
        if out is messages:
            out = list(messages)
        out[n], counts[n] = cut, cut_tokens
        detail = f"{tokens:,} -> {cut_tokens:,} tokens"
        fixes.append((n, Fix("result_truncated", detail, message.tool_call_id, message.name)))
    return out, fixes


def _cut(
    message: ToolMessage, tokens: int, quarter: int, counter: TokenCounter | None, language: str
) -> tuple[ToolMessage, int]:
    """`message` cut to about `quarter` tokens: the characters to keep are guessed in
    proportion to the count, then shrunk the same way until the count agrees. Never
    below `MIN_RESULT_CHARS`, so a cut result is never cut again."""
    length = text_length(message.content)
    chars = length * quarter // tokens
    cut, cut_tokens = message, tokens
    for _ in range(_TRIES):
        chars = max(chars, MIN_RESULT_CHARS)
        if chars >= length or chars >= text_length(cut.content):
            break
        content = truncated_content(message.content, chars, language)
        cut = message.model_copy(update={"content": content})
        cut_tokens = count_tokens((cut,), counter)
        if cut_tokens <= quarter or chars == MIN_RESULT_CHARS:
            break
        chars = chars * quarter // cut_tokens
    return cut, cut_tokens

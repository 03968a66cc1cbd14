"""`max_result_chars`: a tool result too long for any later call keeps its head and
its tail, joined by a line saying how much was cut.

The whole result, that line included, stays within the limit, so a truncated
result is never truncated again.
"""

from __future__ import annotations

from typing import Any

from .texts import TRUNCATED


def truncated_text(text: str, limit: int, language: str) -> str:
    """`text` cut to `limit` characters in all, or `text` itself when it fits."""
    if len(text) <= limit:
        return text
    removed = len(text)
    while True:  # the line's length depends on the count it prints: settle it
        line = TRUNCATED[language].format(removed=removed)
        kept = limit - len(line)
        if len(text) - kept == removed:
            break
        removed = len(text) - kept
    head = kept - kept // 2
    return text[:head] + line + text[len(text) - kept // 2 :]


def text_length(content: Any) -> int:
    """How many characters of text a tool result holds, in a string or text blocks."""
    if isinstance(content, str):
        return len(content)
    return sum(len(text) for _, text in _texts(content))


def truncated_content(content: Any, limit: int, language: str) -> Any:
    """`content` with its text cut to `limit`; other blocks (media) stay in place.

    Text spread over several blocks is cut as one text, kept in the first block."""
    if isinstance(content, str):
        return truncated_text(content, limit, language)
    texts = _texts(content)
    whole = truncated_text("".join(text for _, text in texts), limit, language)
    first = texts[0][0]
    others = {n for n, _ in texts[1:]}
    out: list[Any] = []
    for n, block in enumerate(content):
        if n == first:
            out.append(whole if isinstance(block, str) else {**block, "text": whole})
        elif n not in others:
            out.append(block)
    return out


def _texts(content: Any) -> list[tuple[int, str]]:
    """(position, text) of each text block of a content list."""
    found: list[tuple[int, str]] = []
    for n, block in enumerate(content if isinstance(content, list) else ()):
        if isinstance(block, str):
            found.append((n, block))
        elif isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                found.append((n, text))
    return found

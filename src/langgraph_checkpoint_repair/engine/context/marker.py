"""The marker: one HumanMessage saying how many earlier messages a trim removed,
standing where they stood (right after the system messages, or right after the task
when what went came after it).

It is recognised by its `additional_kwargs`, never by its words, so a later trim
folds its count into the new marker and markers never pile up. Its id comes from
what it says and where it stands, so the same trim always makes the same marker.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage

from ..synthetic import MARKER_KEY

TRIM_REASON = "context_trimmed"
TEXTS = {
    "en": (
        "[{removed} earlier messages of this conversation were removed "
        "to fit the model's context window.]"
    ),
    "zh": "[为适应模型的上下文窗口，此对话中较早的 {removed} 条消息已被删除。]",
}


def trim_marker(removed: int, anchor: str, language: str) -> HumanMessage:
    """The marker for `removed` messages, placed before the message `anchor` names."""
    return HumanMessage(
        TEXTS[language].format(removed=removed),
        id=f"repair-context-{removed}-{anchor}",
        additional_kwargs={MARKER_KEY: {"reason": TRIM_REASON, "removed": removed}},
    )


def removed_by(message: BaseMessage) -> int | None:
    """The count an earlier marker carries, or None for any other message."""
    if message.__class__ is not HumanMessage:
        return None
    mark = message.additional_kwargs.get(MARKER_KEY)
    if not isinstance(mark, dict) or mark.get("reason") != TRIM_REASON:
        return None
    removed = mark.get("removed")
    return removed if isinstance(removed, int) and not isinstance(removed, bool) else 0

"""What kind of message an item is, learnt once per class."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

OTHER, TOOL, AI = 0, 1, 2

KIND_BY_CLASS: dict[type, int] = {}


class NotAMessage(TypeError):
    """An item of the history is not a LangChain message."""


def kind_of(item: object, index: int) -> int:
    """OTHER, TOOL or AI for the class of `item`."""
    cls = item.__class__
    kind = KIND_BY_CLASS.get(cls)
    if kind is not None:
        return kind
    if not issubclass(cls, BaseMessage):
        raise NotAMessage(f"item {index} is a {cls.__name__}, not a message")
    kind = TOOL if issubclass(cls, ToolMessage) else AI if issubclass(cls, AIMessage) else OTHER
    KIND_BY_CLASS[cls] = kind
    return kind

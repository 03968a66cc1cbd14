"""Anthropic empty contents (C1-C3): filled or cleared, never dropped, so no message
of the conversation disappears."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from .fixes import Fix, block_type

FILL_TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "message": "(empty message)",
        "tool_error": "The tool failed without an error message.",
    },
    "zh": {
        "message": "（空消息）",
        "tool_error": "工具执行失败，没有错误信息。",
    },
}
"""What an empty user message or an empty error result is filled with, by language."""


def fill_empty_turn(message: BaseMessage, language: str) -> tuple[BaseMessage, list[Fix]]:
    """C1: Claude requires every turn but the final assistant one to have content."""
    if not _is_empty(message.content):
        return message, []
    text = FILL_TEXTS[language]["message"]
    return message.model_copy(update={"content": text}), [
        Fix("content_filled", f"empty {message.type} message")
    ]


def fill_empty_error(message: ToolMessage, language: str) -> tuple[ToolMessage, list[Fix]]:
    """C3: an error `tool_result` must say something."""
    if message.status != "error" or not _is_empty(message.content):
        return message, []
    text = FILL_TEXTS[language]["tool_error"]
    fix = Fix("content_filled", "empty error result", message.tool_call_id, message.name)
    return message.model_copy(update={"content": text}), [fix]


def clear_blank_reply(message: AIMessage) -> tuple[AIMessage, list[Fix]]:
    """C2: a whitespace-only assistant text is rejected; an empty one is skipped by the
    converter. Only for non-final turns: the final one is right-stripped by the converter."""
    content = message.content
    if not isinstance(content, str) or content == "" or content.strip():
        return message, []
    return message.model_copy(update={"content": ""}), [
        Fix("content_cleared", "whitespace-only assistant text")
    ]


def _is_empty(content: object) -> bool:
    """Empty text, whitespace, or a list holding nothing but such text blocks."""
    if isinstance(content, str):
        return not content.strip()
    if not isinstance(content, list):
        return False
    return all(_is_blank_text(block) for block in content)


def _is_blank_text(block: object) -> bool:
    if isinstance(block, str):
        return not block.strip()
    if block_type(block) != "text" or not isinstance(block, dict):
        return False
    text = block.get("text")
    return not (isinstance(text, str) and text.strip())

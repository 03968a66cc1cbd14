"""LangChain's token approximation (`count_tokens_approximately`), its constants in one
place for the three counters that shadow it: the engine's count (`counting`), its
proof that a history fits without counting (`lean`), and the first look's bound on
stored bytes (`stores.first_look.token_bound`).

The approximation gives each message ceil(chars / CHARS_PER_TOKEN) +
TOKENS_PER_MESSAGE tokens, where chars counts the role's name among the rest, and an
image block IMAGE_TOKENS. Standard library only: the first-look helper process loads
this file alone.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 3
IMAGE_TOKENS = 85
"""What the approximation counts for an image block, whatever its size."""

ROLES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "function",
}
"""The role LangChain names for each class it gives a fixed one."""
OPENAI_ROLE = "__openai_role__"
"""A system message's role of its own ("developer", say), counted in its place."""

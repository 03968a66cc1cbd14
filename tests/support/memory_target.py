"""A `module:attr` target for the CLI tests: an in-memory saver, through the generic path."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver

SAVER = InMemorySaver()


def saver() -> InMemorySaver:
    return SAVER

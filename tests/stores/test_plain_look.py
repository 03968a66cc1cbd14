"""The first look at stored blobs follows the engine: a call id used twice in
one message is never clean, whatever results follow."""

from __future__ import annotations

from langgraph_checkpoint_repair.stores.first_look.plain import plain_history_is_clean


def history(*call_ids: str) -> list[object]:
    calls = [{"id": c, "name": "t", "args": {}} for c in call_ids]
    results = [("ToolMessage", {"tool_call_id": c}) for c in call_ids]
    return [("AIMessage", {"tool_calls": calls, "invalid_tool_calls": []}), *results]


def test_distinct_ids_answered_are_clean() -> None:
    assert plain_history_is_clean(history("a", "b"))


def test_an_id_used_twice_in_one_message_is_not_clean() -> None:
    assert not plain_history_is_clean(history("a", "a"))

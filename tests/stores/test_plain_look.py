"""The first look at stored blobs follows the engine: a call id used twice in
one message is never clean, whatever results follow. And it trusts the modules
LangGraph trusts, no others."""

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


def test_the_safe_modules_are_those_of_langgraphs_safe_types() -> None:
    """The first look runs without the package, so it keeps its own list of the modules
    LangGraph's safe types come from; it must name exactly those."""
    from langgraph_checkpoint_repair.decoding.strict import SAFE_METHODS, SAFE_TYPES
    from langgraph_checkpoint_repair.stores.first_look import plain

    langgraphs = {named[0].split(".")[0] for named in SAFE_TYPES | SAFE_METHODS}
    packages = {package.rstrip(".") for package in plain._OWN_PACKAGES}
    assert packages | plain._OWN_STDLIB == langgraphs

"""`proves_paired`: the shortest proof that a history needs no pairing repair.

Most loaded histories are valid, and most valid ones are shaped alike: each
AIMessage's calls are answered by the ToolMessages right after it, in call
order (LangGraph's `ToolNode` writes them so). The proof checks only that
shape, with the least work per message, so that a load pays as little as it
can for a history that needs nothing. Anything else (results in another
order, an unusual class, an invalid call, an open last block not in flight)
is "not proven", not "broken": the full walk then decides, as it always did.

It shadows the pairing rule of `walk` (the rule itself); `context.lean` and
`stores.first_look.plain` shadow this proof in turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

_id_of = itemgetter("id")
_NO_MORE_IDS: Iterator[str] = iter(())


def proves_paired(messages: list[BaseMessage], in_flight: bool = False) -> bool:
    """True when every call is answered right after its AIMessage, in call order, and
    every ToolMessage answers such a call; False when that is not so or not sure.
    With `in_flight`, the last block may still lack its later results (its calls may
    run), as an interrupted thread's does.

    True implies that the full walk finds nothing to repair. Calls must have ids of
    their own (none empty, none used twice in a message) and no AIMessage may hold
    invalid calls; only the four common classes are read, by exact class. Odd data
    (a call without an id key, an id that cannot be hashed) is not proven either.
    """
    try:
        return _answered_in_call_order(messages, in_flight)
    except (KeyError, TypeError):
        return False


def _answered_in_call_order(messages: list[BaseMessage], in_flight: bool) -> bool:
    tool_class, ai_class = ToolMessage, AIMessage
    human_class, system_class = HumanMessage, SystemMessage
    expected = None  # the id the next message must answer, while a block is open
    more_ids = _NO_MORE_IDS  # the ids after it, for a block of several calls
    for message in messages:
        cls = type(message)
        if cls is tool_class:
            if expected is None or message.tool_call_id != expected:  # type: ignore[attr-defined]
                return False
            expected = next(more_ids, None)
        elif expected is not None:
            return False
        elif cls is ai_class:
            calls = message.tool_calls  # type: ignore[attr-defined]
            if message.invalid_tool_calls:  # type: ignore[attr-defined]
                return False
            if not calls:
                continue
            if len(calls) == 1:
                expected = calls[0]["id"]
                if not expected:
                    return False
            else:
                ids = list(map(_id_of, calls))
                if len(set(ids)) != len(ids) or not all(ids):
                    return False
                more_ids = iter(ids)
                expected = next(more_ids)
        elif cls is not human_class and cls is not system_class:
            return False
    return expected is None or in_flight

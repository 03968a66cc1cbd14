"""Hypothesis strategies for messy histories, shared by the property tests.

Call ids come from a tiny pool (reused across turns and sometimes inside one
message), AI messages may lack an id, calls may lack an id or have invalid
arguments, results come back in any order, and the history is then damaged:
results dropped, moved, duplicated, orphaned, or answered by an older
synthetic result. Provider-shaped content blocks carry the calls as Anthropic,
OpenAI Responses, LangChain standard and legacy OpenAI messages do.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_checkpoint_repair import MARKER_KEY, RepairPolicy

CALL_IDS = ["call_0", "call_1", "call_2", "x"]
SHAPES = ["plain", "anthropic", "responses", "standard", "legacy"]


def call_blocks(shape: str, calls: list[dict[str, Any]], n: int) -> list[Any]:
    """The content a provider adapter stores for `calls`, in its own shape."""
    if not calls:
        return []
    if shape == "anthropic":
        uses = [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": {}} for c in calls]
        return [{"type": "text", "text": f"using tools {n}"}, *uses]
    if shape == "responses":
        items: list[Any] = [{"type": "reasoning", "id": f"rs_{n}", "summary": []}]
        for k, c in enumerate(calls):
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{n}_{k}",
                    "call_id": c["id"],
                    "name": c["name"],
                    "arguments": "{}",
                }
            )
        return items
    if shape == "standard":
        return [{"type": "tool_call", "id": c["id"], "name": c["name"], "args": {}} for c in calls]
    return []


@st.composite
def ai_turn(
    draw: st.DrawFn, n: int, shapes: list[str], idless: bool, reuse: bool
) -> tuple[AIMessage, list[str]]:
    """An AIMessage with 0-4 calls, and the ids its results answer."""
    shape = draw(st.sampled_from(shapes))
    pool = CALL_IDS if reuse else [f"{c}_{n}" for c in CALL_IDS]
    ids = draw(st.lists(st.sampled_from([*pool, None] if idless else pool), max_size=4))
    valid: list[Any] = []
    invalid: list[Any] = []
    for k, call_id in enumerate(ids):
        entry = {"name": f"t{k}", "args": {"k": k}, "id": call_id}
        if draw(st.integers(0, 5)) == 0:
            invalid.append({**entry, "args": "{bad", "error": "bad json"})
        else:
            valid.append(entry)
    extra: dict[str, Any] = {}
    if shape == "legacy":
        extra["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": "{}"}}
            for c in valid
        ]
    content: Any = call_blocks(shape, [c for c in valid if c["id"]], n) or f"thinking {n}"
    message_id = draw(st.sampled_from([f"a{n}", None]))
    message = AIMessage(
        content,
        id=message_id,
        tool_calls=valid,
        invalid_tool_calls=invalid,
        additional_kwargs=extra,
    )
    return message, [i for i in dict.fromkeys(ids) if i]


def synthetic(call_id: str, n: int) -> ToolMessage:
    return ToolMessage(
        "made up",
        tool_call_id=call_id,
        status="error",
        id=f"s{n}",
        response_metadata={MARKER_KEY: {"synthetic": True, "reason": "cancelled"}},
    )


@st.composite
def messy_history(
    draw: st.DrawFn, shapes: list[str] = SHAPES, idless: bool = True, reuse: bool = True
) -> list[BaseMessage]:
    """Turns of human, AI with calls shaped as `shapes`, shuffled results; then damage.

    `idless=False` leaves out calls without an id, which no repair can answer;
    `reuse=False` gives every turn its own call ids (langchain-openai's
    Responses converter skips a call whose id an earlier turn used).
    """
    history: list[BaseMessage] = []
    for n in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            history.append(HumanMessage(f"q{n}", id=f"h{n}"))
        message, ids = draw(ai_turn(n, shapes, idless, reuse))
        history.append(message)
        results: list[BaseMessage] = [
            ToolMessage(f"r {c}", tool_call_id=c, id=f"r{n}{c}") for c in ids
        ]
        history.extend(draw(st.permutations(results)))
    for step in range(draw(st.integers(0, 5))):
        damage(draw, history, step)
    return history


DAMAGE = ("drop", "move", "duplicate", "orphan", "synthetic")


def damage(
    draw: st.DrawFn, history: list[BaseMessage], step: int, operations: tuple[str, ...] = DAMAGE
) -> None:
    """One drawn damage to `history`, in place: a result dropped, moved or duplicated,
    an orphan result, or a synthetic result inserted anywhere."""
    operation = draw(st.sampled_from(operations))
    results = [n for n, m in enumerate(history) if isinstance(m, ToolMessage)]
    anywhere = st.integers(0, len(history))
    if operation == "orphan":
        history.insert(draw(anywhere), ToolMessage("?", tool_call_id=f"ghost{step}", id=f"g{step}"))
    elif operation == "synthetic":
        history.insert(draw(anywhere), synthetic(draw(st.sampled_from(CALL_IDS)), step))
    elif results:
        n = draw(st.sampled_from(results))
        if operation == "drop":
            del history[n]
        elif operation == "move":
            moved = history.pop(n)
            history.insert(draw(st.integers(0, len(history))), moved)
        else:
            copy = history[n].model_copy(update={"id": f"d{step}"})
            history.insert(draw(anywhere), copy)


def named_text(call: Any) -> str:
    return f"{call.name} at {call.ai_index}: {call.reason}"


policies = st.builds(
    RepairPolicy,
    dangling=st.sampled_from(["placeholder", "drop_call"]),
    orphans=st.sampled_from(["drop", "keep"]),
    duplicates=st.sampled_from(["drop", "keep"]),
    placeholder=st.sampled_from([None, "{name} ({id}): {reason}", named_text]),
    language=st.sampled_from(["en", "zh"]),
    strict=st.booleans(),
)

"""Mixed-provider histories: what a thread looks like after switching models, with the
defects each provider's hygiene is for (reused and foreign ids, unsigned and foreign
thinking, cut reasoning, empty contents, dangling calls).

One builder serves hypothesis (`mixed_history`) and plain seeded randomness
(`sampled_histories`, for the cross-process test), through a `pick` function.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

T = TypeVar("T")
Pick = Callable[[Sequence[T]], T]

ORIGINS = ["anthropic", "openai", "openai_v03", "google_genai", "bedrock_converse", None]
CALL_IDS = [
    "call_0",
    "call_1",
    "toolu_01Abc",
    "functions.get_weather:0",
    "call_" + "a" * 45,
    "mcp_" + "b" * 80,
]
"""Reused ids, another model's charset, 50- and 84-character proxy ids."""
HUMAN_TEXTS: list[Any] = ["What now?", "What now?", "What now?", "", "  ", []]
REPLY_TEXTS = ["Let me check.", "Let me check.", "", "  "]
RESULT_TEXTS = ["ok", "ok", "", " "]

CLAUDE_SIGNATURE = "claude:"
"""Signatures in these histories that Claude minted start with this; the test oracle
stands in for Claude's verifier and accepts only those."""


def build_history(pick: Pick[Any]) -> list[BaseMessage]:
    history: list[BaseMessage] = []
    turns = pick([1, 2, 3, 4, 5])
    for turn in range(turns):
        if turn == 0 or pick([True, False]):
            history.append(HumanMessage(pick(HUMAN_TEXTS), id=f"h{turn}"))
        call_ids = _distinct(pick, [pick(CALL_IDS) for _ in range(pick([0, 1, 1, 2]))])
        history.append(ai_turn(pick, pick(ORIGINS), call_ids, turn))
        for call_id in call_ids:
            if pick([True, True, True, False]):  # else: dangling
                history.append(result(pick, call_id, f"r{turn}-{call_id[:12]}"))
    if pick([True, False]):
        history.append(ai_turn(pick, pick(ORIGINS), [], turns))
    return history


def _distinct(pick: Pick[Any], ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def result(pick: Pick[Any], call_id: str, message_id: str) -> ToolMessage:
    status = pick(["success", "success", "error"])
    return ToolMessage(pick(RESULT_TEXTS), tool_call_id=call_id, status=status, id=message_id)


def ai_turn(pick: Pick[Any], origin: str | None, call_ids: list[str], turn: int) -> AIMessage:
    calls: list[Any] = [{"name": "get_weather", "args": {"n": turn}, "id": c} for c in call_ids]
    builders = {
        "anthropic": _claude,
        "openai": _responses,
        "openai_v03": _responses_v03,
        "google_genai": _gemini,
        "bedrock_converse": _converse,
    }
    content, kwargs = builders[origin](pick, calls, turn) if origin else (pick(REPLY_TEXTS), {})
    metadata = {"model_provider": origin.removesuffix("_v03")} if origin else {}
    return AIMessage(
        content,
        id=f"a{turn}",
        tool_calls=calls,
        additional_kwargs=kwargs,
        response_metadata=metadata,
    )


Content = tuple[Any, dict[str, Any]]


def _claude(pick: Pick[Any], calls: list[Any], turn: int) -> Content:
    signature = pick([f"{CLAUDE_SIGNATURE}{turn}", f"{CLAUDE_SIGNATURE}{turn}", None, ""])
    thinking: dict[str, Any] = {"type": "thinking", "thinking": pick(["Hmm.", ""])}
    if signature is not None:
        thinking["signature"] = signature
    blocks: list[Any] = [thinking]
    if pick([False, False, True]):
        blocks.append({"type": "redacted_thinking", "data": pick([f"claude-data{turn}", ""])})
    blocks.append({"type": "text", "text": pick(REPLY_TEXTS)})
    blocks += [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls
    ]
    return blocks, {}


def _responses(pick: Pick[Any], calls: list[Any], turn: int) -> Content:
    blocks: list[Any] = []
    if pick([True, False]):
        blocks.append({"type": "reasoning", "id": f"rs_{turn}a", "summary": []})
    if pick([True, False]):
        blocks.append({"type": "text", "text": pick(REPLY_TEXTS), "id": f"msg_{turn}"})
    blocks += [
        {
            "type": "function_call",
            "call_id": c["id"],
            "name": c["name"],
            "arguments": json.dumps({"n": turn}),
            "id": f"fc_{turn}{n}",
        }
        for n, c in enumerate(calls)
    ]
    if pick([False, False, True]):  # a stream cut right after a reasoning item
        blocks.append({"type": "reasoning", "id": f"rs_{turn}b", "summary": []})
    if pick([False, False, True]):  # a Claude thought in LangChain's standard form
        blocks.insert(0, {"type": "reasoning", "reasoning": "Hmm.", "extras": {"signature": "x"}})
    return blocks, {}


def _responses_v03(pick: Pick[Any], calls: list[Any], turn: int) -> Content:
    kwargs: dict[str, Any] = {
        "reasoning": {"type": "reasoning", "id": f"rs_{turn}", "summary": []},
        "__openai_function_call_ids__": {c["id"]: f"fc_{turn}{n}" for n, c in enumerate(calls)},
    }
    text = pick(["Let me check.", None])
    return ([{"type": "text", "text": text}] if text else []), kwargs


def _gemini(pick: Pick[Any], calls: list[Any], turn: int) -> Content:
    thought = {"type": "thinking", "thinking": "Hmm.", "signature": f"gemini:{turn}"}
    return [thought, {"type": "text", "text": pick(REPLY_TEXTS)}], {}


def _converse(pick: Pick[Any], calls: list[Any], turn: int) -> Content:
    reasoning = {
        "type": "reasoning_content",
        "reasoning_content": {"text": "Hmm.", "signature": f"bedrock:{turn}"},
    }
    return [reasoning, {"type": "text", "text": pick(REPLY_TEXTS)}], {}


@st.composite
def mixed_history(draw: st.DrawFn) -> list[BaseMessage]:
    def pick(options: Sequence[Any]) -> Any:
        return draw(st.sampled_from(list(options)))

    return build_history(pick)


def sampled_histories(count: int) -> list[list[BaseMessage]]:
    """`count` histories from fixed seeds: the same in every process."""
    return [build_history(_seeded_pick(seed)) for seed in range(count)]


def _seeded_pick(seed: int) -> Pick[Any]:
    rng = random.Random(seed)

    def pick(options: Sequence[Any]) -> Any:
        return rng.choice(list(options))

    return pick

"""Properties of the content rules on generated histories holding media: the same
guarantees as the pairing repair (deterministic, idempotent, prefix-stable, no
change no copy) and no removed payload left anywhere."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from langgraph_checkpoint_repair.engine.hygiene import in_flight_ai
from langgraph_checkpoint_repair.engine.media import apply_content_rules
from langgraph_checkpoint_repair.engine.media.blocks import find_media
from langgraph_checkpoint_repair.engine.media.rules import rules_for
from tests.support.media import b64, block_forms, document_forms, png_of_size

WIDE = b64(png_of_size(9000, 2, 400))
SMALL = b64(png_of_size(40, 40, 500))
DOCX = b64(b"PK\x03\x04" + b"w" * 300)
BLOCKS = [
    *block_forms(WIDE, "image/png").values(),
    *block_forms(SMALL, "image/png").values(),
    *document_forms(DOCX, "application/msword").values(),
    {"type": "text", "text": "a caption"},
    {"type": "image", "url": "https://example.com/x.png"},
]
POLICIES = [
    RepairPolicy(provider="anthropic"),
    RepairPolicy(provider="openai"),
    RepairPolicy(provider="bedrock", max_result_chars=300),
    RepairPolicy(model_profile={"image_inputs": False}),
    RepairPolicy(model_profile={"image_tool_message": False}, max_result_chars=250),
]


@st.composite
def histories(draw: Any) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for turn in range(draw(st.integers(1, 5))):
        content = draw(st.lists(st.sampled_from(BLOCKS), max_size=3))
        messages.append(HumanMessage(content=[*content] or "hi", id=f"h{turn}"))
        calls = draw(st.integers(0, 2))
        ids = [f"c{turn}_{n}" for n in range(calls)]
        messages.append(AIMessage(
            content=draw(st.lists(st.sampled_from(BLOCKS), max_size=2)) or "",
            tool_calls=[{"name": "t", "args": {}, "id": i} for i in ids], id=f"a{turn}",
        ))  # fmt: skip
        for i in ids:
            if draw(st.booleans()):
                blocks = draw(st.lists(st.sampled_from(BLOCKS), max_size=2))
                text = "r" * draw(st.sampled_from([5, 400, 2000]))
                messages.append(ToolMessage(content=blocks or text, tool_call_id=i, name="t"))
    return messages


def payloads(message: BaseMessage) -> list[str]:
    content = message.content if isinstance(message.content, list) else []
    return [m.data for m in map(find_media, content) if m is not None]


@settings(max_examples=150, deadline=None)
@given(histories(), st.sampled_from(POLICIES))
def test_idempotent_deterministic_and_nothing_removed_remains(
    history: list[BaseMessage], policy: RepairPolicy
) -> None:
    first = repair_messages(history, policy=policy)
    again = repair_messages(history, policy=policy)
    assert first.messages == again.messages and first.actions == again.actions
    second = repair_messages(first.messages, policy=policy)
    assert not second.changed and second.messages is first.messages
    kept = {data for m in first.messages for data in payloads(m)}
    removed = {data for m in history for data in payloads(m)} - kept
    dumped = json.dumps([m.model_dump() for m in first.messages], default=str)
    assert not any(data in dumped for data in removed)


@settings(max_examples=100, deadline=None)
@given(histories(), st.sampled_from(POLICIES), st.data())
def test_prefix_stable(history: list[BaseMessage], policy: RepairPolicy, data: Any) -> None:
    """A finished turn is repaired the same whatever follows it, so provider prompt
    caches keep hitting."""
    starts = [n for n, m in enumerate(history) if isinstance(m, HumanMessage)]
    cut = data.draw(st.sampled_from(starts[1:] or [len(history)]))
    whole = repair_messages(history, policy=policy).messages
    prefix = repair_messages(history[:cut], policy=policy).messages
    assert whole[: len(prefix)] == prefix


@settings(max_examples=150, deadline=None)
@given(histories(), st.sampled_from(POLICIES), st.booleans())
def test_what_the_walk_lists_is_what_a_whole_look_finds(
    history: list[BaseMessage], policy: RepairPolicy, in_flight: bool
) -> None:
    """The pairing walk lists the messages the content rules read; reading every
    message instead (the reference) gives the same history."""
    earlier = replace(policy, media="keep", max_result_chars=None, model_profile=None)
    paired = repair_messages(history, policy=earlier, in_flight=in_flight).messages
    rules = rules_for(
        policy.provider, policy.model_profile, policy.media, policy.max_result_chars, "en"
    )
    whole, _ = apply_content_rules(paired, rules, in_flight_ai(paired, in_flight), None)
    assert repair_messages(history, policy=policy, in_flight=in_flight).messages == whole

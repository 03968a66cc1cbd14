"""One test per provider-hygiene rule, each on a named history with its exact outcome,
checked against the request the provider's real converter builds from it."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_checkpoint_repair import HistoryError, RepairAction, RepairPolicy, repair_messages
from langgraph_checkpoint_repair.engine.hygiene.ids import derived_id
from langgraph_checkpoint_repair.engine.policy import PROVIDERS, policy_from_settings
from tests.support.histories import ai, human, tool
from tests.support.oracle import needs_anthropic_id_mapping
from tests.support.provider_oracle import REQUEST_PROBLEMS

ANTHROPIC = RepairPolicy(provider="anthropic")
OPENAI = RepairPolicy(provider="openai")
RESPONSES = RepairPolicy(provider="openai-responses")
SIGNED = {"type": "thinking", "thinking": "Let me look.", "signature": "claude:EqQBCkYI"}


def kinds(actions: tuple[RepairAction, ...]) -> list[str]:
    return [a.kind for a in actions]


def claude(id: str, *blocks: dict[str, Any], calls: tuple[str, ...] = ()) -> AIMessage:
    """An Anthropic reply: its blocks, then a tool_use block per call."""
    tool_calls: list[Any] = [{"name": "get_weather", "args": {}, "id": c} for c in calls]
    uses = [{"type": "tool_use", "id": c, "name": "get_weather", "input": {}} for c in calls]
    return AIMessage(
        [*blocks, *uses],
        id=id,
        tool_calls=tool_calls,
        response_metadata={"model_provider": "anthropic"},
    )


def assert_accepted(provider: str, messages: list[BaseMessage]) -> None:
    assert REQUEST_PROBLEMS[provider](messages) == []


# The policy


def test_unknown_provider_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="provider"):
        RepairPolicy(provider="gemini")  # type: ignore[arg-type]


def test_provider_from_settings() -> None:
    assert policy_from_settings(["provider=anthropic"]).provider == "anthropic"
    assert policy_from_settings(["provider=none"]) == RepairPolicy()
    with pytest.raises(ValueError, match="provider"):
        policy_from_settings(["provider=claude"])


def test_a_clean_history_is_the_same_list_for_every_provider() -> None:
    history = [human("a"), ai("a1", "call_1"), tool("call_1"), ai("a2", text="done")]
    for provider in PROVIDERS:
        result = repair_messages(history, policy=RepairPolicy(provider=provider))
        assert result.messages is history
        assert (result.changed, result.actions) == (False, ())


def test_portable_actions_keep_their_json_form() -> None:
    assert "detail" not in RepairAction("placeholder", "c1", "t", 1).to_dict()
    renamed = RepairAction("id_renamed", "c1", "t", 1, "renamed to call_x")
    assert renamed.to_dict()["detail"] == "renamed to call_x"


# I1-I3: tool-call ids


def test_a_reused_id_is_renamed_in_the_later_turn_with_its_result() -> None:
    history = [
        human("a"),
        claude("a1", SIGNED, calls=("call_0",)),
        tool("call_0", id="r1"),
        human("b"),
        claude("a2", {**SIGNED, "signature": "claude:2"}, calls=("call_0",)),
        tool("call_0", id="r2"),
        human("c"),
    ]
    result = repair_messages(history, policy=ANTHROPIC)
    new = derived_id("call_0", 1)
    assert result.actions == (
        RepairAction("id_renamed", "call_0", "get_weather", 4, f"renamed to {new}"),
    )
    first, second = result.messages[1], result.messages[4]
    assert isinstance(second, AIMessage)
    assert first is history[1]
    assert [c["id"] for c in second.tool_calls] == [new]
    assert second.content[1] == {"type": "tool_use", "id": new, "name": "get_weather", "input": {}}
    assert second.content[0] is history[4].content[0]  # T3: signed block untouched
    assert result.messages[5].tool_call_id == new  # type: ignore[attr-defined]
    assert_accepted("anthropic", result.messages)
    assert REQUEST_PROBLEMS["anthropic"](history) != []


def test_renamed_ids_are_the_same_in_every_process() -> None:
    expected = hashlib.sha256(b"call_0\x001\x000").hexdigest()[:24]
    assert derived_id("call_0", 1) == f"call_{expected}"


def test_an_in_flight_call_keeps_a_reused_id() -> None:
    history = [human("a"), ai("a1", "call_0"), tool("call_0"), human("b"), ai("a2", "call_0")]
    flagged = repair_messages(history, policy=ANTHROPIC, in_flight=True)
    assert flagged.messages is history
    finished = repair_messages(history, policy=ANTHROPIC)
    assert kinds(finished.actions) == ["placeholder", "id_renamed"]
    assert_accepted("anthropic", finished.messages)


@pytest.mark.parametrize(
    ("provider", "bad", "good"),
    [
        ("openai", "call_" + "x" * 48, "call_" + "x" * 35),
        ("openai-responses", "mcp_" + "x" * 112, "mcp_" + "x" * 60),
        ("bedrock", "get_weather:0", "tooluse_Ab-1_x"),
    ],
)
def test_an_id_the_provider_refuses_is_renamed(provider: str, bad: str, good: str) -> None:
    history = [human("a"), ai("a1", good, bad), tool(good), tool(bad), human("b")]
    result = repair_messages(history, policy=RepairPolicy(provider=provider))  # type: ignore[arg-type]
    assert result.actions == (
        RepairAction("id_renamed", bad, f"t_{bad}", 1, f"renamed to {derived_id(bad, 0)}"),
    )
    assert_accepted(provider, result.messages)
    assert REQUEST_PROBLEMS[provider](history) != []


@pytest.mark.parametrize(
    "provider", [pytest.param("anthropic", marks=needs_anthropic_id_mapping), "mistral"]
)
def test_ids_the_converter_maps_itself_are_left_to_it(provider: str) -> None:
    history = [human("a"), ai("a1", "functions.write_todos:0"), tool("functions.write_todos:0")]
    result = repair_messages(history, policy=RepairPolicy(provider=provider))  # type: ignore[arg-type]
    assert result.messages is history
    assert_accepted(provider, history)


def test_mistral_still_needs_unique_ids() -> None:
    history = [human("a"), ai("a1", "call_0"), tool("call_0"), ai("a2", "call_0"), tool("call_0")]
    result = repair_messages(history, policy=RepairPolicy(provider="mistral"))
    assert kinds(result.actions) == ["id_renamed"]
    assert_accepted("mistral", result.messages)


def test_a_rename_reaches_every_place_the_id_lives() -> None:
    """Responses content blocks, raw OpenAI tool calls, and the fc_ item id map."""
    old = "mcp_" + "y" * 80
    message = AIMessage(
        [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": old, "name": "t", "arguments": "{}", "id": "fc_1"},
            {"type": "tool_call", "id": old, "name": "t", "args": {}},
        ],
        id="a1",
        tool_calls=[{"name": "t", "args": {}, "id": old}],
        additional_kwargs={
            "tool_calls": [{"id": old, "type": "function", "function": {"name": "t"}}],
            "__openai_function_call_ids__": {old: "fc_1"},
        },
        response_metadata={"model_provider": "openai"},
    )
    history = [human("a"), message, tool(old), human("b")]
    renamed = repair_messages(history, policy=RESPONSES).messages[1]
    new = derived_id(old, 0)
    assert isinstance(renamed, AIMessage)
    assert renamed.content[0] is message.content[0]
    assert renamed.content[1]["call_id"] == new  # type: ignore[index]
    assert renamed.content[1]["id"] == "fc_1"  # type: ignore[index]
    assert renamed.content[2]["id"] == new  # type: ignore[index]
    assert renamed.additional_kwargs["tool_calls"][0]["id"] == new
    assert renamed.additional_kwargs["__openai_function_call_ids__"] == {new: "fc_1"}
    assert renamed.tool_calls[0]["name"] == "t"


# T1-T3: Anthropic thinking


def test_an_unsigned_thinking_block_is_removed_and_signed_ones_stay() -> None:
    cut = {"type": "thinking", "thinking": "The user wants"}
    history = [human("a"), claude("a1", SIGNED, cut, {"type": "text", "text": "Hi"}), human("b")]
    result = repair_messages(history, policy=ANTHROPIC)
    assert result.actions == (
        RepairAction("thinking_dropped", None, None, 1, "thinking block without a signature"),
    )
    kept = result.messages[1].content
    assert kept == [SIGNED, {"type": "text", "text": "Hi"}]
    assert kept[0] is history[1].content[0]
    assert_accepted("anthropic", result.messages)
    assert REQUEST_PROBLEMS["anthropic"](history) != []


@pytest.mark.parametrize(
    "block",
    [
        {"type": "thinking", "thinking": "x", "signature": ""},
        {"type": "thinking", "thinking": "x", "signature": None},
        {"type": "redacted_thinking", "data": ""},
    ],
)
def test_blocks_claude_cannot_verify_are_removed(block: dict[str, Any]) -> None:
    history = [human("a"), claude("a1", block), human("b")]
    result = repair_messages(history, policy=ANTHROPIC)
    assert kinds(result.actions) == ["thinking_dropped"]
    assert result.messages[1].content == []
    assert_accepted("anthropic", result.messages)


def test_a_signed_block_with_empty_text_is_valid() -> None:
    history = [human("a"), claude("a1", {**SIGNED, "thinking": ""}), human("b")]
    assert repair_messages(history, policy=ANTHROPIC).messages is history


@pytest.mark.parametrize(
    ("origin", "block", "kind"),
    [
        (
            "google_genai",
            {"type": "thinking", "thinking": "x", "signature": "gemini:Cq"},
            "thinking_dropped",
        ),
        (
            "bedrock_converse",
            {"type": "reasoning_content", "reasoning_content": {"text": "x"}},
            "reasoning_dropped",
        ),
    ],
)
def test_another_providers_reasoning_is_removed(
    origin: str, block: dict[str, Any], kind: str
) -> None:
    message = AIMessage(
        [block, {"type": "text", "text": "Sunny."}],
        id="a1",
        response_metadata={"model_provider": origin},
    )
    history = [human("a"), message, human("b")]
    result = repair_messages(history, policy=ANTHROPIC)
    assert kinds(result.actions) == [kind]
    assert result.messages[1].content == [{"type": "text", "text": "Sunny."}]
    assert_accepted("anthropic", result.messages)
    assert REQUEST_PROBLEMS["anthropic"](history) != []


def test_the_in_flight_turn_keeps_even_an_unsigned_block() -> None:
    cut = {"type": "thinking", "thinking": "The user wants"}
    history = [human("a"), claude("a1", cut, calls=("call_1",))]
    assert repair_messages(history, policy=ANTHROPIC, in_flight=True).messages is history


# C1-C3: Anthropic empty contents


@pytest.mark.parametrize("content", ["", "  \n", [], [{"type": "text", "text": " "}]])
def test_an_empty_user_message_is_filled(content: Any) -> None:
    history = [HumanMessage(content, id="h1"), ai("a1", text="Hello.")]
    result = repair_messages(history, policy=ANTHROPIC)
    assert result.actions == (RepairAction("content_filled", None, None, 0, "empty human message"),)
    assert result.messages[0].content == "(empty message)"
    assert result.messages[0].id == "h1"
    assert_accepted("anthropic", result.messages)
    assert REQUEST_PROBLEMS["anthropic"](history) != []


def test_fill_texts_follow_the_language() -> None:
    policy = RepairPolicy(provider="anthropic", language="zh")
    assert repair_messages([HumanMessage("")], policy=policy).messages[0].content == "（空消息）"


def test_a_user_message_with_an_image_is_not_empty() -> None:
    image = {"type": "image", "source_type": "url", "url": "https://example.com/a.png"}
    history = [HumanMessage([{"type": "text", "text": ""}, image]), ai("a1", text="A cat.")]
    assert repair_messages(history, policy=ANTHROPIC).messages is history


def test_a_blank_assistant_turn_is_cleared_unless_final() -> None:
    history = [human("a"), ai("a1", text="  "), human("b"), ai("a2", text=" \n")]
    result = repair_messages(history, policy=ANTHROPIC)
    assert result.actions == (
        RepairAction("content_cleared", None, None, 1, "whitespace-only assistant text"),
    )
    assert result.messages[1].content == ""
    assert result.messages[3] is history[3]
    assert_accepted("anthropic", result.messages)


def test_an_empty_error_result_is_filled() -> None:
    failed = ToolMessage("", tool_call_id="c1", status="error", id="r1")
    empty_ok = ToolMessage("", tool_call_id="c2", id="r2")
    history = [human("a"), ai("a1", "c1", "c2"), failed, empty_ok, human("b")]
    result = repair_messages(history, policy=ANTHROPIC)
    assert result.actions == (RepairAction("content_filled", "c1", None, 2, "empty error result"),)
    assert result.messages[2].content == "The tool failed without an error message."
    assert result.messages[3] is empty_ok
    assert_accepted("anthropic", result.messages)


# R1-R4: OpenAI Responses reasoning


def responses_reply(*blocks: dict[str, Any], calls: tuple[str, ...] = ()) -> AIMessage:
    tool_calls: list[Any] = [{"name": "t", "args": {}, "id": c} for c in calls]
    return AIMessage(
        list(blocks), id="a1", tool_calls=tool_calls, response_metadata={"model_provider": "openai"}
    )


REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}


def function_call(call_id: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "t",
        "arguments": "{}",
        "id": "fc_1",
    }


def test_reasoning_left_last_by_a_cut_stream_is_removed() -> None:
    history = [human("a"), responses_reply({"type": "text", "text": "Hi"}, REASONING), human("b")]
    result = repair_messages(history, policy=RESPONSES)
    assert kinds(result.actions) == ["reasoning_dropped"]
    assert result.messages[1].content == [{"type": "text", "text": "Hi"}]
    assert_accepted("openai-responses", result.messages)
    assert REQUEST_PROBLEMS["openai-responses"](history) != []


def test_reasoning_before_its_item_stays() -> None:
    history = [
        human("a"),
        responses_reply(REASONING, function_call("call_1"), calls=("call_1",)),
        tool("call_1"),
    ]
    assert repair_messages(history, policy=RESPONSES).messages is history


def test_a_dropped_call_takes_its_block_and_then_its_reasoning() -> None:
    """`dangling="drop_call"` removes every trace of the call, its reasoning item with it,
    so the provider setting finds nothing more to do."""
    history = [
        human("a"),
        responses_reply(REASONING, function_call("call_1"), calls=("call_1",)),
        human("b"),
    ]
    policy = RepairPolicy(provider="openai-responses", dangling="drop_call")
    result = repair_messages(history, policy=policy)
    assert kinds(result.actions) == ["call_dropped"]
    assert result.messages[1].content == []
    assert_accepted("openai-responses", result.messages)
    portable = repair_messages(history, policy=RepairPolicy(dangling="drop_call"))
    assert portable.messages == result.messages


def test_a_stored_call_block_without_its_call_goes_and_then_its_reasoning() -> None:
    """A `function_call` block stored without its entry in `tool_calls` (written by another
    tool) is still sent by the Responses converter, as a call that nothing answers."""
    history = [human("a"), responses_reply(REASONING, function_call("call_1")), human("b")]
    result = repair_messages(history, policy=RESPONSES)
    assert kinds(result.actions) == ["call_block_dropped", "reasoning_dropped"]
    assert result.messages[1].content == []
    assert_accepted("openai-responses", result.messages)
    assert REQUEST_PROBLEMS["openai-responses"](history) != []


def test_a_stored_v03_reasoning_item_without_a_follower_is_removed() -> None:
    message = AIMessage(
        [],
        id="a1",
        additional_kwargs={"reasoning": {"type": "reasoning", "id": "rs_1", "summary": []}},
        response_metadata={"model_provider": "openai"},
    )
    history = [human("a"), message, human("b")]
    result = repair_messages(history, policy=RESPONSES)
    assert kinds(result.actions) == ["reasoning_dropped"]
    assert "reasoning" not in result.messages[1].additional_kwargs
    assert_accepted("openai-responses", result.messages)


@pytest.mark.parametrize(
    ("block", "origin"),
    [
        ({"type": "reasoning", "reasoning": "x", "extras": {"signature": "claude:1"}}, "anthropic"),
        ({"type": "reasoning", "reasoning": "x"}, "openai"),
    ],
)
def test_reasoning_the_responses_api_cannot_replay_is_removed(
    block: dict[str, Any], origin: str
) -> None:
    message = AIMessage(
        [block, {"type": "text", "text": "Hi"}],
        id="a1",
        response_metadata={"model_provider": origin},
    )
    result = repair_messages([human("a"), message, human("b")], policy=RESPONSES)
    assert kinds(result.actions) == ["reasoning_dropped"]
    assert_accepted("openai-responses", result.messages)


# O1: OpenAI Chat Completions


def test_chat_completions_loses_reasoning_and_redacted_thinking_blocks() -> None:
    message = responses_reply(
        REASONING, {"type": "redacted_thinking", "data": "abc"}, {"type": "text", "text": "Hi"}
    )
    history = [human("a"), message, human("b")]
    result = repair_messages(history, policy=OPENAI)
    assert kinds(result.actions) == ["reasoning_dropped", "thinking_dropped"]
    assert result.messages[1].content == [{"type": "text", "text": "Hi"}]
    assert_accepted("openai", result.messages)
    assert REQUEST_PROBLEMS["openai"](history) != []


# Strict mode


def test_strict_mode_reports_pairing_and_hygiene_and_changes_nothing() -> None:
    cut = {"type": "thinking", "thinking": "The user wants"}
    history = [human("a"), claude("a1", cut, calls=("call_1",)), human("b")]
    policy = RepairPolicy(provider="anthropic", strict=True)
    with pytest.raises(HistoryError) as caught:
        repair_messages(history, policy=policy)
    assert kinds(caught.value.actions) == ["placeholder", "thinking_dropped"]
    assert history[1].content[0] == cut

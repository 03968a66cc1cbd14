"""One test per repair rule, each on a named history with its exact expected output."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_checkpoint_repair import (
    MARKER_KEY,
    HistoryError,
    PendingCall,
    RepairAction,
    RepairPolicy,
    is_synthetic,
    repair_messages,
)
from tests.support.histories import ai, human, tool
from tests.support.oracle import assert_valid, needs_anthropic_invalid_calls, violations


def ids(messages: list[BaseMessage]) -> list[str | None]:
    return [m.id for m in messages]


def test_valid_history_is_returned_as_the_same_objects() -> None:
    history = [human("a"), ai("a1", "c1", "c2"), tool("c2"), tool("c1"), ai("a2", text="done")]
    result = repair_messages(history)
    assert result.changed is False
    assert result.actions == ()
    assert result.messages is history


def test_dangling_call_gets_a_placeholder_after_its_block_in_call_order() -> None:
    history = [human("a"), ai("a1", "c1", "c2", "c3"), tool("c2"), human("b")]
    result = repair_messages(history)
    assert ids(result.messages) == ["h-a", "a1", "r-c2", "repair-c1-a1", "repair-c3-a1", "h-b"]
    assert [a.kind for a in result.actions] == ["placeholder", "placeholder"]
    assert result.actions[0] == RepairAction("placeholder", "c1", "t_c1", 1)
    assert_valid(result.messages)


def test_placeholder_is_a_marked_error_result_with_the_default_text() -> None:
    result = repair_messages([human("a"), ai("a1", "c1"), human("b")])
    placeholder = result.messages[2]
    assert isinstance(placeholder, ToolMessage)
    assert placeholder.status == "error"
    assert placeholder.name == "t_c1"
    assert placeholder.tool_call_id == "c1"
    assert placeholder.id == "repair-c1-a1"
    assert placeholder.response_metadata[MARKER_KEY] == {"synthetic": True, "reason": "cancelled"}
    assert placeholder.content == (
        "Tool call 't_c1' (id c1) was cancelled before it completed; no result is available."
    )
    assert is_synthetic(placeholder)


def test_placeholder_id_without_an_ai_message_id_derives_from_its_position() -> None:
    message = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "c9"}])
    result = repair_messages([message])
    assert result.messages[1].id == "repair-c9-0"


@needs_anthropic_invalid_calls
def test_invalid_call_gets_a_text_asking_for_valid_arguments() -> None:
    result = repair_messages([human("a"), ai("a1", invalid=("c1",)), human("b")])
    placeholder = result.messages[2]
    assert isinstance(placeholder, ToolMessage)
    assert "could not be parsed" in str(placeholder.content)
    assert placeholder.response_metadata[MARKER_KEY]["reason"] == "invalid_arguments"
    assert_valid(result.messages)


def test_chinese_default_text() -> None:
    policy = RepairPolicy(language="zh")
    result = repair_messages([ai("a1", "c1")], policy=policy)
    expected = "工具调用 't_c1'（id c1）在完成之前已被取消，没有可用的结果。"
    assert result.messages[1].content == expected


def test_template_placeholder() -> None:
    policy = RepairPolicy(placeholder="{name} stopped: {reason}")
    result = repair_messages([ai("a1", "c1")], policy=policy)
    assert result.messages[1].content == "t_c1 stopped: cancelled"


def test_callable_placeholder_receives_the_call_and_its_context() -> None:
    seen: list[PendingCall] = []

    def text(call: PendingCall) -> str:
        seen.append(call)
        return f"{call.name}({call.args}) skipped at {call.ai_index}"

    history = [human("a"), ai("a1", "c1")]
    result = repair_messages(history, policy=RepairPolicy(placeholder=text))
    assert result.messages[2].content == "t_c1({'q': 'c1'}) skipped at 1"
    assert seen[0].ai_message is history[1]
    assert seen[0].history is history
    assert seen[0].invalid is False


def test_call_without_id_is_reported_unrepairable_and_left_alone() -> None:
    message = AIMessage("", id="a1", tool_calls=[{"name": "t", "args": {}, "id": None}])
    history = [human("a"), message, human("b")]
    result = repair_messages(history)
    assert result.changed is False
    assert result.messages is history
    assert result.actions == (RepairAction("unrepairable", None, "t", 1),)


def test_misplaced_result_is_moved_into_its_calls_block() -> None:
    history = [human("a"), ai("a1", "c1"), human("b"), tool("c1"), ai("a2", text="ok")]
    result = repair_messages(history)
    assert ids(result.messages) == ["h-a", "a1", "r-c1", "h-b", "a2"]
    assert result.actions == (RepairAction("moved", "c1", "t_c1", 3),)
    assert result.messages[2] is history[3]
    assert_valid(result.messages)


def test_orphan_result_is_dropped() -> None:
    history = [human("a"), tool("zz"), ai("a1", text="hi")]
    result = repair_messages(history)
    assert ids(result.messages) == ["h-a", "a1"]
    assert result.actions == (RepairAction("orphan_dropped", "zz", None, 1),)


def test_orphans_keep_leaves_them() -> None:
    history = [human("a"), tool("zz"), ai("a1", text="hi")]
    result = repair_messages(history, policy=RepairPolicy(orphans="keep"))
    assert result.messages is history
    assert result.changed is False


def test_duplicate_result_is_dropped() -> None:
    history = [ai("a1", "c1"), tool("c1"), tool("c1", "again", id="dup"), human("b")]
    result = repair_messages(history)
    assert ids(result.messages) == ["a1", "r-c1", "h-b"]
    assert result.actions == (RepairAction("duplicate_dropped", "c1", None, 2),)


def test_duplicates_keep_leaves_them() -> None:
    history = [ai("a1", "c1"), tool("c1"), tool("c1", "again", id="dup"), human("b")]
    result = repair_messages(history, policy=RepairPolicy(duplicates="keep"))
    assert result.messages is history


def test_real_result_wins_over_an_earlier_synthetic_one() -> None:
    patched = repair_messages([ai("a1", "c1"), human("b")]).messages
    late_real = tool("c1", "the real answer")
    history = [*patched, late_real]
    result = repair_messages(history)
    assert ids(result.messages) == ["a1", "r-c1", "h-b"]
    assert [a.kind for a in result.actions] == ["duplicate_dropped", "moved"]
    assert result.actions[0].index == 1


def test_reused_call_ids_match_turn_by_turn() -> None:
    history = [
        human("a"),
        ai("a1", "call_0"),
        human("b"),
        ai("a2", "call_0"),
        tool("call_0", id="r2"),
        ai("a3", text="done"),
    ]
    result = repair_messages(history)
    assert ids(result.messages) == ["h-a", "a1", "repair-call_0-a1", "h-b", "a2", "r2", "a3"]
    assert_valid(result.messages)


def test_reused_ids_with_every_turn_answered_is_clean() -> None:
    history = [ai("a1", "call_0"), tool("call_0", id="r1"), ai("a2", "call_0"), tool("call_0")]
    assert repair_messages(history).messages is history


def test_two_ai_messages_in_a_row() -> None:
    history = [human("a"), ai("a1", "c1"), ai("a2", "c2"), tool("c2"), tool("c1")]
    result = repair_messages(history)
    assert ids(result.messages) == ["h-a", "a1", "r-c1", "a2", "r-c2"]
    assert_valid(result.messages)


def test_in_flight_leaves_the_trailing_calls_alone() -> None:
    history = [human("a"), ai("a1", "c1", "c2"), tool("c1")]
    result = repair_messages(history, in_flight=True)
    assert result.messages is history
    assert result.changed is False


def test_in_flight_still_repairs_earlier_turns() -> None:
    history = [human("a"), ai("a1", "c0"), human("b"), ai("a2", "c1", "c2"), tool("c1")]
    result = repair_messages(history, in_flight=True)
    assert ids(result.messages) == ["h-a", "a1", "repair-c0-a1", "h-b", "a2", "r-c1"]


def test_in_flight_does_not_cover_calls_followed_by_new_input() -> None:
    history = [human("a"), ai("a1", "c1"), human("changed my mind")]
    result = repair_messages(history, in_flight=True)
    assert [a.kind for a in result.actions] == ["placeholder"]


def test_finished_thread_with_trailing_unanswered_calls_is_repaired() -> None:
    result = repair_messages([human("a"), ai("a1", "c1")])
    assert ids(result.messages) == ["h-a", "a1", "repair-c1-a1"]


def test_drop_call_removes_the_call_from_a_copy() -> None:
    first = ai("a1", "c1", "c2")
    history = [human("a"), first, tool("c2"), human("b")]
    result = repair_messages(history, policy=RepairPolicy(dangling="drop_call"))
    repaired = result.messages[1]
    assert isinstance(repaired, AIMessage)
    assert [c["id"] for c in repaired.tool_calls] == ["c2"]
    assert [c["id"] for c in first.tool_calls] == ["c1", "c2"]
    assert result.actions == (RepairAction("call_dropped", "c1", "t_c1", 1),)
    assert_valid(result.messages)


def test_drop_call_also_removes_provider_content_blocks() -> None:
    message = AIMessage(
        [{"type": "text", "text": "x"}, {"type": "tool_use", "id": "c1", "name": "t", "input": {}}],
        id="a1",
        tool_calls=[{"name": "t", "args": {}, "id": "c1"}],
        additional_kwargs={"tool_calls": [{"id": "c1", "type": "function"}]},
    )
    result = repair_messages([message, human("b")], policy=RepairPolicy(dangling="drop_call"))
    repaired = result.messages[0]
    assert repaired.content == [{"type": "text", "text": "x"}]
    assert repaired.additional_kwargs == {"tool_calls": []}
    assert violations(result.messages) == []


def test_strict_mode_raises_with_the_actions_and_changes_nothing() -> None:
    history = [human("a"), ai("a1", "c1"), human("b")]
    before = [m.model_copy(deep=True) for m in history]
    with pytest.raises(HistoryError) as caught:
        repair_messages(history, policy=RepairPolicy(strict=True))
    assert caught.value.actions == (RepairAction("placeholder", "c1", "t_c1", 1),)
    assert history == before


def test_strict_mode_accepts_a_valid_history() -> None:
    history = [human("a"), ai("a1", "c1"), tool("c1")]
    assert repair_messages(history, policy=RepairPolicy(strict=True)).messages is history


def test_input_messages_are_never_mutated() -> None:
    history = [human("a"), ai("a1", "c1", "c2"), tool("c2"), human("b"), tool("zz")]
    before = [m.model_copy(deep=True) for m in history]
    repair_messages(history)
    repair_messages(history, policy=RepairPolicy(dangling="drop_call"))
    assert history == before


@needs_anthropic_invalid_calls
def test_repair_is_idempotent_on_a_messy_history() -> None:
    history = [
        tool("early"),
        human("a"),
        ai("a1", "c1", "c2", invalid=("c3",)),
        tool("c2"),
        human("b"),
        tool("c1"),
        tool("c1", id="dup"),
        ai("a2", "c4"),
    ]
    once = repair_messages(history)
    twice = repair_messages(once.messages)
    assert twice.changed is False
    assert twice.messages is once.messages
    assert_valid(once.messages)


def test_a_tuple_input_is_accepted() -> None:
    history = (human("a"), ai("a1", "c1"))
    assert len(repair_messages(history).messages) == 3


def test_non_message_items_raise_a_type_error() -> None:
    with pytest.raises(TypeError, match="item 1 is a dict"):
        repair_messages([human("a"), {"role": "tool"}])  # type: ignore[list-item]


def test_bad_policy_values_are_rejected() -> None:
    with pytest.raises(ValueError, match="dangling"):
        RepairPolicy(dangling="ignore")  # type: ignore[arg-type]


def test_the_storage_knobs_are_keywords_of_the_one_policy() -> None:
    """The engine's policy inherits what only the loader and the stores read: a user
    still writes one `RepairPolicy`, positional fields keep their order, and a bad
    choice of either kind is named with the policy's field."""
    from langgraph_checkpoint_repair.storage_policy import StoragePolicy

    policy = RepairPolicy("drop_call", nul_text="strip", stale_resume="keep")
    assert (policy.dangling, policy.nul_text, policy.stale_resume) == ("drop_call", "strip", "keep")
    assert isinstance(policy, StoragePolicy) and policy.lost_types == "log"
    assert policy == RepairPolicy(dangling="drop_call", nul_text="strip", stale_resume="keep")
    assert hash(policy) == hash(RepairPolicy("drop_call", nul_text="strip", stale_resume="keep"))
    with pytest.raises(ValueError, match=r"RepairPolicy\.nul_text must be one of"):
        RepairPolicy(nul_text="erase")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="positional"):
        RepairPolicy(
            "placeholder",
            "drop",
            "drop",
            None,
            "en",
            False,
            None,
            None,
            "placeholder",
            None,
            None,
            None,
            None,
            "raise",
        )  # type: ignore[call-arg]

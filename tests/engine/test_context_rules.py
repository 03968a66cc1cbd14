"""The token budget (`RepairPolicy(max_input_tokens=...)`): least loss first, one
marker, in-flight turns and the task kept, and the policy's checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_checkpoint_repair import HistoryError, RepairPolicy, repair_messages
from langgraph_checkpoint_repair.engine.policy import policy_from_settings
from tests.support.context import long_task, markers, read_step, tokens
from tests.support.oracle import violations


def kinds(result: Any) -> list[str]:
    return [a.kind for a in result.actions]


@pytest.mark.parametrize(
    ("settings", "error"),
    [
        ({"max_input_tokens": "lots"}, TypeError),
        ({"max_input_tokens": 1.5}, TypeError),
        ({"max_input_tokens": True}, TypeError),
        ({"context_reserve": "some"}, TypeError),
        ({"max_input_tokens": 1000, "token_counter": 42}, TypeError),
        ({"max_input_tokens": 0}, ValueError),
        ({"max_input_tokens": -5}, ValueError),
        ({"max_input_tokens": 1000, "context_reserve": 1000}, ValueError),
        ({"max_input_tokens": 1000, "context_reserve": -1}, ValueError),
        ({"model_profile": {"max_input_tokens": 100}, "context_reserve": 200}, ValueError),
    ],
)
def test_a_wrong_budget_is_refused_when_the_policy_is_made(
    settings: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error, match="RepairPolicy"):
        RepairPolicy(**settings)


def test_the_budget_is_the_window_less_the_reserve() -> None:
    assert RepairPolicy().input_budget is None
    assert RepairPolicy(max_input_tokens=1000).input_budget == 900
    assert RepairPolicy(max_input_tokens=1000, context_reserve=0).input_budget == 1000
    assert RepairPolicy(model_profile={"max_input_tokens": 2000}).input_budget == 1800
    both = RepairPolicy(max_input_tokens=500, model_profile={"max_input_tokens": 2000})
    assert both.input_budget == 450  # max_input_tokens wins
    assert RepairPolicy(model_profile={"max_input_tokens": True}).input_budget is None


def test_settings_take_the_new_keys_and_refuse_a_counter() -> None:
    policy = policy_from_settings(["max_input_tokens=200_000", "context_reserve=20000"])
    assert policy.input_budget == 180_000
    with pytest.raises(ValueError, match="not a number of tokens"):
        policy_from_settings(["max_input_tokens=lots"])
    with pytest.raises(ValueError, match="token_counter is a Python callable"):
        policy_from_settings(["token_counter=len"])


def test_no_budget_changes_nothing_however_long() -> None:
    history = long_task(300, size=4000)
    assert repair_messages(history).messages is history
    assert repair_messages(history, policy=RepairPolicy(max_result_chars=5000)).changed is False


def test_a_history_that_fits_is_the_same_list() -> None:
    history = long_task(10)
    result = repair_messages(history, policy=RepairPolicy(max_input_tokens=tokens(history) + 200))
    assert result.messages is history and not result.changed and result.actions == ()


def test_one_huge_log_in_a_short_thread_is_cut_and_nothing_else_changes() -> None:
    history = long_task(3)
    history[3] = ToolMessage("L" * 1_200_000, tool_call_id="call_0", name="read_file", id="t0")
    policy = RepairPolicy(max_input_tokens=200_000)
    result = repair_messages(history, policy=policy)
    assert kinds(result) == ["result_truncated"]
    assert result.actions[0].index == 3 and result.actions[0].tool_call_id == "call_0"
    cut = result.messages[3]
    assert isinstance(cut, ToolMessage) and cut.tool_call_id == "call_0" and cut.id == "t0"
    assert "characters of this tool result removed" in str(cut.content)
    assert tokens([cut]) <= 180_000 // 4
    assert str(cut.content).startswith("LLLL") and str(cut.content).endswith("LLLL")
    assert all(
        a is b for n, (a, b) in enumerate(zip(history, result.messages, strict=True)) if n != 3
    )
    assert repair_messages(result.messages, policy=policy).messages is result.messages


def test_the_oldest_rounds_after_the_task_go_behind_one_marker_right_after_it() -> None:
    history = long_task(60)
    policy = RepairPolicy(max_input_tokens=3000)
    result = repair_messages(history, policy=policy)
    assert kinds(result) == ["context_trimmed"]
    out = result.messages
    assert tokens(out) <= 2700
    assert out[0] is history[0] and out[1] is history[1]  # system, the task, then the marker
    marker = out[2]
    assert isinstance(marker, HumanMessage) and markers(out) == [marker]
    removed = len(history) + 1 - len(out)
    assert f"[{removed} earlier messages" in str(marker.content)
    assert marker.additional_kwargs["langgraph_checkpoint_repair"]["removed"] == removed
    assert out[3:] == history[len(history) - len(out) + 3 :]  # the newest, as they were
    assert all(a is b for a, b in zip(out[3:], history[-(len(out) - 3) :], strict=True))
    assert out[-1] is history[-1]  # the newest round stays
    assert result.actions[0].index == 2  # the first message removed
    assert "this time" in (result.actions[0].detail or "")
    assert violations(out) == []
    again = repair_messages(history, policy=policy)
    assert again.messages == out and again.messages[2].id == marker.id  # deterministic


def test_older_turns_go_behind_one_marker_right_after_the_system_messages() -> None:
    history: list[BaseMessage] = [SystemMessage("You are a coder.", id="s")]
    for n in range(40):
        history += [HumanMessage(f"Question {n}: " + "lorem " * 150, id=f"q{n}")]
        history += [AIMessage(f"Answer {n}.", id=f"a{n}")]
    out = repair_messages(history, policy=RepairPolicy(max_input_tokens=4000)).messages
    assert out[0] is history[0] and out[1] is markers(out)[0]
    assert out[2:] == history[len(history) - len(out) + 2 :]  # the newest turns, in order
    assert out[-2] is history[-2] and out[-1] is history[-1]


def test_a_later_trim_folds_the_old_marker_into_its_own() -> None:
    policy = RepairPolicy(max_input_tokens=3000)
    first = repair_messages(long_task(60), policy=policy).messages
    grown = first + [m for n in range(60, 100) for m in read_step(n)]
    second = repair_messages(grown, policy=policy).messages
    assert len(markers(second)) == 1 and second[2] is markers(second)[0]
    total = 2 + 200  # system, task and 100 steps of two
    assert markers(second)[0].additional_kwargs["langgraph_checkpoint_repair"]["removed"] == (
        total - (len(second) - 1)
    )
    assert repair_messages(second, policy=policy).messages is second


def test_no_system_message_puts_the_task_first_and_the_marker_after_it() -> None:
    history = long_task(60, system=False)
    out = repair_messages(history, policy=RepairPolicy(max_input_tokens=3000)).messages
    assert out[0] is history[0] and out[1] is markers(out)[0]


def test_the_newest_human_message_stays_wherever_it_stands() -> None:
    history: list[BaseMessage] = [HumanMessage("first question", id="q1")]
    for n in range(20):
        history.extend(read_step(n))
    history.append(HumanMessage("the task now", id="q2"))
    for n in range(20, 40):
        history.extend(read_step(n))
    out = repair_messages(history, policy=RepairPolicy(max_input_tokens=1500)).messages
    assert history[41] in out and history[0] not in out
    # everything before the task went, and the oldest rounds after it: the marker follows it
    assert out[0] is history[41] and out[1] is markers(out)[0]
    assert history[42] not in out and out[-1] is history[-1]
    assert violations(out) == []


def test_the_in_flight_turn_is_never_dropped_and_too_much_is_over_budget() -> None:
    history = long_task(30)
    calls: Any = [{"name": "write", "args": {"text": "w" * 1500}, "id": f"p{n}"} for n in range(3)]
    flying = AIMessage("", id="flying", tool_calls=calls)
    done = ToolMessage("y" * 3000, tool_call_id="p0", name="read_file", id="done")
    history += [flying, done]
    policy = RepairPolicy(max_input_tokens=800, context_reserve=0)
    result = repair_messages(history, policy=policy, in_flight=True)
    # the in-flight turn alone is over the budget: no trim can make it fit, so nothing goes
    assert result.messages is history and not result.changed
    assert kinds(result) == ["over_budget"]
    assert f"{tokens(history):,} tokens, over the budget of 800" in (result.actions[0].detail or "")
    again = repair_messages(result.messages, policy=policy, in_flight=True)
    assert again.messages is history and kinds(again) == ["over_budget"]


def test_a_pasted_log_keeps_the_answer_after_it() -> None:
    """A task larger than the budget: dropping the model's answer would not make it
    fit, so the answer stays and the history is reported over budget, every time."""
    log = HumanMessage("build log line\n" * 70_000, id="paste")
    answer = AIMessage("The build fails at step 3.", id="answer")
    history: list[BaseMessage] = [log, answer]
    policy = RepairPolicy(max_input_tokens=200_000, context_reserve=20_000)
    result = repair_messages(history, policy=policy)
    assert result.messages is history and not result.changed
    assert kinds(result) == ["over_budget"]
    assert repair_messages(result.messages, policy=policy).messages is history


def test_a_cut_that_does_not_make_it_fit_is_not_made() -> None:
    """A long tool result would be cut to a quarter, but the task alone is over: the
    result stays whole (nothing goes for nothing)."""
    history: list[BaseMessage] = [HumanMessage("t" * 40_000, id="task"), *read_step(0, 20_000)]
    result = repair_messages(history, policy=RepairPolicy(max_input_tokens=5_000))
    assert result.messages is history and kinds(result) == ["over_budget"]


def test_over_budget_alone_changes_nothing() -> None:
    history: list[BaseMessage] = [HumanMessage("z" * 10_000, id="only")]
    result = repair_messages(history, policy=RepairPolicy(max_input_tokens=500))
    assert result.messages is history and not result.changed and kinds(result) == ["over_budget"]


def test_strict_mode_lists_the_actions_and_changes_nothing() -> None:
    history = long_task(60)
    history.pop(5)  # a call without its result
    before = list(history)
    with pytest.raises(HistoryError) as raised:
        repair_messages(history, policy=RepairPolicy(max_input_tokens=3000, strict=True))
    assert [a.kind for a in raised.value.actions] == ["placeholder", "context_trimmed"]
    assert history == before


def test_the_pairing_repair_runs_in_the_same_pass() -> None:
    history = long_task(60)
    del history[-1]  # the last call dangles
    result = repair_messages(history, policy=RepairPolicy(max_input_tokens=3000))
    assert kinds(result) == ["placeholder", "context_trimmed"]
    assert result.messages[-2] is history[-1] and violations(result.messages) == []


def test_a_counter_that_does_not_add_up_is_checked_on_the_whole() -> None:
    def per_request(messages: Sequence[BaseMessage]) -> int:  # a fixed cost per request
        return 100 + sum(len(str(m.content)) // 4 for m in messages)

    history = long_task(60)
    result = repair_messages(
        history, policy=RepairPolicy(max_input_tokens=2000, token_counter=per_request)
    )
    assert kinds(result) == ["context_trimmed"]
    assert per_request(result.messages) <= 1800
    assert per_request(result.messages[:1] + result.messages[3:]) > 1800 - 200  # not over-trimmed


def test_len_as_the_counter_keeps_a_number_of_messages() -> None:
    history = long_task(60)
    out = repair_messages(history, policy=RepairPolicy(max_input_tokens=20, token_counter=len))
    assert len(out.messages) <= 18 and violations(out.messages) == []


def test_the_model_profile_brings_the_window() -> None:
    history = long_task(60)
    policy = RepairPolicy(model_profile={"max_input_tokens": 3000})
    assert not policy.rewrites_content  # a window alone reads no media
    assert kinds(repair_messages(history, policy=policy)) == ["context_trimmed"]
    with_media = RepairPolicy(model_profile={"max_input_tokens": 3000, "image_inputs": True})
    assert repair_messages(history, policy=with_media).messages == (
        repair_messages(history, policy=policy).messages
    )

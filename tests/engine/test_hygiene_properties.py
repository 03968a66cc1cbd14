"""Property tests for provider hygiene: generated mixed-provider histories, repaired for
each provider, pass that provider's rules on the request its real converter builds;
and the engine's guarantees hold (idempotent, no change no copy, in flight untouched,
prefix-stable, the same output in every process)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_checkpoint_repair import RepairPolicy, RepairResult, is_synthetic, repair_messages
from langgraph_checkpoint_repair.engine.policy import PROVIDERS
from tests.support.mixed_histories import mixed_history, sampled_histories
from tests.support.oracle import needs_anthropic_id_mapping, needs_anthropic_invalid_calls
from tests.support.provider_oracle import REQUEST_PROBLEMS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
policies = st.builds(
    RepairPolicy,
    provider=st.sampled_from(PROVIDERS),
    dangling=st.sampled_from(["placeholder", "drop_call"]),
)


def dump(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [m.model_dump() for m in messages]


@needs_anthropic_id_mapping
@needs_anthropic_invalid_calls
@SETTINGS
@given(mixed_history(), policies)
def test_repaired_request_passes_the_providers_rules(
    history: list[BaseMessage], policy: RepairPolicy
) -> None:
    repaired = repair_messages(history, policy=policy).messages
    assert policy.provider is not None
    assert REQUEST_PROBLEMS[policy.provider](repaired) == []


@needs_anthropic_id_mapping
@needs_anthropic_invalid_calls
def test_the_generated_histories_do_break_each_provider_before_hygiene() -> None:
    """Without the provider setting, most of these histories still fail each provider."""
    histories = sampled_histories(100)
    for provider, problems in REQUEST_PROBLEMS.items():
        broken = sum(bool(problems(repair_messages(h).messages)) for h in histories)
        assert broken >= 30, provider


@SETTINGS
@given(mixed_history(), policies)
def test_repair_is_idempotent(history: list[BaseMessage], policy: RepairPolicy) -> None:
    once = repair_messages(history, policy=policy)
    twice = repair_messages(once.messages, policy=policy)
    assert twice.changed is False
    assert twice.actions == ()
    assert twice.messages is once.messages


@SETTINGS
@given(mixed_history(), policies)
def test_only_messages_an_action_names_are_copies(
    history: list[BaseMessage], policy: RepairPolicy
) -> None:
    result = repair_messages(history, policy=policy)
    named = {history[a.index].id for a in result.actions}
    new_ids = {a.detail.removeprefix("renamed to ") for a in result.actions if a.detail}
    originals = {id(m) for m in history}
    for message in result.messages:
        if id(message) not in originals and not is_synthetic(message):
            renamed_result = isinstance(message, ToolMessage) and message.tool_call_id in new_ids
            assert message.id in named or renamed_result
    assert result.changed is bool(result.actions)


@SETTINGS
@given(mixed_history(), policies)
def test_the_in_flight_turn_comes_back_as_the_same_objects(
    history: list[BaseMessage], policy: RepairPolicy
) -> None:
    last_ai = _trailing_ai(history)
    repaired = repair_messages(history, policy=policy, in_flight=True).messages
    if last_ai is None:
        return
    position = next(n for n, m in enumerate(repaired) if m is history[last_ai])
    tail = {id(m) for m in history[last_ai:]}
    assert all(id(m) in tail for m in repaired[position:])


def _trailing_ai(history: list[BaseMessage]) -> int | None:
    n = len(history) - 1
    while n >= 0 and isinstance(history[n], ToolMessage):
        n -= 1
    return n if n >= 0 and isinstance(history[n], AIMessage) else None


@SETTINGS
@given(mixed_history(), policies)
def test_repairing_up_to_a_user_message_gives_a_prefix(
    history: list[BaseMessage], policy: RepairPolicy
) -> None:
    whole = dump(repair_messages(history, policy=policy).messages)
    for k in range(1, len(history) + 1):
        if isinstance(history[k - 1], HumanMessage):
            prefix = dump(repair_messages(history[:k], policy=policy).messages)
            assert whole[: len(prefix)] == prefix


def test_provider_none_is_the_portable_engine() -> None:
    assert RepairPolicy(provider=None) == RepairPolicy()
    for history in sampled_histories(40):
        plain, none = repair_messages(history), repair_messages(history, policy=RepairPolicy())
        assert dump(none.messages) == dump(plain.messages)
        assert none.actions == plain.actions


def fingerprint(count: int) -> str:
    """A digest of every sampled history repaired for every provider, actions included."""
    digest = hashlib.sha256()
    for history in sampled_histories(count):
        for provider in PROVIDERS:
            result: RepairResult = repair_messages(history, policy=RepairPolicy(provider=provider))
            record = [dump(result.messages), [a.to_dict() for a in result.actions]]
            digest.update(json.dumps(record, sort_keys=True, default=str).encode())
    return digest.hexdigest()


@pytest.mark.parametrize("seeds", [("1", "2")])
def test_the_same_ids_in_every_process(seeds: tuple[str, str]) -> None:
    script = "from tests.engine.test_hygiene_properties import fingerprint; print(fingerprint(60))"
    root = Path(__file__).resolve().parents[2]
    outputs = []
    for seed in seeds:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout.strip())
    assert outputs[0] == outputs[1] == fingerprint(60)

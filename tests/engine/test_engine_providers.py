"""The real provider converters as oracles: after repair, the request that
langchain-openai (Chat Completions and Responses) and langchain-anthropic would
send pairs every call with one output, for histories whose calls also live in
provider-shaped content blocks."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage

from langgraph_checkpoint_repair import RepairPolicy, repair_messages
from tests.support.generated import messy_history
from tests.support.oracle import (
    anthropic_violations,
    needs_anthropic_invalid_calls,
    openai_violations,
    responses_violations,
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POLICIES = st.sampled_from([RepairPolicy(), RepairPolicy(dangling="drop_call")])


@SETTINGS
@given(messy_history(idless=False), POLICIES)
def test_chat_completions_request_pairs_every_call(
    history: list[BaseMessage], policy: RepairPolicy
) -> None:
    assert openai_violations(repair_messages(history, policy=policy).messages) == []


@SETTINGS
@given(
    messy_history(["plain", "responses", "standard", "legacy"], idless=False, reuse=False), POLICIES
)
def test_responses_request_pairs_every_call(
    history: list[BaseMessage], policy: RepairPolicy
) -> None:
    repaired = repair_messages(history, policy=policy).messages
    assert responses_violations(repaired) == []
    assert all(_reasoning_kept(m) for m in repaired if isinstance(m, AIMessage))


@needs_anthropic_invalid_calls
@SETTINGS
@given(messy_history(["plain", "anthropic", "standard", "legacy"], idless=False), POLICIES)
def test_anthropic_request_pairs_every_call(
    history: list[BaseMessage], policy: RepairPolicy
) -> None:
    assert anthropic_violations(repair_messages(history, policy=policy).messages) == []


def _reasoning_kept(message: AIMessage) -> bool:
    """A call item that stays keeps the reasoning item it followed (else HTTP 400)."""
    blocks = message.content if isinstance(message.content, list) else []
    types = [b.get("type") for b in blocks if isinstance(b, dict)]
    return "function_call" not in types or types.index("reasoning") < types.index("function_call")

"""The content rules in a running agent: the middleware reads the model's own profile,
`pre_model_hook` and the middleware take the policy's limits and cap."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from langgraph_checkpoint_repair import RepairPolicy, pre_model_hook
from langgraph_checkpoint_repair.agents import RepairToolCallsMiddleware
from langgraph_checkpoint_repair.engine.media.blocks import find_media
from tests.support.agents import thread
from tests.support.fakes import CheckingModel
from tests.support.media import b64, png_bytes
from tests.support.needs import needs_model_profiles

if TYPE_CHECKING:
    from langchain_core.language_models import ModelProfile

SCREENSHOT = b64(png_bytes(64, 48))


@tool
def screenshot() -> list[dict[str, Any]]:
    """Take a screenshot."""
    return [{"type": "image", "base64": SCREENSHOT, "mime_type": "image/png"}]


@tool
def dump_log() -> str:
    """Print the whole log."""
    return "start " + "line\n" * 100_000 + " end"


class NoImagesInResults(CheckingModel):
    """Rejects an image in a tool result, as Chat Completions does."""

    def rejection(self, messages: list[BaseMessage]) -> Exception | None:
        for message in messages:
            content = message.content if isinstance(message, ToolMessage) else ""
            if isinstance(content, list) and any(find_media(b) for b in content):
                return ValueError("400 Invalid value: 'image'. Supported values are: 'text'.")
        return None


def media_in(messages: list[BaseMessage]) -> int:
    return sum(
        1 for m in messages if isinstance(m.content, list) for b in m.content if find_media(b)
    )


def agent_with(model: CheckingModel, middleware: RepairToolCallsMiddleware) -> Any:
    graph: CompiledStateGraph[Any] = create_agent(
        model, [screenshot, dump_log], middleware=[middleware], checkpointer=InMemorySaver()
    )
    return graph


def scripted(profile: ModelProfile | None) -> NoImagesInResults:
    replies = iter([
        AIMessage("", tool_calls=[{"name": "screenshot", "args": {}, "id": "s1"}]),
        AIMessage("It shows a login page."),
    ])  # fmt: skip
    settings: dict[str, Any] = {"profile": profile} if profile else {}
    return NoImagesInResults(messages=replies, **settings)


@needs_model_profiles
def test_the_middleware_reads_the_models_profile() -> None:
    model = scripted({"image_tool_message": False, "image_inputs": True})
    agent = agent_with(model, RepairToolCallsMiddleware())
    config = thread()
    out = agent.invoke({"messages": [HumanMessage("What is on screen?")]}, config)
    assert out["messages"][-1].content == "It shows a login page."
    sent = model.received[-1]
    assert media_in(sent) == 0
    assert "image_tool_message is false" in str(sent[2].content)
    assert media_in(agent.get_state(config).values["messages"]) == 1  # the request only


def test_without_the_profile_the_same_run_fails() -> None:
    model = scripted(None)
    agent = agent_with(model, RepairToolCallsMiddleware())
    with pytest.raises(ValueError, match="Invalid value: 'image'"):
        agent.invoke({"messages": [HumanMessage("What is on screen?")]}, thread())


def test_a_policy_profile_is_stored_with_the_next_checkpoint() -> None:
    model = scripted(None)
    policy = RepairPolicy(model_profile={"image_tool_message": False})
    agent = agent_with(model, RepairToolCallsMiddleware(policy=policy))
    config = thread()
    agent.invoke({"messages": [HumanMessage("What is on screen?")]}, config)
    assert media_in(agent.get_state(config).values["messages"]) == 0


@needs_model_profiles
def test_the_middleware_can_leave_the_profile_alone() -> None:
    model = scripted({"image_tool_message": False})
    agent = agent_with(model, RepairToolCallsMiddleware(use_model_profile=False))
    with pytest.raises(ValueError, match="Invalid value: 'image'"):
        agent.invoke({"messages": [HumanMessage("What is on screen?")]}, thread())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_pre_model_hook_cuts_a_huge_tool_output_before_the_model_sees_it() -> None:
    from langgraph.prebuilt import create_react_agent

    replies = iter([
        AIMessage("", tool_calls=[{"name": "dump_log", "args": {}, "id": "d1"}]),
        AIMessage("The log starts and ends fine."),
    ])  # fmt: skip
    model = CheckingModel(messages=replies)
    hook = pre_model_hook(policy=RepairPolicy(max_result_chars=5000))
    agent = create_react_agent(model, [dump_log], checkpointer=InMemorySaver(), pre_model_hook=hook)
    agent.invoke({"messages": [HumanMessage("Show me the log")]}, thread())
    result = model.received[-1][-1]
    assert isinstance(result, ToolMessage) and result.tool_call_id == "d1"
    assert len(str(result.content)) <= 5000
    assert str(result.content).startswith("start") and str(result.content).endswith("end")


def test_the_agent_server_setting_takes_the_content_rules() -> None:
    from langgraph_checkpoint_repair.server import settings_from

    text = (
        "provider=anthropic, media=keep ,max_result_chars=200000,"
        'model_profile={"image_inputs": false, "pdf_inputs": true}'
    )
    policy = settings_from({"LANGGRAPH_REPAIR_POLICY": text})["policy"]
    assert (policy.provider, policy.media, policy.max_result_chars) == (
        "anthropic", "keep", 200_000
    )  # fmt: skip
    assert policy.model_profile == {"image_inputs": False, "pdf_inputs": True}
    with pytest.raises(ValueError, match="not a JSON object"):
        settings_from({"LANGGRAPH_REPAIR_POLICY": "model_profile={image_inputs: false}"})

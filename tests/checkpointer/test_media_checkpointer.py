"""A real thread bricked by content: a tool returned a screenshot over Anthropic's 5 MB
limit. Every later run fails with the provider's error until the wrapper with the
policy loads it, on every saver. Real graphs, agents and savers; only the chat model is
a fake (it checks its input with the provider's LangChain converter)."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.support import media_threads
from tests.support.agents import thread
from tests.support.batch_runs import head_messages
from tests.support.claude_model import AnthropicBadRequest
from tests.support.histories import holds, results
from tests.support.media_model import media_claude
from tests.support.media_threads import (
    ANTHROPIC,
    CALL_ID,
    SHOT,
    TOO_BIG,
    URL,
    Payload,
    agent,
    brick,
    screenshot_tool,
)
from tests.support.stores import Store

big = media_threads.big  # the fixture: a screenshot over Anthropic's limit


async def test_every_later_run_fails_until_the_wrapper_loads_the_thread(
    store: Store, big: Payload
) -> None:
    config = await brick(store, big)
    tools = [screenshot_tool(big)]
    later = {"messages": [HumanMessage("Are you there?", id="h3")]}
    with pytest.raises(AnthropicBadRequest, match=TOO_BIG):
        await store.invoke(agent(media_claude("unused"), store.saver, tools), later, config)
    plain = PatchingCheckpointer(store.saver)  # pairing alone: the history is well paired
    with pytest.raises(AnthropicBadRequest, match=TOO_BIG):
        await store.invoke(agent(media_claude("unused"), plain, tools), later, config)

    model = media_claude("It shows the Example Domain page.")
    wrapper = PatchingCheckpointer(store.saver, policy=ANTHROPIC)
    question = {"messages": [HumanMessage("What did you see?", id="h4")]}
    out = await store.invoke(agent(model, wrapper, tools), question, config)
    assert out["messages"][-1].content == "It shows the Example Domain page."
    (seen,) = results(model.received[-1])
    assert seen.content == [
        {"type": "text", "text": f"Screenshot of {URL}"},
        {"type": "text", "text": big.placeholder},
    ]
    assert (seen.tool_call_id, seen.name, seen.status) == (CALL_ID, "screenshot", "success")
    assert seen.artifact == {"png_base64": "[removed]", "url": URL}
    assert not holds(model.received[-1], big.slice)

    # The run stored the history it ran on: the raw saver runs the thread too.
    raw = await head_messages(store, config["configurable"]["thread_id"])
    assert not holds(raw, big.slice)
    bye = {"messages": [HumanMessage("Thanks!", id="h5")]}
    done = await store.invoke(agent(media_claude("Bye."), store.saver, tools), bye, config)
    assert done["messages"][-1].content == "Bye."


async def test_the_wrapper_runs_the_thread_right_after_the_failed_call(big: Payload) -> None:
    """The tool returned the screenshot and the very next model call failed: the head
    is [human, ai(call), tool(image)] with the agent node due. A new message (or a
    retry) through the wrapper must not send the image again."""
    store = Store(InMemorySaver(), is_async=False)
    config = thread()
    tools = [screenshot_tool(big)]
    ask = {"messages": [HumanMessage(f"What is on {URL}?", id="h1")]}
    with pytest.raises(AnthropicBadRequest, match=TOO_BIG):
        await store.invoke(agent(media_claude(SHOT, "unused"), store.saver, tools), ask, config)
    wrapper = PatchingCheckpointer(store.saver, policy=ANTHROPIC)
    model = media_claude("It shows the Example Domain page.")
    out = await store.invoke(
        agent(model, wrapper, tools), {"messages": [HumanMessage("And?", id="h2")]}, config
    )
    assert out["messages"][-1].content == "It shows the Example Domain page."

"""A deep agent's thread bricked by content (its `messages` a delta channel): loaded
fixed through the wrapper, repaired by the batch job with no copy of the removed bytes,
and restored exactly by undo. Real graphs, agents and savers; only the chat model is a
fake."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.support import media_threads
from tests.support.agents import ToolBox, thread
from tests.support.batch_runs import run_repair, run_undo
from tests.support.claude_model import AnthropicBadRequest
from tests.support.histories import holds, results
from tests.support.media_model import media_claude
from tests.support.media_threads import ANTHROPIC, SHOT, TOO_BIG, URL, Payload, screenshot_tool
from tests.support.needs import needs_delta
from tests.support.stores import Store

big = media_threads.big  # the fixture: a screenshot over Anthropic's limit


class ScreenshotBox(ToolBox):
    """The deep agent's tools: the browser's screenshot."""

    def __init__(self, payload: Payload) -> None:
        super().__init__()
        self.payload = payload

    @property
    def all(self) -> list[BaseTool]:
        return [screenshot_tool(self.payload)]


@needs_delta
async def test_a_deep_agent_thread_is_loaded_fixed_repaired_and_restored(
    store: Store, big: Payload
) -> None:
    from tests.support.delta_agents import deep_agent

    box = ScreenshotBox(big)
    config = thread()
    ask = {"messages": [HumanMessage(f"What is on {URL}?", id="h1")]}
    with pytest.raises(AnthropicBadRequest, match=TOO_BIG):
        await store.invoke(deep_agent(media_claude(SHOT, "unused"), box, store.saver), ask, config)
    again = {"messages": [HumanMessage("Hello?", id="h2")]}
    with pytest.raises(AnthropicBadRequest, match=TOO_BIG):
        await store.invoke(deep_agent(media_claude("unused"), box, store.saver), again, config)
    plain = deep_agent(media_claude(), box, store.saver)
    before = (await store.get_state(plain, config)).values["messages"]
    assert results(before)[0].content[1]["base64"] == big.data  # type: ignore[index]

    wrapper = PatchingCheckpointer(store.saver, policy=ANTHROPIC)
    loaded = await store.get_state(deep_agent(media_claude(), box, wrapper), config)
    (fixed,) = results(loaded.values["messages"])
    assert fixed.content[1] == {"type": "text", "text": big.placeholder}
    assert not holds(loaded.values["messages"], big.slice)

    report = await run_repair(store, policy=ANTHROPIC)
    assert (report.threads_repaired, report.actions) == (1, {"media_removed": 1})
    repaired = (await store.get_state(plain, config)).values["messages"]
    assert [m.id for m in repaired] == [m.id for m in before]
    assert not holds(repaired, big.slice)

    undone = await run_undo(store, report.run_id)
    assert (undone.threads_restored, undone.threads_skipped) == (1, 0)
    restored = (await store.get_state(plain, config)).values["messages"]
    assert [m.model_dump() for m in restored] == [m.model_dump() for m in before]

    assert (await run_repair(store, policy=ANTHROPIC)).threads_repaired == 1
    model = media_claude("It shows the Example Domain page.")
    question = {"messages": [HumanMessage("What did you see?", id="h3")]}
    out = await store.invoke(deep_agent(model, box, store.saver), question, config)
    assert out["messages"][-1].content == "It shows the Example Domain page."
    assert not holds(model.received[-1], big.slice)

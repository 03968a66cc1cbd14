"""A thread too long for the model, on all six real savers: the wrapper makes it fit on
load (the store keeps the whole history until the application writes)."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.support.batch_runs import head_messages
from tests.support.context import POLICY, WINDOW, as_dicts, markers, overflow, reading_agent, tokens
from tests.support.fakes import window_model
from tests.support.oracle import assert_valid
from tests.support.seeding import config
from tests.support.stores import Store


async def test_the_wrapper_makes_the_thread_fit_on_load(store: Store) -> None:
    await overflow(store, "long")
    stored = await head_messages(store, "long")
    assert tokens(stored) > WINDOW

    replies = window_model(WINDOW, "Done.")
    wrapped = PatchingCheckpointer(store.saver, policy=POLICY)
    out = await store.invoke(
        reading_agent(replies, wrapped), {"messages": [HumanMessage("Finish.")]}, config("long")
    )
    assert out["messages"][-1].content == "Done."
    seen = replies.received[-1]
    assert tokens(seen) <= WINDOW and seen[0] is markers(seen)[0]
    assert seen[-1].content == "Finish." and "Read the whole repository." not in str(seen)
    assert_valid(seen)

    head = await head_messages(store, "long")  # the run wrote: the trim is stored with it
    assert markers(head) and head[-1].content == "Done."
    plain = window_model(WINDOW, "Still done.")
    await store.invoke(
        reading_agent(plain, store.saver), {"messages": [HumanMessage("?")]}, config("long")
    )
    assert plain.received and tokens(plain.received[-1]) <= WINDOW


async def test_loading_alone_leaves_the_store_whole(store: Store) -> None:
    await overflow(store, "long")
    stored = as_dicts(await head_messages(store, "long"))
    wrapped = PatchingCheckpointer(store.saver, policy=POLICY)
    view = await store.get_tuple(wrapped, config("long"))
    assert view is not None and markers(view.checkpoint["channel_values"]["messages"])
    assert as_dicts(await head_messages(store, "long")) == stored

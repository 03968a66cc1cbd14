"""`PatchingCheckpointer(saver, interrupt_ids="per-question")` on threads LangGraph 1.2.19
paused at its second question: the newest release, in strict resume mode, shows the
question under the id it computes, refuses the client's retried answer to the first
question, and takes an answer by the shown id, with nothing written but the run's own
checkpoints. Sync and async, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import langgraph.errors
import pytest
from langgraph.types import Command

from langgraph_checkpoint_repair import PatchingCheckpointer
from tests.support.older_release import drive, older_python
from tests.support.stores import open_store
from tests.support.two_questions import graph

REFUSED: Any = vars(langgraph.errors).get("UnknownInterruptError")
"""What strict resume raises (releases from 1.2.20; this file runs on the newest)."""
pytestmark = pytest.mark.parametrize("kind", ["sqlite", "aiosqlite", "postgres", "apostgres"])


def app_store(kind: str, tmp_path: Any, request: pytest.FixtureRequest) -> str:
    """The store as the older release's application opens it (the same file, or schema)."""
    if "postgres" in kind:
        return str(request.getfixturevalue("pg_uri"))
    return str(tmp_path / "threads.sqlite")


async def test_the_wrapper_shows_the_id_the_release_computes_and_strict_resume_holds(
    kind: str, tmp_path: Any, request: pytest.FixtureRequest
) -> None:
    async with open_store(kind, tmp_path, request) as store:
        older, where = older_python(), app_store(kind, tmp_path, request)
        q1 = drive(older, where, "t", "start")["interrupts"][0]["id"]
        drive(older, where, "t", "answer", "yes", q1)
        stored = await store.get_tuple(store.saver, {"configurable": {"thread_id": "t"}})
        app = graph(PatchingCheckpointer(store.saver, interrupt_ids="per-question"), False)
        config: Any = {"configurable": {"thread_id": "t", "__pregel_strict_resume": True}}

        shown = [i.id for i in (await store.get_state(app, config)).interrupts]
        with pytest.raises(REFUSED) as refused:
            await store.invoke(app, Command(resume={q1: "yes"}), config)
        still = await store.get_tuple(store.saver, {"configurable": {"thread_id": "t"}})
        answered = await store.invoke(app, Command(resume={shown[0]: "no"}), config)

    assert stored is not None and still is not None
    assert len(shown) == 1 and shown[0] != q1
    assert getattr(refused.value, "reason", None) == "not_pending"
    assert still.pending_writes == stored.pending_writes  # the load wrote nothing
    assert answered["out"] == "q1 got 'yes', q2 got 'no'"

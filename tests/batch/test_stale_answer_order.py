"""The one case the rows alone cannot tell: a run stored a new answer equal to the old
one (`Command(resume="yes")` again) and stopped before its task read it. SQLite numbers
its rows as they are written, so there the answer is known to be new and is left alone
(the next `invoke(None)` delivers it, as the human asked); PostgreSQL keeps no such
order, and the repair makes LangGraph ask the question again. A new equal answer
stored between the read and the delete is never deleted either."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langgraph_checkpoint_repair.batch import arepair_threads, repair_threads
from langgraph_checkpoint_repair.decisions.plan import tuple_key
from langgraph_checkpoint_repair.decisions.rewrites import stale_answer_drop
from langgraph_checkpoint_repair.stale_answers import NULL_TASK_ID, RESUME_CHANNEL
from langgraph_checkpoint_repair.stores import astore_for, store_for
from tests.support.asking_graphs import SECOND, answer_first, asked, build
from tests.support.asking_graphs import thread as config
from tests.support.report_checks import ID_CODES
from tests.support.stores import Store, cli_store


async def answer_again_and_stop(store: Store) -> None:
    """What a run given `Command(resume="yes")` stores first, before any task runs: the
    null task's answer (LangGraph's own `put_writes`), then it stops there."""
    head = await store.get_tuple(store.saver, config("stale"))
    assert head is not None
    if store.is_async:
        await store.saver.aput_writes(head.config, [(RESUME_CHANNEL, "yes")], NULL_TASK_ID)
    else:
        store.saver.put_writes(head.config, [(RESUME_CHANNEL, "yes")], NULL_TASK_ID)


async def scan_codes(store: Store) -> set[str]:
    settings: dict[str, Any] = {"dry_run": True, "min_idle": 0}
    if store.is_async:
        report = await arepair_threads(store.saver, **settings)
    else:
        report = repair_threads(store.saver, **settings)
    return {code for thread in report.threads for code in thread.codes} - ID_CODES


async def stale_on_file(path: str) -> None:
    """A SQLite file whose thread `stale` holds a stale answer (the one-task shape)."""
    with SqliteSaver.from_conn_string(path) as saver:
        await answer_first(
            Store(saver, False), build("one_task", saver), "one_task", config("stale")
        )


async def scan_file(path: str, is_async: bool) -> set[str]:
    """The codes a scan of the file reports, through the sync or the async API."""
    if is_async:
        async with AsyncSqliteSaver.from_conn_string(path) as asaver:
            return await scan_codes(Store(asaver, is_async=True))
    with SqliteSaver.from_conn_string(path) as saver:
        return await scan_codes(Store(saver, is_async=False))


@pytest.mark.parametrize("is_async", [False, True])
async def test_on_sqlite_a_new_equal_answer_is_left_and_delivered(
    tmp_path: Any, is_async: bool
) -> None:
    path = str(tmp_path / "threads.sqlite")
    await stale_on_file(path)
    assert await scan_file(path, is_async) == {"resume_dropped", "stale_resume"}  # stale now
    with SqliteSaver.from_conn_string(path) as saver:
        await answer_again_and_stop(Store(saver, is_async=False))

    assert await scan_file(path, is_async) == set()
    with SqliteSaver.from_conn_string(path) as saver:
        repair_threads(saver, min_idle=0)  # deletes nothing
        result = build("one_task", saver).invoke(None, config("stale"))
    assert result["out"] == "got:'yes'+'yes'"  # the answer the human gave, twice


async def test_on_postgres_it_cannot_be_told_and_the_question_is_asked_again(
    request: pytest.FixtureRequest,
) -> None:
    with cli_store("postgres", request) as (_, store):
        graph = build("one_task", store.saver)
        await answer_first(store, graph, "one_task", config("stale"))
        await answer_again_and_stop(store)

        assert "stale_resume" in await scan_codes(store)
        repair_threads(store.saver, min_idle=0)
        again = graph.invoke(None, config("stale"))

    assert asked(again) == [SECOND]  # asked twice: never a wrong answer


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_new_equal_answer_stored_after_the_read_is_never_deleted(
    tmp_path: Any, is_async: bool
) -> None:
    path = str(tmp_path / "threads.sqlite")
    await stale_on_file(path)
    with SqliteSaver.from_conn_string(path) as saver:
        head = saver.get_tuple(config("stale"))
        assert head is not None
        key = tuple_key(head)
        values = store_for(saver).stored_values(key)
        assert values is not None
        plan = stale_answer_drop(key, values)  # read while the answer was stale
        assert plan is not None
        await answer_again_and_stop(Store(saver, False))  # the same bytes, a new row
        if not is_async:
            outcome = store_for(saver).rewrite_writes("run-race", plan)
    if is_async:
        async with AsyncSqliteSaver.from_conn_string(path) as asaver:
            outcome = await astore_for(asaver).rewrite_writes("run-race", plan)

    assert outcome == "moved_on"
    with SqliteSaver.from_conn_string(path) as saver:
        head = saver.get_tuple(config("stale"))
        assert head is not None
        assert (NULL_TASK_ID, RESUME_CHANNEL, "yes") in (head.pending_writes or [])

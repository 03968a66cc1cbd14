"""`materialize redis://` and messages without an id on a real Redis server: a delta
thread's head gets its value stored plain (the saver's own put, so the thread's own
format), reads the same, a dry run changes no key, a second run writes nothing, and
undo puts the delta form back; a stock deep agent's messages without an id are given
ids in an appended snapshot (Redis rows are not rewritten in place) and can be removed."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph.checkpoint.redis", reason="the Redis tests need the redis extra")
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from typing import Any

from langchain_core.messages import RemoveMessage
from langgraph.checkpoint.redis import RedisSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from tests.support.agents import ToolBox
from tests.support.cli_runs import last_json, run_cli
from tests.support.delta_agents import deep_agent, delta_chat
from tests.support.fakes import model
from tests.support.histories import human
from tests.support.redis_keys import dumps
from tests.support.seeding import config


def cli(*argv: str) -> dict[str, Any]:
    done = run_cli(*argv, "--json")
    assert done.returncode == 0, done.stderr
    return last_json(done.stdout)


def stored(saver: RedisSaver, thread_id: str) -> Any:
    head = saver.get_tuple(config(thread_id))
    assert head is not None
    return head.checkpoint["channel_values"].get("messages")


def test_a_delta_thread_is_materialized_and_undone(redis_url: str) -> None:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        chat = delta_chat(saver)
        for n in range(5):
            chat.update_state(config("delta"), {"messages": [human(f"m{n}")]}, as_node="chat")
        read = [m.id for m in chat.get_state(config("delta")).values["messages"]]
        assert stored(saver, "delta") is None

        keys = dumps(redis_url)
        cli("materialize", redis_url, "--min-idle", "0", "--dry-run")
        assert dumps(redis_url) == keys
        done = cli("materialize", redis_url, "--min-idle", "0")
        assert done["actions"] == {"materialized": 1}
        assert [m.id for m in stored(saver, "delta")] == read
        assert [m.id for m in chat.get_state(config("delta")).values["messages"]] == read
        assert cli("materialize", redis_url, "--min-idle", "0")["checkpoints_written"] == 0

        assert cli("undo", redis_url, "--run", done["run_id"])["threads_restored"] == 1
        assert isinstance(stored(saver, "delta"), _DeltaSnapshot)
        assert [m.id for m in chat.get_state(config("delta")).values["messages"]] == read


def test_a_deep_agents_messages_without_ids_are_given_ids(redis_url: str) -> None:
    with RedisSaver.from_conn_string(redis_url) as saver:
        saver.setup()
        agent = deep_agent(model("One.", "Two."), ToolBox(), saver)
        agent.invoke({"messages": [("user", "a pair")]}, config("no-ids"))
        agent.invoke({"messages": "a string"}, config("no-ids"))
        lacking = [m for m in agent.get_state(config("no-ids")).values["messages"] if not m.id]
        assert "a string" in [m.content for m in lacking]

        scanned = cli("scan", redis_url, "--min-idle", "0")
        assert scanned["findings"] == {"message_id_missing": 1}
        done = cli("repair", redis_url, "--min-idle", "0")
        assert (done["checkpoints_written"], done["actions"]) == (
            1,
            {"message_id_stamped": len(lacking)},
        )
        messages = agent.get_state(config("no-ids")).values["messages"]
        assert None not in [m.id for m in messages]
        given = next(m for m in messages if m.content == "a string")
        agent.update_state(config("no-ids"), {"messages": [RemoveMessage(id=given.id)]})
        texts = [m.content for m in agent.get_state(config("no-ids")).values["messages"]]
        assert "a string" not in texts and "One." in texts

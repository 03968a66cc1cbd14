"""The repair wrapper under a real LangGraph Agent Server (`langgraph dev`), driven
with the real `langgraph_sdk` client, on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph_cli", reason="the Agent Server needs the dev extra")

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.messages import convert_to_messages
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from langgraph_checkpoint_repair import MARKER_KEY, RepairPolicy
from langgraph_checkpoint_repair.server import settings_from, target_from
from langgraph_checkpoint_repair.targets import TargetError, open_saver
from tests.support.agent_server import OUR_LINE, RAW_LINE, Server, agent_server, prepare_app
from tests.support.oracle import assert_valid

WEATHER = {"messages": [{"role": "user", "content": "weather in Oslo?"}]}
MOVE_ON = {"messages": [{"role": "user", "content": "never mind"}]}
HELLO = {"messages": [{"role": "user", "content": "hello?"}]}


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A folder with the served app, and the environment naming its store."""
    prepare_app(tmp_path)
    if request.param == "sqlite":
        target = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    else:
        target = request.getfixturevalue("pg_uri")
    yield tmp_path, {"LANGGRAPH_REPAIR_TARGET": target, "TOOL_RUNS_FILE": str(tmp_path / "runs")}


def client(server: Server) -> SyncLangGraphClient:
    return get_sync_client(url=server.url)


def run(server: Server, thread_id: str, graph: str, **kwargs: Any) -> dict[str, Any]:
    result: Any = client(server).runs.wait(thread_id, graph, raise_error=False, **kwargs)
    return dict(result)


def new_thread(server: Server) -> str:
    return str(client(server).threads.create()["thread_id"])


def history(server: Server, thread_id: str) -> list[dict[str, Any]]:
    state: Any = client(server).threads.get_state(thread_id)
    messages: list[dict[str, Any]] = state["values"]["messages"]
    return messages


def synthetic(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if MARKER_KEY in (m.get("response_metadata") or {})]


def tool_runs(workdir: Path) -> list[str]:
    runs = workdir / "runs"
    return runs.read_text().split() if runs.exists() else []


def test_bricked_thread_runs_again_after_a_restart_with_our_line(
    app: tuple[Path, dict[str, str]],
) -> None:
    workdir, env = app
    with agent_server(workdir, RAW_LINE, env) as raw:
        thread_id = new_thread(raw)
        run(raw, thread_id, "before_tools", input=WEATHER)
        for message in (MOVE_ON, HELLO):
            failed = run(raw, thread_id, "before_tools", input=message)
            assert "INVALID_CHAT_HISTORY" in str(failed.get("__error__")), failed

    with agent_server(workdir, OUR_LINE, env) as server:
        worked = run(server, thread_id, "before_tools", input=HELLO)
        assert "__error__" not in worked, worked
        messages = history(server, thread_id)
        assert messages[-1]["content"] == "Hello again."
        assert_valid(convert_to_messages(messages))
        assert len(synthetic(messages)) == 1
        assert f"thread={thread_id!r}" in server.log and "placeholder:call-" in server.log
    assert tool_runs(workdir) == []


def test_bricked_deep_agent_thread_runs_again_with_our_line(
    app: tuple[Path, dict[str, str]],
) -> None:
    """A deep agent's `messages` is a delta channel; a reused `call_0` abandoned after an
    approval slips past deepagents' own patching and bricks the thread."""
    workdir, env = app
    graphs = {"deep_agent": "./graph.py:deep_agent"}
    approve = {"resume": {"decisions": [{"type": "approve"}]}}
    rome = {"messages": [{"role": "user", "content": "weather in Rome?"}]}
    with agent_server(workdir, RAW_LINE, env, graphs=graphs) as raw:
        thread_id = new_thread(raw)
        run(raw, thread_id, "deep_agent", input=WEATHER)
        assert "__error__" not in run(raw, thread_id, "deep_agent", command=approve)
        run(raw, thread_id, "deep_agent", input=rome)
        for message in (MOVE_ON, HELLO):
            failed = run(raw, thread_id, "deep_agent", input=message)
            assert "tool calls without results" in str(failed.get("__error__")), failed

    with agent_server(workdir, OUR_LINE, env, graphs=graphs) as server:
        worked = run(server, thread_id, "deep_agent", input=HELLO)
        assert "__error__" not in worked, worked
        messages = history(server, thread_id)
        assert messages[-1]["content"] == "Hello again."
        assert_valid(convert_to_messages(messages))
        assert [m["tool_call_id"] for m in synthetic(messages)] == ["call_0"]
    assert tool_runs(workdir) == ["get_weather"]


def test_thread_interrupted_under_our_line_fails_once_then_works(
    app: tuple[Path, dict[str, str]],
) -> None:
    workdir, env = app
    with agent_server(workdir, OUR_LINE, env) as server:
        thread_id = new_thread(server)
        run(server, thread_id, "before_tools", input=WEATHER)
        assert "__error__" in run(server, thread_id, "before_tools", input=MOVE_ON)
        worked = run(server, thread_id, "before_tools", input=HELLO)
        assert "__error__" not in worked, worked
        assert_valid(convert_to_messages(history(server, thread_id)))


def test_resumes_run_each_tool_once_with_no_synthetic_result(
    app: tuple[Path, dict[str, str]],
) -> None:
    workdir, env = app
    with agent_server(workdir, OUR_LINE, env) as server:
        before = new_thread(server)
        run(server, before, "before_tools", input=WEATHER)
        resumed = run(server, before, "before_tools", input=None)
        assert "__error__" not in resumed, resumed

        inside = new_thread(server)
        run(server, inside, "agent", input={"messages": [{"role": "user", "content": "approve?"}]})
        answered = run(server, inside, "agent", command={"resume": "yes"})
        assert "__error__" not in answered, answered

        for thread_id, expected in ((before, "sunny in Oslo"), (inside, "human said yes")):
            messages = history(server, thread_id)
            results = [m["content"] for m in messages if m["type"] == "tool"]
            assert results == [expected]
            assert synthetic(messages) == []
            assert_valid(convert_to_messages(messages))
    assert sorted(tool_runs(workdir)) == ["ask_human", "get_weather"]


def test_copy_and_delete_a_thread_through_the_server(app: tuple[Path, dict[str, str]]) -> None:
    workdir, env = app
    with agent_server(workdir, OUR_LINE, env) as server:
        thread_id = new_thread(server)
        run(server, thread_id, "agent", input=WEATHER)
        # typed as returning None, the call answers with the new thread
        copy: Any = client(server).threads.copy(thread_id)  # type: ignore[func-returns-value]
        assert history(server, copy["thread_id"]) == history(server, thread_id)
        client(server).threads.delete(thread_id)
        with pytest.raises(Exception, match="not found"):
            client(server).threads.get(thread_id)
        assert history(server, copy["thread_id"])[-1]["content"] == "Done: sunny in Oslo"
    with open_saver(env["LANGGRAPH_REPAIR_TARGET"]) as saver:
        assert saver.get_tuple({"configurable": {"thread_id": thread_id}}) is None
        assert saver.get_tuple({"configurable": {"thread_id": copy["thread_id"]}}) is not None


def capability_lines(log: str) -> list[str]:
    """The server's startup verdicts on the checkpointer's optional methods."""
    marker = "Custom checkpointer missing"
    return sorted(
        marker + line.split(marker, 1)[1].split("[langgraph_api")[0].rstrip()
        for line in log.splitlines()
        if marker in line
    )


BROUGHT = {
    "memory": (),
    "sqlite": (
        "Custom checkpointer missing aprune:",
        "Custom checkpointer missing adelete_for_runs:",
        "Custom checkpointer missing acopy_thread:",
    ),
    "postgres": (
        "Custom checkpointer missing adelete_for_runs:",
        "Custom checkpointer missing acopy_thread:",
    ),
}
"""What the wrapper brings over each store's saver, whose missing line goes."""


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_server_sees_the_same_capabilities_with_and_without_the_wrapper_but_what_it_brings(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The same, but for what the wrapper brings where the package writes the store's
    rows: a prune (SQLite's saver has none), a rollback of a run and a copy inside the
    store. On SQLite and PostgreSQL the server then finds nothing missing."""
    prepare_app(tmp_path)
    targets = {
        "memory": ":memory:",
        "sqlite": f"sqlite:///{tmp_path / 'caps.sqlite'}",
        "postgres": request.getfixturevalue("pg_uri") if kind == "postgres" else "",
    }
    env = {"LANGGRAPH_REPAIR_TARGET": targets[kind], "TOOL_RUNS_FILE": str(tmp_path / "runs")}
    logs = {}
    for line in (RAW_LINE, OUR_LINE):
        with agent_server(tmp_path, line, env) as server:
            logs[line] = server.log
    assert "Using custom checkpointer: PatchingCheckpointer[" in logs[OUR_LINE]
    raw, ours = capability_lines(logs[RAW_LINE]), capability_lines(logs[OUR_LINE])
    brought = BROUGHT[kind]
    for missing in brought:
        assert any(line.startswith(missing) for line in raw), missing
    assert [line for line in raw if not line.startswith(brought)] == ours
    assert raw, "the server reported nothing to compare"
    assert ours == [] or kind == "memory", ours


def test_no_store_configured_is_one_clear_error() -> None:
    with pytest.raises(TargetError) as caught:
        target_from({})
    assert str(caught.value) == (
        "no checkpoint store configured: set one of "
        "LANGGRAPH_REPAIR_TARGET, DATABASE_URI, POSTGRES_URI"
    )
    assert target_from({"POSTGRES_URI": "postgresql://db"}) == "postgresql://db"
    assert target_from({"DATABASE_URI": "sqlite:///a", "LANGGRAPH_REPAIR_TARGET": "x:y"}) == "x:y"


def test_the_example_and_its_five_line_form_serve(tmp_path: Path) -> None:
    example = Path(__file__).parents[2] / "examples" / "agent_server"
    for name in ("graph.py", "my_checkpointer.py"):
        shutil.copy(example / name, tmp_path / name)
    env = {"LANGGRAPH_REPAIR_TARGET": f"sqlite:///{tmp_path / 'threads.sqlite'}"}
    for line in (
        "langgraph_checkpoint_repair.server.checkpointer",
        "./my_checkpointer.py:checkpointer",
    ):
        with agent_server(tmp_path, line, env, graphs={"agent": "./graph.py:agent"}) as server:
            thread_id = new_thread(server)
            answer = run(
                server,
                thread_id,
                "agent",
                input={"messages": [{"role": "user", "content": "weather?"}]},
            )
            assert answer["messages"][-1]["content"] == "Here it is: It is sunny in Paris."
            expected = "Using custom checkpointer: PatchingCheckpointer[AsyncJsSqliteSaver]"
            assert expected in server.log


def test_pool_size_policy_and_channels_come_from_the_environment() -> None:
    settings = settings_from(
        {
            "LANGGRAPH_REPAIR_POOL_SIZE": "4",
            "LANGGRAPH_REPAIR_POLICY": "dangling=drop_call, language=zh",
            "LANGGRAPH_REPAIR_CHANNELS": "messages, notes",
        }
    )
    assert settings["pool_size"] == 4
    assert settings["policy"] == RepairPolicy(dangling="drop_call", language="zh")
    assert settings["channels"] == ["messages", "notes"]
    assert settings_from({}) == {
        "pool_size": 10,
        "policy": RepairPolicy(),
        "channels": None,
        "moved_types": {},
    }
    with pytest.raises(ValueError, match="LANGGRAPH_REPAIR_POOL_SIZE"):
        settings_from({"LANGGRAPH_REPAIR_POOL_SIZE": "many"})
    with pytest.raises(ValueError, match="not a policy setting"):
        settings_from({"LANGGRAPH_REPAIR_POLICY": "colour=blue"})

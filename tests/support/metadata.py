"""Metadata the Agent Server and an application put on every checkpoint of a thread's
runs, and the check that a checkpoint the tool wrote carries it."""

from __future__ import annotations

from typing import Any

from langgraph_checkpoint_repair.decisions.plan import RUN_KEY, TOOL_KEYS

SERVER = {"graph_id": "agent", "assistant_id": "asst-7", "user_id": "user-3"}
"""What the Agent Server puts in a run's configurable keys (and so in each checkpoint)."""
APP = {
    "cwd": "/srv/app",
    "agent_name": "coder",
    "git_branch": "main",
    "workspace_id": "ws-42",
    "owner_token": "tok-1",
    "turns": 3,
    "pinned": True,
}
"""An application's own metadata on its runs."""


def tagged(thread_id: str) -> Any:
    """A run's config with both tags (a copy each time: older LangGraph releases add
    the configurable keys to the config's own `metadata`)."""
    return {"configurable": {"thread_id": thread_id, **SERVER}, "metadata": dict(APP)}


def assert_carried(written: dict[str, Any], on: dict[str, Any], run_id: str) -> None:
    """`written` holds every key of `on` as it was, but those LangGraph and the tool set."""
    own = {"source", "step", "parents", *TOOL_KEYS}
    assert {k: v for k, v in on.items() if k not in own} == {
        k: v for k, v in written.items() if k not in own
    }
    assert written["source"] == "update" and written["step"] == on["step"] + 1
    assert written["parents"] == on["parents"] and written[RUN_KEY] == run_id

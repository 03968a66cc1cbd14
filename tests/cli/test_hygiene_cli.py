"""A real thread bricked for Claude by an unsigned thinking block, on the command line:
`--policy provider=anthropic` (and the Agent Server's setting) reach the policy, and
`show` names the fixes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_checkpoint_repair.cli import main
from langgraph_checkpoint_repair.server import settings_from
from tests.support import claude_threads
from tests.support.claude_threads import ANTHROPIC, brick

saver = claude_threads.saver  # the fixture: a SqliteSaver on a fresh file


def test_the_agent_server_setting_and_the_command_line_reach_the_policy(
    saver: SqliteSaver, tmp_path: Path
) -> None:
    settings = settings_from({"LANGGRAPH_REPAIR_POLICY": "provider=anthropic"})
    assert settings["policy"] == ANTHROPIC
    with pytest.raises(ValueError, match="provider"):
        settings_from({"LANGGRAPH_REPAIR_POLICY": "provider=claude"})
    brick(saver)
    target = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    out = io.StringIO()
    code = main(
        ["scan", target, "--policy", "provider=anthropic", "--min-idle", "0", "--json"], out=out
    )
    assert code == 0
    assert json.loads(out.getvalue().strip().splitlines()[-1])["actions"] == {"thinking_dropped": 1}
    assert main(["scan", target, "--policy", "provider=claude"], out=io.StringIO()) == 2


def test_show_names_the_provider_fixes(saver: SqliteSaver, tmp_path: Path) -> None:
    config = brick(saver)
    target = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    thread_id = config["configurable"]["thread_id"]
    out = io.StringIO()
    argv = ["show", target, "--thread", thread_id, "--policy", "provider=anthropic"]
    assert main([*argv, "--json"], out=out) == 0
    shown = json.loads(out.getvalue().strip().splitlines()[-1])
    assert shown["actions"] == [
        {
            "kind": "thinking_dropped",
            "tool_call_id": None,
            "tool_name": None,
            "index": 3,
            "detail": "thinking block without a signature",
        }
    ]
    text = io.StringIO()
    assert main(argv, out=text) == 0
    assert "thinking_dropped: message 3: thinking block without a signature" in text.getvalue()

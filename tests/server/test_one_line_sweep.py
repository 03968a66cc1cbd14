"""The Agent Server's TTL sweep through the one line, as the server calls it: the saver
`langgraph_checkpoint_repair.server.checkpointer` yields, wrapped in langgraph-api's own
adapter (`tests/support/one_line_sweep.py`, in a process of its own), on SQLite and on
PostgreSQL. The adapter finds `aprune`; `keep_latest` keeps each thread's head, a
waiting thread keeps its question and takes its answer, a young delta thread (no
snapshot yet) is compacted into two checkpoints and reads the same;
`delete` and `delete_all` remove the threads; an unknown strategy is LangGraph's error.
The adapter finds `acopy_thread` too: a copied delta thread, and a copied waiting one,
read the same and go their own way, the source unchanged."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph_api", reason="the Agent Server needs the dev extra")
pytest.importorskip("langgraph.channels.delta", reason="delta channels need langgraph 1.2")

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]


def swept(target: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGGRAPH_REPAIR_")}
    env.pop("DATABASE_URI", None)
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.one_line_sweep", target],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_sweep_prunes_through_the_one_line_with_every_strategy(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    target = (
        f"sqlite:///{tmp_path / 'threads.sqlite'}"
        if kind == "sqlite"
        else request.getfixturevalue("pg_uri")
    )

    seen = swept(target)

    assert seen["capabilities"] == dict.fromkeys(
        ("aprune", "adelete_thread", "acopy_thread"), True
    ), seen["inner"]
    before, after = seen["before"], seen["after"]
    for thread_id in ("plain", "asking", "delta"):
        assert after[thread_id][1] == before[thread_id][1], thread_id  # reads the same
    assert after["plain"][0] == after["asking"][0] == 1 < before["plain"][0]
    assert after["delta"][0] == 2 < before["delta"][0]  # the head, and a snapshot under it
    assert after["asking"][1][2][0][1] == "approve?"
    assert seen["answered"][0][-1] == ["ai", "approved: yes at last"]
    assert after["deleted"] == after["deleted-all"] == [0, [[], [], []]]
    assert seen["unknown"] == "ValueError: Unknown prune strategy: 'keep_some'"
    copies = seen["copies"]
    for source in ("delta", "asking"):
        assert copies[source]["same"] and copies[source]["source_unchanged"], source
    assert copies["delta"]["counts"] == [after["delta"][0], after["delta"][0] + 3]
    assert copies["delta"]["copy_went_on"] == ["ai", "reply 7"]
    assert copies["asking"]["copy_went_on"] == ["ai", "approved: copy's answer"]
    assert copies["onto_a_thread"].startswith("thread 'delta-copy' already has checkpoints")

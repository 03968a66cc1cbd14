"""A real deep agent whose long single task overflows the model's window, on SQLite
and PostgreSQL: every run fails with the provider's words; it runs again through
the wrapper."""

from __future__ import annotations

import pytest

from tests.support.needs import DELTA_REASON

pytest.importorskip("langgraph.channels.delta", reason=DELTA_REASON)
pytest.importorskip("deepagents", reason="deepagents needs Python 3.11 and langgraph 1.2")

from typing import Any

from langgraph_checkpoint_repair import PatchingCheckpointer, RepairPolicy
from tests.support import overflowing_deep_agent
from tests.support.context import markers, tokens
from tests.support.overflowing_deep_agent import WINDOW, finish, overflow

target = overflowing_deep_agent.target  # the fixture: a plain saver and its TARGET


def test_it_runs_through_the_wrapper(target: tuple[Any, str]) -> None:
    saver, _ = target
    overflow(saver)
    model = finish(PatchingCheckpointer(saver, policy=RepairPolicy(max_input_tokens=WINDOW)))
    seen = model.received[-1]
    assert tokens(seen) <= WINDOW and len(markers(seen)) == 1
    assert seen[-1].content == "Finish."

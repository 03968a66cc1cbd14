"""PostgreSQL's first look with `--graph`: a root head is loaded only when it stores a
channel the graph lacks or holds a pending send, so a scan of a store of healthy
threads reads no more than without a graph; and nothing the graph would strand is
cleared."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.types import Command

from langgraph_checkpoint_repair.batch import repair_threads
from langgraph_checkpoint_repair.drift.shape import shape_of
from langgraph_checkpoint_repair.stores import store_for
from langgraph_checkpoint_repair.stores.base import Selection
from tests.support.release_graphs import compiled


def _thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


def test_the_first_look_loads_only_what_the_graph_may_strand(pg_uri: str) -> None:
    with PostgresSaver.from_conn_string(pg_uri) as saver:
        saver.setup()
        new = compiled("interrupt", 2, saver)
        new.invoke({"topic": "x"}, _thread("new-paused"))
        new.invoke({"topic": "x"}, _thread("new-done"))
        new.invoke(Command(resume="yes"), _thread("new-done"))
        compiled("interrupt", 1, saver).invoke({"topic": "x"}, _thread("old-paused"))
        compiled("sends", 2, saver).invoke({"topic": "x"}, _thread("sending"))
        compiled("extra", 1, saver).invoke({"topic": "x"}, _thread("extra"))

        graph = shape_of(new)
        selection = Selection(graph_channels=graph.all_channels())
        heads = [head for page in store_for(saver).pages(selection) for head in page]
        loaded = {head.thread_id for head in heads if head.may_drift}
        assert loaded == {"old-paused", "sending", "extra"}
        assert all(head.may_drift for page in store_for(saver).pages(Selection()) for head in page)

        # Each suspect is one this graph strands: the threads of other graphs too.
        report = repair_threads(saver, dry_run=True, min_idle=0, graph=new)
        assert report.to_json()["findings"] == {"node_missing": 3}
        assert {thread.thread_id for thread in report.threads} == loaded

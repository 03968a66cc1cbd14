"""A live application for the race tests, run as its own process:

    python -m tests.support.app_writer TARGET STOP_FILE SEED THREAD_ID...

sends a human message to a random thread of the store (a LangGraph saver of
its own, as an application holds one), again and again until STOP_FILE exists;
prints "ready" after its first write, then at the end every message it wrote,
as JSON {thread_id: [text, ...]}. Each checkpoint reaches the database a little
after LangGraph made it (and gave it its id), as over a network or behind a
busy lock. With `APP_WRITER_GRAPH=delta` in its environment, its graph keeps
`messages` in a delta channel, as deep agents do.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.agents import chat_graph
from tests.support.seeding import config

LATENCY = 0.02
"""Seconds between LangGraph making a checkpoint and the database storing it."""


class DistantSqliteSaver(SqliteSaver):
    def put(self, *args: Any) -> Any:
        time.sleep(LATENCY)
        return super().put(*args)


class DistantPostgresSaver(PostgresSaver):
    def put(self, *args: Any) -> Any:
        time.sleep(LATENCY)
        return super().put(*args)


@contextlib.contextmanager
def application_saver(target: str) -> Iterator[BaseCheckpointSaver[Any]]:
    if target.startswith("sqlite:///"):
        with DistantSqliteSaver.from_conn_string(target.removeprefix("sqlite:///")) as sqlite:
            yield sqlite
    else:
        with DistantPostgresSaver.from_conn_string(target) as postgres:
            yield postgres


GRAPH_ENV = "APP_WRITER_GRAPH"


def application_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    if os.environ.get(GRAPH_ENV) == "delta":
        from tests.support.delta_agents import delta_chat

        return delta_chat(saver)
    return chat_graph(saver)


def write_until(stop: Path, saver: BaseCheckpointSaver[Any], seed: str, threads: list[str]) -> Any:
    graph, pick = application_graph(saver), random.Random(seed)
    written: dict[str, list[str]] = {}
    while not stop.exists():
        thread_id, text = pick.choice(threads), f"app-{seed}-{sum(map(len, written.values()))}"
        message = HumanMessage(text, id=text)
        graph.invoke({"messages": [message]}, config(thread_id))
        written.setdefault(thread_id, []).append(text)
        if len(written) == 1 and len(written[thread_id]) == 1:
            print("ready", flush=True)
    return written


def main(target: str, stop_file: str, seed: str, *threads: str) -> None:
    with application_saver(target) as saver:
        written = write_until(Path(stop_file), saver, seed, list(threads))
    print(json.dumps(written), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])

"""Repair a whole store with `langgraph-repair`, on the quickstart's SQLite file.

Bricks three new threads (new ones on every run) the way production threads get bricked, then runs
the commands an operator would: scan, repair, repair again (nothing left to
do), undo that run (append-only), and repair once more.

    python examples/quickstart.py            # creates quickstart.sqlite
    python examples/repair_store.py [quickstart.sqlite]
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from fake_model import call, scripted
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

from langgraph_checkpoint_repair.cli import main as langgraph_repair

warnings.filterwarnings("ignore", category=DeprecationWarning)


def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"It is sunny in {city}."


def brick(saver: SqliteSaver, thread_id: str) -> None:
    """Interrupted before its tool, then sent new input: every later run fails."""
    config: Any = {"configurable": {"thread_id": thread_id}}
    model = scripted(call("get_weather", f"call-{thread_id}", city="Lima"))
    graph = create_react_agent(model, [get_weather], checkpointer=saver, interrupt_before=["tools"])
    graph.invoke({"messages": [HumanMessage("Weather in Lima?")]}, config)
    with contextlib.suppress(ValueError):  # INVALID_CHAT_HISTORY: the thread is now bricked
        graph.invoke({"messages": [HumanMessage("Forget it.")]}, config)


def fresh_thread_ids(saver: SqliteSaver, count: int) -> list[str]:
    """Thread ids not used yet, so running the example again bricks new threads."""
    taken = {tup.config["configurable"]["thread_id"] for tup in saver.list(None)}
    candidates = (f"ticket-{n}" for n in itertools.count())
    return list(itertools.islice((c for c in candidates if c not in taken), count))


def run(*argv: str) -> dict[str, Any]:
    """Run one command as an operator would; return its --json report, if any."""
    print(f"\n$ langgraph-repair {' '.join(argv)}")
    out = io.StringIO()
    code = langgraph_repair(list(argv), out=out)
    print(out.getvalue().rstrip())
    print(f"(exit {code})")
    report: dict[str, Any] = json.loads(out.getvalue().splitlines()[-1]) if "--json" in argv else {}
    return report


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "quickstart.sqlite")
    if not path.exists():
        sys.exit(f"{path} not found: run examples/quickstart.py first")
    with SqliteSaver.from_conn_string(str(path)) as saver:
        for thread_id in fresh_thread_ids(saver, 3):
            brick(saver, thread_id)
    target = f"sqlite:///{path}"
    run("scan", target, "--min-idle", "0")
    repaired = run("repair", target, "--min-idle", "0", "--json")
    run("repair", target, "--min-idle", "0")
    run("undo", target, "--run", repaired["run_id"])
    run("repair", target, "--min-idle", "0")


if __name__ == "__main__":
    main()

"""The five-line form: your own policy and on_repair, the store still from the environment.

In langgraph.json: "checkpointer": {"path": "./my_checkpointer.py:checkpointer"}
"""

from langgraph_checkpoint_repair import RepairEvent, RepairPolicy
from langgraph_checkpoint_repair.server import checkpointer_factory


def notify(event: RepairEvent) -> None:
    print(f"repaired {event.thread_id} at {event.checkpoint_id}: {dict(event.actions)}")


checkpointer = checkpointer_factory(policy=RepairPolicy(language="en"), on_repair=notify)

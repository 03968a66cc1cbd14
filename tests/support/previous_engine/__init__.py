"""The engine as it was before the walk and the synthetic results were made
faster: the property tests hold the current engine to exactly its output
(messages, actions, the changed flag, the very list when nothing changes).

Only the modules that the speed work rewrote are kept here; the rules they
share with the current engine (policy, call reading, traces, provider
hygiene, the stray matching, which the speed work left as it was) and the
result types are the package's own.
"""

from .repair import repair_messages as previous_repair

__all__ = ["previous_repair"]

"""What a repair did (or, in strict mode, would have done)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from ..codes import ActionKind


@dataclass(frozen=True)
class RepairAction:
    """One rule applied to one tool call or tool result.

    `index` is the position in the *input* list of the message concerned: the
    AIMessage for `placeholder`, `call_dropped`, `duplicate_call_dropped` and
    `unrepairable`, the ToolMessage for `moved`, `orphan_dropped` and
    `duplicate_dropped`; for provider hygiene, the message whose content or ids
    changed. `detail` says more where the kind alone does not (the new id, the
    block dropped and why). `context_trimmed` points at the first message a trim
    removed, `over_budget` at the start of the history.
    """

    kind: ActionKind
    tool_call_id: str | None
    tool_name: str | None
    index: int
    detail: str | None = None

    def to_dict(self) -> dict[str, object]:
        """A JSON-friendly form, for logs, audit rows and checkpoint metadata."""
        data: dict[str, object] = {
            "kind": self.kind,
            "tool_call_id": self.tool_call_id,
            "tool_name": self.tool_name,
            "index": self.index,
        }
        if self.detail is not None:
            data["detail"] = self.detail
        return data


_new = object.__new__
_set = object.__setattr__


def fast_action(
    kind: ActionKind, call_id: str | None, name: str | None, index: int
) -> RepairAction:
    """`RepairAction(kind, call_id, name, index)`, at half the cost: a frozen
    dataclass sets each field through `object.__setattr__`, and a broken store
    makes one action per dangling call."""
    action: RepairAction = _new(RepairAction)
    _set(
        action,
        "__dict__",
        {"kind": kind, "tool_call_id": call_id, "tool_name": name, "index": index, "detail": None},
    )
    return action


@dataclass(frozen=True)
class RepairResult:
    """The repaired history and the actions that produced it.

    When `changed` is False, `messages` is the very list that was passed in.
    """

    messages: list[BaseMessage]
    actions: tuple[RepairAction, ...]
    changed: bool


class HistoryError(ValueError):
    """Raised in strict mode when a history breaks the pairing rules (or, with a
    provider, that provider's rules)."""

    def __init__(self, actions: Sequence[RepairAction]) -> None:
        self.actions = tuple(actions)
        kinds = ", ".join(f"{a.kind} {a.tool_call_id!r}" for a in self.actions[:5])
        more = f" and {len(self.actions) - 5} more" if len(self.actions) > 5 else ""
        super().__init__(f"invalid tool-call history: {kinds}{more}")

"""The serializer every wrapped load goes through: it watches the load, and renames moved
types on the way.

`LoadWatcher` wraps any `SerializerProtocol`. Within a watched load
(`watch.watching_load`) it notes what the load meets: decode failures and lost types.
Its `loads_typed` also rewrites a msgpack blob that could name a moved type
(`rename.rename_types`, only when the old module's name is in the bytes) before handing
it to the inner serializer. `dumps_typed` and everything else are the inner serializer's
own.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from .names import TypeName, UndecodableBytes
from .rename import rename_types
from .watch import LostType, Undecodable, current_notes, meeting_types, why_lost


class LoadWatcher:
    """Loads through `inner`, watched, with moved types renamed first; writes are `inner`'s."""

    def __init__(self, inner: Any, moved: Mapping[TypeName, TypeName] | None = None) -> None:
        self.inner = inner
        self.moved: dict[TypeName, TypeName] = dict(moved or {})
        self._old_modules = tuple({module.encode() for module, _ in self.moved})

    def __repr__(self) -> str:
        return f"LoadWatcher({self.inner!r}, {self.moved!r})"

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "moved", "_old_modules") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        result: tuple[str, bytes] = self.inner.dumps_typed(obj)
        return result

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, blob = data
        if type_ == "msgpack":
            blob = self._renamed(blob)
        notes = current_notes()
        if notes is None:
            return self.inner.loads_typed((type_, blob))
        try:
            if type_ != "msgpack":
                return self.inner.loads_typed((type_, blob))
            with meeting_types(blob) as met:
                value = self.inner.loads_typed((type_, blob))
        except Exception as error:
            notes.failures.append(error)
            if notes.lenient:
                return Undecodable(error)
            raise
        for named, allowed in met.items():
            reason = why_lost(named, allowed)
            if reason is not None:
                notes.lost.append(LostType(named, reason, value, blob))
        return value

    def with_msgpack_allowlist(self, extra_allowlist: Iterable[Any]) -> LoadWatcher:
        """The inner serializer's own, behind the same renaming."""
        inner = self.inner.with_msgpack_allowlist(extra_allowlist)
        return self if inner is self.inner else LoadWatcher(inner, self.moved)

    def _renamed(self, blob: bytes) -> bytes:
        """The blob naming the new types; as stored when it names none (or is not
        msgpack: the inner serializer then says what is wrong with it)."""
        if not self._old_modules or not any(old in blob for old in self._old_modules):
            return blob
        try:
            return rename_types(blob, self.moved)
        except UndecodableBytes:
            return blob


def with_moved_types(
    saver: BaseCheckpointSaver[Any], moved: Mapping[TypeName, TypeName]
) -> BaseCheckpointSaver[Any]:
    """A shallow copy of `saver` (its connection, lock and data shared) whose serializer
    is the loading proxy with `moved`: its loads hand out the new classes and note what
    they meet. `saver` itself is left as it was, so it loads as before, and two wrappers
    of one saver each see only their own mappings."""
    serde: Any = saver.serde
    if isinstance(serde, LoadWatcher):  # a wrapper's copy: one proxy, both mappings
        serde, moved = serde.inner, {**serde.moved, **moved}
    copied = copy.copy(saver)
    copied.serde = LoadWatcher(serde, moved)
    return copied

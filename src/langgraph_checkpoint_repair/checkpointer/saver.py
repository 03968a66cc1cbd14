"""`PatchingCheckpointer`: any saver, with every loaded checkpoint's messages repaired.

Loads are repaired; writes and everything else go to the inner saver untouched.
Which optional methods exist is decided per inner saver *class*: LangGraph's
conformance suite and the Agent Server look at the class to learn what a
checkpointer can do, so `PatchingCheckpointer(saver)` is an instance of a
subclass generated for `type(saver)` that defines exactly the methods the
inner class overrides, no more and no fewer.
"""

from __future__ import annotations

import contextvars
import copy
import inspect
import logging
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..codes import InterruptIds
from ..decoding.load_watcher import LoadWatcher, with_moved_types
from ..decoding.names import TypeName
from ..decoding.rename import moved_from
from ..delta.chains import VerifiedChains, chain_key
from ..drift.shape import checked_renames
from ..engine import RepairPolicy
from ..engine.policy import DEFAULT_POLICY
from ..interrupt_ids import checked_scheme
from ..stores.history import adelta_history, aread_proven, delta_history, read_proven
from .answers import awithout_stale_answer, without_stale_answer
from .guard import LoadGuard, scrubs_nul
from .pruning import offered_over, safe_aprune, safe_prune
from .released import as_released
from .rollback import OWN_METHODS
from .view import LoadRepairer, OnRepair

logger = logging.getLogger("langgraph_checkpoint_repair")

PASSTHROUGH_METHODS = (
    "put",
    "put_writes",
    "aput",
    "aput_writes",
    "delete_thread",
    "adelete_thread",
    "delete_for_runs",
    "adelete_for_runs",
    "copy_thread",
    "acopy_thread",
)
SAFE_PRUNES = {"prune": safe_prune, "aprune": safe_aprune}
"""The wrapper's own, where the inner class has them or a pruner deletes its store's
rows: they keep what each thread needs (`checkpointer.pruning`)."""


class PatchingCheckpointer(BaseCheckpointSaver[Any]):
    """Wraps a checkpoint saver; every checkpoint it loads has its message channels repaired.

    `channels` names the channels to repair; by default every channel holding a
    list of messages is. `on_repair` receives a `RepairEvent` for each repaired
    load. Loads never write: the repaired value is stored the next time the
    graph writes that channel.

    `moved_types` (`{"old.module:Old": "new.module:New"}`) makes loads rebuild a
    stored type under its new name: the wrapper loads through a shallow copy of the
    saver (as LangGraph's `with_allowlist` makes one) whose serializer renames the
    stored bytes before they are decoded; the saver given is left as it was. A
    stored value that does not decode raises `UnreadableCheckpoint`; a type that cannot
    be rebuilt here is logged, or raised, as `policy.lost_types` says. Over PostgreSQL,
    pending writes of text holding U+0000 load with U+FFFD instead, so they can be
    stored.

    `renamed_nodes` (`{"ask": "review"}`, nodes a new release renamed) shows a loaded
    root head whose next work names an old node with that work moved to the new one
    (its branch channel, pending Sends, open interrupt re-keyed to the ids the new
    graph computes), as `repair --node-renamed` writes it: a rolling deploy resumes
    threads paused under the old release before any batch run.

    `interrupt_ids` (`"per-question"` or `"first"`: how the running LangGraph release
    makes interrupt ids) shows a loaded head's paused questions with the ids that
    release computes, as `repair --interrupt-ids` writes them; nothing is written, so
    strict resume can be turned on before any batch run.

    A delta channel whose seed its rows prove wrong loads with the proven value. Only
    empty and flattened seeds are proven unless `prove_history`: then every load reads
    its namespace's whole history, and a fork that replayed another branch loads right.
    """

    saver: BaseCheckpointSaver[Any]

    if TYPE_CHECKING:  # present at run time only where the inner saver class has them

        def __enter__(self) -> PatchingCheckpointer: ...
        def __exit__(self, *exc_info: object) -> Any: ...
        async def __aenter__(self) -> PatchingCheckpointer: ...
        async def __aexit__(self, *exc_info: object) -> Any: ...

    def __new__(cls, saver: BaseCheckpointSaver[Any] | None = None, **_: Any) -> Any:
        if saver is None:  # copy / pickle protocol
            return super().__new__(cls)
        return super().__new__(_class_for(cls, type(saver)))

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        *,
        policy: RepairPolicy | None = None,
        channels: Collection[str] | None = None,
        on_repair: OnRepair | None = None,
        moved_types: Mapping[str, str] | None = None,
        renamed_nodes: Mapping[str, str] | None = None,
        interrupt_ids: InterruptIds | None = None,
        prove_history: bool = False,
    ) -> None:
        if not isinstance(saver, BaseCheckpointSaver):
            raise TypeError(f"expected a BaseCheckpointSaver, got {type(saver).__name__}")
        if policy is not None and not isinstance(policy, RepairPolicy):
            raise TypeError(f"policy must be a RepairPolicy, got {type(policy).__name__}")
        self.policy = policy or DEFAULT_POLICY
        check_channels(channels)
        self.channels = channels
        self.on_repair = on_repair
        self.moved_types: dict[TypeName, TypeName] = moved_from(moved_types)
        self.saver = with_moved_types(saver, self.moved_types)
        self._view = LoadRepairer(self.policy, channels, on_repair)
        self._guard = LoadGuard(self.policy.lost_types, scrubs_nul(saver))
        self._verified = VerifiedChains()
        self.renamed_nodes = checked_renames(renamed_nodes or {}, None, needs_graph=False)
        self.interrupt_ids = checked_scheme(interrupt_ids)
        self.prove_history = prove_history

    def repair_tuple(self, tup: CheckpointTuple | None) -> CheckpointTuple | None:
        """The repaired view of a tuple loaded elsewhere; the same object when it is clean."""
        return self._view.repair(tup)

    def __repr__(self) -> str:
        return f"PatchingCheckpointer({self.saver!r})"

    def __getattr__(self, name: str) -> Any:
        """Anything else (`setup`, `conn`, ...) is the inner saver's."""
        if name in ("saver", "__setstate__") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.saver, name)

    @property
    def serde(self) -> SerializerProtocol:
        return self.saver.serde

    @serde.setter
    def serde(self, value: SerializerProtocol) -> None:
        self.saver.serde = LoadWatcher(value, self.moved_types)  # the wrapper's copy

    @property
    def config_specs(self) -> list[Any]:
        return self.saver.config_specs

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.saver.get_next_version(current, channel)


def _loaded(self: PatchingCheckpointer, tup: CheckpointTuple | None) -> CheckpointTuple | None:
    """The repaired view of a stored tuple, its delta message channels rebuilt first
    (from their proven value, where their rows prove the seed LangGraph reads wrong)."""
    if tup is None:
        return None
    try:
        loaded = read_proven(self.saver, tup, self.channels, self._verified, self.prove_history)
        tup, rebuilt, rest = loaded.tup, loaded.names, loaded.rest
    except Exception:
        self._view.rebuild_failed(tup)
        rebuilt, rest = [], {}
    _leave_for_langgraph(self, tup, rest)
    return self._view.repair(tup, rebuilt)


async def _aloaded(
    self: PatchingCheckpointer, tup: CheckpointTuple | None
) -> CheckpointTuple | None:
    """The async twin of `_loaded`."""
    if tup is None:
        return None
    try:
        loaded = await aread_proven(
            self.saver, tup, self.channels, self._verified, self.prove_history
        )
        tup, rebuilt, rest = loaded.tup, loaded.names, loaded.rest
    except Exception:
        self._view.rebuild_failed(tup)
        rebuilt, rest = [], {}
    _leave_for_langgraph(self, tup, rest)
    return self._view.repair(tup, rebuilt)


@dataclass(frozen=True)
class _Leftover:
    """Stored histories a load read for delta channels it does not rebuild (not messages)."""

    owner: PatchingCheckpointer
    key: tuple[str, str, str] | None
    histories: dict[str, Any]


_leftover: contextvars.ContextVar[_Leftover | None] = contextvars.ContextVar(
    "langgraph_repair_leftover_histories", default=None
)
"""The last load's leftover histories, in this thread or task. LangGraph asks for them
(`get_delta_channel_history`) right after the load, in the same thread or task: they
are handed over once, so those channels are read from the store once, not twice."""


def _leave_for_langgraph(
    self: PatchingCheckpointer, tup: CheckpointTuple, histories: dict[str, Any]
) -> None:
    """Keep the load's leftover histories for LangGraph's next ask; forget older ones."""
    left = _Leftover(self, chain_key(tup.config), histories) if histories else None
    if left is not None or _leftover.get() is not None:
        _leftover.set(left)


def _take_leftover(
    self: PatchingCheckpointer, config: RunnableConfig, channels: Sequence[str]
) -> dict[str, Any]:
    """The histories of `channels` the last load here read for this same checkpoint;
    forgotten once asked for, so nothing stale is ever handed out."""
    left = _leftover.get()
    if left is None:
        return {}
    _leftover.set(None)
    if left.owner is not self or left.key is None or left.key != chain_key(config):
        return {}
    return {name: left.histories[name] for name in channels if name in left.histories}


def check_channels(channels: object) -> None:
    """Refuse a bare string: iterated, it names each of its letters and repairs nothing."""
    if channels is None:
        return
    if isinstance(channels, (str, bytes)) or not isinstance(channels, Collection):
        raise TypeError(f"channels must be a collection of channel names, not {channels!r}")
    if not all(isinstance(name, str) for name in channels):
        raise TypeError(f"channels must be a collection of channel names, not {channels!r}")


def _get_tuple(self: PatchingCheckpointer, config: RunnableConfig) -> CheckpointTuple | None:
    def read() -> list[CheckpointTuple]:
        tup = self.saver.get_tuple(config)
        return [] if tup is None else [tup]

    found = self._guard.read(config, read)
    loaded = _loaded(self, found[0]) if found else None
    if loaded is not None and self.policy.stale_resume != "keep":
        loaded = without_stale_answer(self.saver, loaded)
    return as_released(loaded, self.renamed_nodes, self.interrupt_ids)


def _list(
    self: PatchingCheckpointer, config: RunnableConfig | None, **kwargs: Any
) -> Iterator[CheckpointTuple]:
    # Read the whole listing first: SqliteSaver and PostgresSaver hold their lock
    # while their generator is paused, and a delta rebuild reads through them.
    for tup in self._guard.read(config, lambda: list(self.saver.list(config, **kwargs))):
        yield _loaded(self, tup) or tup


async def _aget_tuple(self: PatchingCheckpointer, config: RunnableConfig) -> CheckpointTuple | None:
    async def read() -> list[CheckpointTuple]:
        tup = await self.saver.aget_tuple(config)
        return [] if tup is None else [tup]

    found = await self._guard.aread(config, read)
    loaded = await _aloaded(self, found[0]) if found else None
    if loaded is not None and self.policy.stale_resume != "keep":
        loaded = await awithout_stale_answer(self.saver, loaded)
    return as_released(loaded, self.renamed_nodes, self.interrupt_ids)


async def _alist(
    self: PatchingCheckpointer, config: RunnableConfig | None, **kwargs: Any
) -> AsyncIterator[CheckpointTuple]:
    async def read() -> list[CheckpointTuple]:
        return [tup async for tup in self.saver.alist(config, **kwargs)]

    for tup in await self._guard.aread(config, read):
        yield await _aloaded(self, tup) or tup


def _with_allowlist(
    self: PatchingCheckpointer, extra_allowlist: Collection[tuple[str, ...]]
) -> Any:
    """The inner saver's own `with_allowlist`, wrapped again with the same settings.
    LangGraph asks for it on every load in strict msgpack mode: the new wrapper shares
    what this one knows of the store's chains, so they are not checked again."""
    inner = _inner_with_allowlist(self.saver, extra_allowlist)
    if inner is self.saver:
        return self
    wrapped = PatchingCheckpointer(
        inner, policy=self.policy, channels=self.channels, on_repair=self.on_repair
    )
    wrapped.saver = with_moved_types(inner, self.moved_types)
    wrapped.moved_types = self.moved_types
    wrapped._verified = self._verified
    return wrapped


def _inner_with_allowlist(
    saver: BaseCheckpointSaver[Any], extra_allowlist: Collection[tuple[str, ...]]
) -> BaseCheckpointSaver[Any]:
    """The inner saver's `with_allowlist`, asked of a shallow copy holding the serializer
    behind the loading proxy (LangGraph widens only serializers it knows); the same
    saver when nothing changes."""
    proxy = saver.serde
    if not isinstance(proxy, LoadWatcher):
        return saver.with_allowlist(extra_allowlist)
    bare = copy.copy(saver)
    bare.serde = proxy.inner
    widened = bare.with_allowlist(extra_allowlist)
    return saver if widened is bare else widened


def _get_delta_channel_history(
    self: PatchingCheckpointer, *, config: RunnableConfig, channels: Sequence[str]
) -> Any:
    """Stored history, from the inner saver: never rebuilt through the repaired view.
    A parent chain that would not end raises `BrokenChain` instead of hanging. What
    the load just before read for this checkpoint is handed over, not read again."""
    served = _take_leftover(self, config, channels)
    missing = [name for name in channels if name not in served]
    if not missing:
        return served
    return {**served, **delta_history(self.saver, config, missing, self._verified)}


async def _aget_delta_channel_history(
    self: PatchingCheckpointer, *, config: RunnableConfig, channels: Sequence[str]
) -> Any:
    served = _take_leftover(self, config, channels)
    missing = [name for name in channels if name not in served]
    if not missing:
        return served
    return {**served, **await adelta_history(self.saver, config, missing, self._verified)}


def _enter(self: PatchingCheckpointer) -> PatchingCheckpointer:
    self.saver.__enter__()  # type: ignore[attr-defined]
    return self


def _exit(self: PatchingCheckpointer, *exc_info: Any) -> Any:
    return self.saver.__exit__(*exc_info)  # type: ignore[attr-defined]


async def _aenter(self: PatchingCheckpointer) -> PatchingCheckpointer:
    await self.saver.__aenter__()  # type: ignore[attr-defined]
    return self


async def _aexit(self: PatchingCheckpointer, *exc_info: Any) -> Any:
    return await self.saver.__aexit__(*exc_info)  # type: ignore[attr-defined]


REPAIRED_LOADS: dict[str, Callable[..., Any]] = {
    "get_tuple": _get_tuple,
    "list": _list,
    "aget_tuple": _aget_tuple,
    "alist": _alist,
}
ALWAYS_DELEGATED: dict[str, Callable[..., Any]] = {
    "with_allowlist": _with_allowlist,
    "get_delta_channel_history": _get_delta_channel_history,
    "aget_delta_channel_history": _aget_delta_channel_history,
}
"""Defined for every inner saver, wherever LangGraph's base class has them (newer
langgraph-checkpoint releases only): the base defaults would act on the wrapper."""
CONTEXT_METHODS: dict[str, Callable[..., Any]] = {
    "__enter__": _enter,
    "__exit__": _exit,
    "__aenter__": _aenter,
    "__aexit__": _aexit,
}


def _passthrough(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(original):

        async def forward_async(self: PatchingCheckpointer, *args: Any, **kwargs: Any) -> Any:
            return await getattr(self.saver, name)(*args, **kwargs)

        method: Callable[..., Any] = forward_async
    else:

        def forward(self: PatchingCheckpointer, *args: Any, **kwargs: Any) -> Any:
            return getattr(self.saver, name)(*args, **kwargs)

        method = forward
    method.__name__ = method.__qualname__ = name
    method.__doc__ = original.__doc__
    return method


def overrides(inner: type, name: str) -> bool:
    """True when `inner` defines `name` itself rather than inheriting the base default."""
    impl = getattr(inner, name, None)
    return impl is not None and impl is not getattr(BaseCheckpointSaver, name, None)


_CLASSES: dict[tuple[type, type], type[PatchingCheckpointer]] = {}


def _class_for(base: type[PatchingCheckpointer], inner: type) -> type[PatchingCheckpointer]:
    """The wrapper class for one inner saver class, showing exactly its capabilities."""
    cached = _CLASSES.get((base, inner))
    if cached is None:
        cached = _CLASSES[(base, inner)] = _build_class(base, inner)
    return cached


def _build_class(base: type[PatchingCheckpointer], inner: type) -> type[PatchingCheckpointer]:
    namespace: dict[str, Any] = {"__module__": base.__module__, "__doc__": base.__doc__}
    for name, method in {**REPAIRED_LOADS, **CONTEXT_METHODS}.items():
        if overrides(inner, name):
            namespace[name] = method
    for name, method in ALWAYS_DELEGATED.items():
        if hasattr(BaseCheckpointSaver, name):
            namespace[name] = method
    for name in PASSTHROUGH_METHODS:
        if overrides(inner, name):
            namespace[name] = _passthrough(name, getattr(inner, name))
        elif name in OWN_METHODS and offered_over(inner, name):
            namespace[name] = OWN_METHODS[name]
    for name, safe in SAFE_PRUNES.items():
        own = getattr(inner, name) if overrides(inner, name) else None
        if own is not None or offered_over(inner, name):
            namespace[name] = safe(own)
    return type(f"{base.__name__}[{inner.__name__}]", (base,), namespace)

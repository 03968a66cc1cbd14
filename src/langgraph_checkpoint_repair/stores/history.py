"""A saver's stored history of delta channels, read so that the walk ends.

LangGraph rebuilds a delta channel by following `parent_checkpoint_id` from a
checkpoint until it finds the channel's seed, and some savers' walks run forever
on a chain whose parents loop (`delta.chains`). Before such a walk, the saver's
driver checks the chain from ids alone (its `chains` module: SQL for PostgreSQL
and SQLite, the dict for the in-memory saver); the base class's default walk is
replaced by the same walk with the guard built in (`generic.chains`). A saver with
a walk of its own that no driver knows is trusted as it is.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ..delta import chains
from ..delta.chains import VerifiedChains
from ..delta.channels import Rebuilt, channels_to_rebuild, parent_id_of, rebuilt_from
from ..delta.lineage import namespace_config, proofs, to_prove, with_proven
from ..delta.proof import Proof
from .drivers import DRIVERS, SAVERS, walk_owner
from .generic.chains import GuardedWalk

SYNC_WALK = "get_delta_channel_history"
ASYNC_WALK = "aget_delta_channel_history"


def _where(config: RunnableConfig) -> dict[str, Any]:
    configurable = config.get("configurable") or {}
    return {
        "thread_id": str(configurable.get("thread_id")),
        "ns": configurable.get("checkpoint_ns", ""),
        "id": configurable.get("checkpoint_id"),
        "limit": chains.MAX_CHAIN,
    }


def _checks(owner: str, asynchronous: bool) -> Any:
    """The `chains` module of the driver whose saver class defines the walk; None when
    none does, or the walk is the other twin's (LangGraph's async savers live in `.aio`)."""
    name = SAVERS.get(owner)
    twin = name == "generic" or owner.endswith(".aio") == asynchronous
    if name is None or not twin:
        return None
    return DRIVERS[name].chains()


def check_chain(saver: BaseCheckpointSaver[Any], config: RunnableConfig) -> None:
    """Raise `BrokenChain` when the walk from `config` would not end (sync savers)."""
    checks = _checks(walk_owner(saver, SYNC_WALK), asynchronous=False)
    if checks is not None:
        checks.check_chain(saver, _where(config))


async def acheck_chain(saver: BaseCheckpointSaver[Any], config: RunnableConfig) -> None:
    """The async twin of `check_chain`."""
    checks = _checks(walk_owner(saver, ASYNC_WALK), asynchronous=True)
    if checks is not None:
        await checks.acheck_chain(saver, _where(config))


def delta_history(
    saver: BaseCheckpointSaver[Any],
    config: RunnableConfig,
    channels: Sequence[str],
    verified: VerifiedChains | None = None,
    parent_id: str | None = None,
) -> Mapping[str, Any]:
    """`saver.get_delta_channel_history`, refused with `BrokenChain` where it would not end.

    A chain `verified` knows (from `config`, or from its older parent `parent_id`)
    is not checked again; one checked here is added to it.
    """
    if walk_owner(saver, SYNC_WALK) == "":
        return GuardedWalk(channels).walk(saver, config)
    if verified is None or not verified.known(config, parent_id):
        check_chain(saver, config)
        if verified is not None:
            verified.add(config)
    return saver.get_delta_channel_history(config=config, channels=channels)


async def adelta_history(
    saver: BaseCheckpointSaver[Any],
    config: RunnableConfig,
    channels: Sequence[str],
    verified: VerifiedChains | None = None,
    parent_id: str | None = None,
) -> Mapping[str, Any]:
    """The async twin of `delta_history`."""
    if walk_owner(saver, ASYNC_WALK) == "":
        return await GuardedWalk(channels).awalk(saver, config)
    if verified is None or not verified.known(config, parent_id):
        await acheck_chain(saver, config)
        if verified is not None:
            verified.add(config)
    return await saver.aget_delta_channel_history(config=config, channels=channels)


def load_rebuilt(
    saver: BaseCheckpointSaver[Any], tup: CheckpointTuple, names: Collection[str] | None
) -> tuple[CheckpointTuple, list[str]]:
    """`delta.with_rebuilt` over the saver's own stored history (sync); a parent chain
    that would not end raises `BrokenChain` instead of walking forever."""
    rebuilt = read_rebuilt(saver, tup, names)
    return rebuilt.tup, rebuilt.names


async def aload_rebuilt(
    saver: BaseCheckpointSaver[Any], tup: CheckpointTuple, names: Collection[str] | None
) -> tuple[CheckpointTuple, list[str]]:
    """The async twin of `load_rebuilt`."""
    rebuilt = await aread_rebuilt(saver, tup, names)
    return rebuilt.tup, rebuilt.names


def read_rebuilt(
    saver: BaseCheckpointSaver[Any],
    tup: CheckpointTuple,
    names: Collection[str] | None,
    verified: VerifiedChains | None = None,
) -> Rebuilt:
    """`load_rebuilt`, keeping the histories read for delta channels that do not hold
    messages; `verified` spares the chain check of a chain already checked."""
    wanted = channels_to_rebuild(tup, names)
    if not wanted:
        return Rebuilt(tup, [], {})
    histories = delta_history(saver, tup.config, wanted, verified, parent_id_of(tup))
    return rebuilt_from(tup, histories)


async def aread_rebuilt(
    saver: BaseCheckpointSaver[Any],
    tup: CheckpointTuple,
    names: Collection[str] | None,
    verified: VerifiedChains | None = None,
) -> Rebuilt:
    """The async twin of `read_rebuilt`."""
    wanted = channels_to_rebuild(tup, names)
    if not wanted:
        return Rebuilt(tup, [], {})
    histories = await adelta_history(saver, tup.config, wanted, verified, parent_id_of(tup))
    return rebuilt_from(tup, histories)


def read_proofs(
    saver: BaseCheckpointSaver[Any],
    stored: CheckpointTuple,
    channels: Collection[str] | None,
    loaded: Rebuilt,
    every: bool = False,
) -> dict[str, Proof]:
    """The head's delta channels whose stored seeds its rows prove wrong
    (`delta.proof`), or its `loaded` read other than proven, read from a listing of its
    namespace; none to prove (`delta.lineage.to_prove`, from the seeds its load's walks
    ended at, or `every` delta channel), no read."""
    wanted = to_prove(stored, channels, loaded.seeds, every)
    if not wanted:
        return {}
    listed = list(saver.list(namespace_config(stored)))
    return _wrong(proofs(listed, _head_id(stored), wanted, _reads(loaded)))


async def aread_proofs(
    saver: BaseCheckpointSaver[Any],
    stored: CheckpointTuple,
    channels: Collection[str] | None,
    loaded: Rebuilt,
    every: bool = False,
) -> dict[str, Proof]:
    """The async twin of `read_proofs`."""
    wanted = to_prove(stored, channels, loaded.seeds, every)
    if not wanted:
        return {}
    listed = [tup async for tup in saver.alist(namespace_config(stored))]
    return _wrong(proofs(listed, _head_id(stored), wanted, _reads(loaded)))


def _reads(loaded: Rebuilt) -> dict[str, Any]:
    """The values the load rebuilt (those the head does not store)."""
    values = loaded.tup.checkpoint.get("channel_values") or {}
    return {name: values[name] for name in loaded.names if name in values}


def _wrong(found: dict[str, Proof]) -> dict[str, Proof]:
    return {
        name: proof
        for name, proof in found.items()
        if proof.divergences and proof.value is not None
    }


def _head_id(tup: CheckpointTuple) -> str:
    return str(tup.config["configurable"]["checkpoint_id"])


def read_proven(
    saver: BaseCheckpointSaver[Any],
    tup: CheckpointTuple,
    names: Collection[str] | None,
    verified: VerifiedChains | None = None,
    every: bool = False,
) -> Rebuilt:
    """`read_rebuilt`, each channel whose rows prove its seed wrong holding the proven
    value instead (`read_proofs`, `every` seed or the suspect ones): what the wrapper
    hands LangGraph."""
    rebuilt = read_rebuilt(saver, tup, names, verified)
    proven = read_proofs(saver, tup, names, rebuilt, every)
    held, named = with_proven(rebuilt.tup, rebuilt.names, proven)
    return rebuilt._replace(tup=held, names=named)


async def aread_proven(
    saver: BaseCheckpointSaver[Any],
    tup: CheckpointTuple,
    names: Collection[str] | None,
    verified: VerifiedChains | None = None,
    every: bool = False,
) -> Rebuilt:
    """The async twin of `read_proven`."""
    rebuilt = await aread_rebuilt(saver, tup, names, verified)
    proven = await aread_proofs(saver, tup, names, rebuilt, every)
    held, named = with_proven(rebuilt.tup, rebuilt.names, proven)
    return rebuilt._replace(tup=held, names=named)

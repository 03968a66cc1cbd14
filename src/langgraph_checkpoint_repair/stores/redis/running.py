"""The shells that run `steps` on a Redis server: one sync, one async. The Redis pruners
and the shallow store write their work as steps, so each runs on both."""

from __future__ import annotations

from typing import Any, TypeVar

from redis.exceptions import WatchError

from . import steps as st
from .saver import aevery_match, every_match

T = TypeVar("T")


def undecoded(client: Any) -> Any:
    """A client over the same server that hands replies back as bytes (a DUMP is not
    text): `client` itself, unless it decodes."""
    if not client.get_encoder().decode_responses:
        return client
    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, "decode_responses": False}
    fresh = type(pool)(connection_class=pool.connection_class, **kwargs)
    return type(client)(connection_pool=fresh)


class StepRunner:
    """Runs steps on a RedisSaver's server (sync): reads in one pipeline, a commit in
    one MULTI/EXEC on the connection that watched."""

    def __init__(self, saver: Any) -> None:
        self.redis = undecoded(saver._redis)
        self.indexes = {
            "checkpoints": saver.checkpoints_index,
            "writes": saver.checkpoint_writes_index,
            "blobs": getattr(saver, "checkpoint_blobs_index", None),
        }

    def driven(self, steps: st.Steps[T]) -> T:
        """Run each step of `steps`, sending it back its replies; what the steps return."""
        with self.redis.pipeline(transaction=True) as txn:
            reply: Any = None
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as done:
                    result: T = done.value
                    return result
                reply = self.run(txn, step)

    def run(self, txn: Any, step: st.Step) -> Any:
        if isinstance(step, st.Search):
            return every_match(self.indexes[step.index], step.query_at)
        if isinstance(step, st.Watch):
            return txn.watch(*step.keys) if step.keys else None
        if isinstance(step, st.Read):
            if not step.commands:
                return []
            with self.redis.pipeline(transaction=False) as pipe:
                for name, *args in step.commands:
                    getattr(pipe, name)(*args)
                return pipe.execute(raise_on_error=False)
        txn.multi()
        for name, *args in step.commands:
            getattr(txn, name)(*args)
        try:
            return txn.execute(raise_on_error=False)
        except WatchError:
            return None


class AsyncStepRunner:
    """The twin of `StepRunner`, on an async saver's server."""

    def __init__(self, saver: Any) -> None:
        self.redis = undecoded(saver._redis)
        self.indexes = {
            "checkpoints": saver.checkpoints_index,
            "writes": saver.checkpoint_writes_index,
            "blobs": getattr(saver, "checkpoint_blobs_index", None),
        }

    async def driven(self, steps: st.Steps[T]) -> T:
        async with self.redis.pipeline(transaction=True) as txn:
            reply: Any = None
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as done:
                    result: T = done.value
                    return result
                reply = await self.run(txn, step)

    async def run(self, txn: Any, step: st.Step) -> Any:
        if isinstance(step, st.Search):
            return await aevery_match(self.indexes[step.index], step.query_at)
        if isinstance(step, st.Watch):
            return await txn.watch(*step.keys) if step.keys else None
        if isinstance(step, st.Read):
            if not step.commands:
                return []
            async with self.redis.pipeline(transaction=False) as pipe:
                for name, *args in step.commands:
                    getattr(pipe, name)(*args)
                return await pipe.execute(raise_on_error=False)
        txn.multi()
        for name, *args in step.commands:
            getattr(txn, name)(*args)
        try:
            return await txn.execute(raise_on_error=False)
        except WatchError:
            return None

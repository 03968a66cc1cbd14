"""`redis://` targets: the server answers, holds langgraph-checkpoint-redis's indexes,
and then the saver that loads every write (`saver`), sync and async.

Nothing is created on the server: a store whose indexes are missing was never written
by the saver (or is another database), and is said to be so.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, cast

from ... import redact
from ..opening_errors import TargetError, needs_extra

if TYPE_CHECKING:
    from .saver import AsyncRedisStoreSaver, RedisStoreSaver

INDEXES = ("checkpoint", "checkpoint_write")
"""The saver's RediSearch indexes, by their default names (its key prefixes)."""
TIMEOUT = 5.0
"""Seconds to wait for the server to answer."""


def check_redis(url: str, setup: bool = False) -> None:
    """The server answers, with RediSearch and (unless `setup`) the saver's two indexes."""
    with needs_extra("redis"):
        import redis
        from redis.exceptions import RedisError, ResponseError

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT)
    except ValueError as error:
        raise TargetError(f"not a Redis URL {redact.scrub(url)!r}: {error}") from None
    try:
        with client:
            listed = client.execute_command("FT._LIST")  # type: ignore[no-untyped-call]
        found = {_text(name) for name in listed}
    except ResponseError as error:
        raise TargetError(
            f"the Redis server at {redact.scrub(url)} has no RediSearch module ({error}): "
            "langgraph-checkpoint-redis stores need RedisJSON and RediSearch"
        ) from None
    except RedisError as error:
        raise TargetError(f"cannot connect to Redis: {redact.one_line(error)}") from None
    missing = [name for name in INDEXES if name not in found]
    if missing and not setup:
        raise TargetError(
            f"the Redis database at {redact.scrub(url)} has no langgraph-checkpoint-redis "
            f"index {', '.join(missing)}: it holds no checkpoints of that saver"
        )


def _text(name: object) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)


@contextlib.contextmanager
def redis_saver(url: str, setup: bool = False) -> Iterator[RedisStoreSaver]:
    """A `RedisStoreSaver` over the server at `url`; with `setup`, the saver's indexes
    are created where missing, as the application's saver creates them."""
    check_redis(url, setup)
    from .saver import RedisStoreSaver

    saver = RedisStoreSaver(redis_url=url)
    try:
        saver.setup()  # the indexes checked exist: this only starts its key registry
        yield saver
    finally:
        saver._redis.close()


@contextlib.asynccontextmanager
async def aredis_saver(url: str, setup: bool = False) -> AsyncIterator[AsyncRedisStoreSaver]:
    """An `AsyncRedisStoreSaver` over the server at `url` (which creates the saver's
    indexes where missing when entered: refused before, unless `setup`)."""
    check_redis(url, setup)
    from .saver import AsyncRedisStoreSaver

    async with AsyncRedisStoreSaver(redis_url=url) as saver:
        yield cast("AsyncRedisStoreSaver", saver)

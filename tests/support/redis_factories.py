"""`module:attr` targets over the official Redis savers (langgraph-checkpoint-redis), as a
user opens them: the server is the one `REPAIR_TEST_REDIS` names, so a command run in
a child process sees what the test seeded."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator

from langgraph.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph.checkpoint.redis.ashallow import AsyncShallowRedisSaver
from langgraph.checkpoint.redis.shallow import ShallowRedisSaver

REDIS_ENV = "REPAIR_TEST_REDIS"


@contextlib.contextmanager
def redis_saver() -> Iterator[RedisSaver]:
    with RedisSaver.from_conn_string(os.environ[REDIS_ENV]) as saver:
        saver.setup()  # the sync saver reads nothing before it has its key registry
        yield saver


@contextlib.asynccontextmanager
async def async_redis_saver() -> AsyncIterator[AsyncRedisSaver]:
    async with AsyncRedisSaver.from_conn_string(os.environ[REDIS_ENV]) as saver:
        yield saver


@contextlib.contextmanager
def shallow_redis_saver() -> Iterator[ShallowRedisSaver]:
    with ShallowRedisSaver.from_conn_string(os.environ[REDIS_ENV]) as saver:
        saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def async_shallow_redis_saver() -> AsyncIterator[AsyncShallowRedisSaver]:
    async with AsyncShallowRedisSaver.from_conn_string(os.environ[REDIS_ENV]) as saver:
        yield saver

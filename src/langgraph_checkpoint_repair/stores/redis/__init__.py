"""The Redis driver: langgraph-checkpoint-redis's stores, read through their own keys."""

from .aio import AsyncRedisStore
from .sync import RedisStore

__all__ = ["AsyncRedisStore", "RedisStore"]

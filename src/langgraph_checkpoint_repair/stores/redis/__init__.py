"""The Redis driver: langgraph-checkpoint-redis's stores, read through their own keys
(the full layout's, the shallow savers' and LangGraph.js's)."""

from .aio import AsyncRedisStore
from .ashallow import AsyncShallowRedisStore
from .js_store import AsyncJsRedisStore, JsRedisStore
from .shallow import ShallowRedisStore
from .sync import RedisStore

__all__ = [
    "AsyncJsRedisStore",
    "AsyncRedisStore",
    "AsyncShallowRedisStore",
    "JsRedisStore",
    "RedisStore",
    "ShallowRedisStore",
]

"""`redis://` targets: the server answers, holds a Redis saver's indexes, and then the
saver of the layout the store holds, loading every write of the checkpoint it loads
(`saver`, `shallow_saver`, `js_saver`), sync and async.

The layout is told by the keys: RedisSaver keeps a latest pointer per namespace; the
shallow savers keep none and one document per namespace; LangGraph.js's saver keeps
none and counts channel versions as integers. Nothing is created on the server: a
store whose indexes are missing was never written by a saver (or is another
database), and is said to be so.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, Literal

from ... import redact
from ..opening_errors import TargetError, needs_extra

if TYPE_CHECKING:
    from .saver import AsyncRedisStoreSaver, RedisStoreSaver

INDEXES = ("checkpoint", "checkpoint_write")
JS_INDEXES = ("checkpoints", "checkpoint_writes")
"""The saver's RediSearch indexes, by their default names (its key prefixes)."""
TIMEOUT = 5.0
"""Seconds to wait for the server to answer."""


Layout = Literal["full", "shallow", "js"]


def check_redis(url: str, setup: bool = False) -> Layout:
    """The server answers, with RediSearch and (unless `setup`) a saver's indexes; the
    layout its checkpoints are stored in."""
    with needs_extra("redis"):
        import redis
        from redis.exceptions import RedisError, ResponseError

        from .steps import text

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT)
    except ValueError as error:
        raise TargetError(f"not a Redis URL {redact.scrub(url)!r}: {error}") from None
    try:
        with client:
            listed = client.execute_command("FT._LIST")  # type: ignore[no-untyped-call]
            found = {text(name) for name in listed}
            js_only = set(JS_INDEXES) <= found and not set(INDEXES) <= found
            layout = stored_layout(client, js_only)
    except ResponseError as error:
        raise TargetError(
            f"the Redis server at {redact.scrub(url)} has no RediSearch module ({error}): "
            "langgraph-checkpoint-redis stores need RedisJSON and RediSearch"
        ) from None
    except RedisError as error:
        raise TargetError(f"cannot connect to Redis: {redact.one_line(error)}") from None
    needed = JS_INDEXES if layout == "js" else INDEXES
    missing = [name for name in needed if name not in found]
    if missing and not setup:
        raise TargetError(
            f"the Redis database at {redact.scrub(url)} has no langgraph-checkpoint-redis "
            f"index {', '.join(missing)}: it holds no checkpoints of that saver"
        )
    return layout


def stored_layout(client: Any, js_only: bool) -> Layout:
    """The layout of the store's checkpoints, from its keys: a latest pointer is
    RedisSaver's; else the first checkpoint document tells the shallow savers' from
    LangGraph.js's (its integer channel versions). An empty store is taken for
    RedisSaver's, or for LangGraph.js's where only its indexes exist (`js_only`)."""
    from .base import PAGE, pointer_pattern

    if next(iter(client.scan_iter(match=pointer_pattern("checkpoint"), count=PAGE)), None):
        return "full"
    for key in client.scan_iter(match="checkpoint:*", count=PAGE):
        versions = _versions(client, key)
        if versions is not None:
            counted = any(type(v) is int for v in versions.values())
            return "js" if counted else "shallow"
    return "js" if js_only else "full"


def _versions(client: Any, key: Any) -> dict[str, Any] | None:
    """A checkpoint document's channel versions; None for a key that holds none (one of
    the application's own)."""
    from redis.exceptions import ResponseError

    try:
        found = client.json().get(key, "$.checkpoint.channel_versions")
    except ResponseError:
        return None
    versions = found[0] if isinstance(found, list) and found else None
    return versions if isinstance(versions, dict) else None


@contextlib.contextmanager
def redis_saver(url: str, setup: bool = False) -> Iterator[RedisStoreSaver | Any]:
    """The sync saver of the store's layout over the server at `url`; with `setup`, the
    saver's indexes are created where missing, as the application's saver creates
    them."""
    layout = check_redis(url, setup)
    if layout == "js":
        from .js_saver import JsRedisSaver

        with _js(JsRedisSaver(url)) as js:
            yield js
        return
    from .saver import RedisStoreSaver
    from .shallow_saver import ShallowRedisStoreSaver

    saver = (ShallowRedisStoreSaver if layout == "shallow" else RedisStoreSaver)(redis_url=url)
    try:
        saver.setup()  # the indexes checked exist: this only starts its key registry
        yield saver
    finally:
        saver._redis.close()


@contextlib.contextmanager
def _js(saver: Any) -> Iterator[Any]:
    try:
        yield saver
    finally:
        saver._redis.close()


@contextlib.asynccontextmanager
async def aredis_saver(url: str, setup: bool = False) -> AsyncIterator[AsyncRedisStoreSaver | Any]:
    """The async saver of the store's layout over the server at `url` (RedisSaver's
    creates its indexes where missing when entered: refused before, unless `setup`)."""
    layout = check_redis(url, setup)
    if layout == "js":
        from .js_saver import AsyncJsRedisSaver

        js = AsyncJsRedisSaver(url)
        try:
            yield js
        finally:
            await js._redis.aclose()
        return
    from .saver import AsyncRedisStoreSaver
    from .shallow_saver import AsyncShallowRedisStoreSaver

    kind = AsyncShallowRedisStoreSaver if layout == "shallow" else AsyncRedisStoreSaver
    async with kind(redis_url=url) as saver:
        yield saver

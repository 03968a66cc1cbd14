"""LangGraph's PostgreSQL savers, taught LangGraph.js's checkpoints: thin shells over `js.rows`.

A LangGraph.js application keeps its threads in the same tables, so LangGraph's saver
reads them as they are, once its queries do without `task_path` where the tables lack
it and its serializer reads LangChain.js's values (`js.values.JsJsonSerializer`). Writing
is where the formats part: a checkpoint on top of a LangGraph.js one is written as
LangGraph.js writes it (`js.rows`), one on top of a Python one as LangGraph writes it, so
a store where both kinds of threads live keeps each thread in its own format.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg.types.json import Jsonb

from ...js import rows

if TYPE_CHECKING:
    from langgraph.checkpoint.base import DeltaChannelHistory
from ...js.values import js_serde

JS_ONLY_SQL = """
SELECT to_regclass('checkpoint_writes') IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM pg_attribute
    WHERE attrelid = to_regclass('checkpoint_writes') AND attname = 'task_path'
        AND NOT attisdropped
)"""
"""Whether the tables are LangGraph.js's alone: LangGraph's PostgreSQL saver adds
`task_path` to `checkpoint_writes` when it sets them up, LangGraph.js never does."""


_TASK_PATH_COLUMN = re.compile(r"\bcw\.task_path\b")
_TASK_PATH_ORDER = re.compile(r"\border by task_path,\s*", re.IGNORECASE)


def without_task_path(sql: str) -> str:
    """One of LangGraph's PostgreSQL saver's queries for tables without `task_path`:
    every write's path is empty, as LangGraph.js's are (it sorts writes by task and
    index alone)."""
    return _TASK_PATH_ORDER.sub("order by ", _TASK_PATH_COLUMN.sub("''::text", sql))


NO_WRITES = "pending writes are not written to LangGraph.js's tables by this saver"


class _JsAware:
    """What the sync and async savers share: the queries and the version scheme."""

    js_only: bool
    writes_langgraph_js = True
    """A checkpoint with integer versions is written as LangGraph.js writes it (`formats`)."""

    def __init__(
        self, conn: Any, serde: SerializerProtocol | None = None, *, js_only: bool = False
    ) -> None:
        super().__init__(conn, serde=serde)  # type: ignore[call-arg]
        self.js_only = js_only
        if js_only:  # queries without `task_path`: the tables are LangGraph.js's alone
            base: Any = self
            base.SELECT_SQL = without_task_path(base.SELECT_SQL)
            base.SELECT_PENDING_SENDS_SQL = without_task_path(base.SELECT_PENDING_SENDS_SQL)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The next integer after a LangGraph.js version; LangGraph's own otherwise."""
        if rows.is_js_version(current) or (current is None and self.js_only):
            return rows.next_version(current)
        return super().get_next_version(current, channel)  # type: ignore[misc]


class JsPostgresSaver(_JsAware, PostgresSaver):
    """`PostgresSaver` that also reads and writes LangGraph.js's checkpoints."""

    def bound_to(self, conn: Any) -> JsPostgresSaver:
        """This saver on one connection (a transaction the caller holds)."""
        return JsPostgresSaver(conn, serde=self.serde, js_only=self.js_only)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        if not rows.is_js_checkpoint(checkpoint):
            return super().put(config, checkpoint, metadata, new_versions)
        blobs, row = _js_rows(config, checkpoint, metadata, new_versions)
        with self._cursor(pipeline=True) as cur:
            if blobs:
                cur.executemany(self.UPSERT_CHECKPOINT_BLOBS_SQL, blobs)
            cur.execute(self.UPSERT_CHECKPOINTS_SQL, row)
        return rows.next_config(config, checkpoint)  # type: ignore[return-value]

    def put_writes(
        self, config: RunnableConfig, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        if self.js_only:
            raise NotImplementedError(NO_WRITES)
        super().put_writes(config, writes, task_id, task_path)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """A delta channel's history; on LangGraph.js's tables alone, by LangGraph's
        generic walk over `get_tuple` (the saver's own queries read `task_path`)."""
        if self.js_only:
            return BaseCheckpointSaver.get_delta_channel_history(
                self, config=config, channels=channels
            )
        return super().get_delta_channel_history(config=config, channels=channels)


class AsyncJsPostgresSaver(_JsAware, AsyncPostgresSaver):
    """The async twin of `JsPostgresSaver`."""

    def bound_to(self, conn: Any) -> AsyncJsPostgresSaver:
        return AsyncJsPostgresSaver(conn, serde=self.serde, js_only=self.js_only)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        if not rows.is_js_checkpoint(checkpoint):
            return await super().aput(config, checkpoint, metadata, new_versions)
        blobs, row = _js_rows(config, checkpoint, metadata, new_versions)
        async with self._cursor(pipeline=True) as cur:
            if blobs:
                await cur.executemany(self.UPSERT_CHECKPOINT_BLOBS_SQL, blobs)
            await cur.execute(self.UPSERT_CHECKPOINTS_SQL, row)
        return rows.next_config(config, checkpoint)  # type: ignore[return-value]

    async def aput_writes(
        self, config: RunnableConfig, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        if self.js_only:
            raise NotImplementedError(NO_WRITES)
        await super().aput_writes(config, writes, task_id, task_path)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The async twin of `JsPostgresSaver.get_delta_channel_history`."""
        if self.js_only:
            return await BaseCheckpointSaver.aget_delta_channel_history(
                self, config=config, channels=channels
            )
        return await super().aget_delta_channel_history(config=config, channels=channels)


def _js_rows(
    config: Mapping[str, Any],
    checkpoint: Mapping[str, Any],
    metadata: Mapping[str, Any],
    new_versions: Mapping[str, Any],
) -> tuple[list[Any], tuple[Any, ...]]:
    configurable = config["configurable"]
    blobs = rows.blob_rows(
        configurable["thread_id"],
        configurable.get("checkpoint_ns", ""),
        checkpoint["channel_values"],
        new_versions,
    )
    *key, checkpoint_doc, metadata_doc = rows.checkpoint_row(config, checkpoint, metadata)
    return blobs, (*key, Jsonb(checkpoint_doc), Jsonb(metadata_doc))


def js_aware(pool: Any, serde: SerializerProtocol | None) -> JsPostgresSaver:
    """A saver over `pool` that reads and writes both formats."""
    with pool.connection() as conn:
        row = conn.execute(JS_ONLY_SQL).fetchone()
    return JsPostgresSaver(pool, serde=js_serde(serde), js_only=_first(row))


async def ajs_aware(pool: Any, serde: SerializerProtocol | None) -> AsyncJsPostgresSaver:
    """The async twin of `js_aware`."""
    async with pool.connection() as conn:
        cursor = await conn.execute(JS_ONLY_SQL)
        row = await cursor.fetchone()
    return AsyncJsPostgresSaver(pool, serde=js_serde(serde), js_only=_first(row))


def _first(row: Any) -> bool:
    """The query's one value, from a tuple or a dict row."""
    if isinstance(row, dict):
        return bool(next(iter(row.values())))
    return bool(row and row[0])

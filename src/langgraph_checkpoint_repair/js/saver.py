"""LangGraph's PostgreSQL savers, taught LangGraph.js's checkpoints: thin shells over `rows`.

A LangGraph.js application keeps its threads in the same tables, so LangGraph's saver
reads them as they are, once its queries do without `task_path` where the tables lack
it and its serializer reads LangChain.js's values (`values.JsJsonSerializer`). Writing
is where the formats part: a checkpoint on top of a LangGraph.js one is written as
LangGraph.js writes it (`rows`), one on top of a Python one as LangGraph writes it, so
a store where both kinds of threads live keeps each thread in its own format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg.types.json import Jsonb

from . import rows

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
            base.SELECT_SQL = rows.without_task_path(base.SELECT_SQL)
            base.SELECT_PENDING_SENDS_SQL = rows.without_task_path(base.SELECT_PENDING_SENDS_SQL)

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

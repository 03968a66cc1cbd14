"""LangGraph's SQLite savers, taught LangGraph.js's checkpoints: thin shells over `js.rows`.

`@langchain/langgraph-checkpoint-sqlite` uses the same two tables as LangGraph's SQLite
saver (without `task_path`), so one file may hold threads of both. A thread is told by
its own checkpoint: integer channel versions are LangGraph.js's. Reading needs only the
serializer that knows LangChain.js's values (`js.values.js_serde`); a checkpoint on top of
a LangGraph.js one is written as LangGraph.js writes it (`js.rows.sqlite_checkpoint_row`),
one on top of a Python one exactly as LangGraph writes it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ...js import rows

INSERT_SQL = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
    "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
ROW_TYPE_SQL = (
    "SELECT type FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
NO_JS_WRITES = "pending writes are not written to a LangGraph.js thread by this saver"


def _row_key(config: RunnableConfig) -> tuple[str, str, str]:
    configurable = config["configurable"]
    return (
        str(configurable["thread_id"]),
        str(configurable.get("checkpoint_ns", "")),
        str(configurable["checkpoint_id"]),
    )


class _JsThreads:
    """What the sync and async savers share: the version scheme, and the refusal of a
    pending write to a LangGraph.js thread (its checkpoint row is `json`)."""

    writes_langgraph_js = True
    """A checkpoint with integer versions is written as LangGraph.js writes it (`formats`)."""

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The next integer after a LangGraph.js version; LangGraph's own otherwise."""
        if rows.is_js_version(current):
            return rows.next_version(current)
        return super().get_next_version(current, channel)  # type: ignore[misc]

    @staticmethod
    def refuse_js_thread(row: Any) -> None:
        """Raise for a checkpoint row of LangGraph.js's (`ROW_TYPE_SQL`)."""
        if row is not None and row[0] == "json":
            raise NotImplementedError(NO_JS_WRITES)


class JsSqliteSaver(_JsThreads, SqliteSaver):
    """`SqliteSaver` that also reads and writes LangGraph.js's checkpoints."""

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        if not rows.is_js_checkpoint(checkpoint):
            return super().put(config, checkpoint, metadata, new_versions)
        row = rows.sqlite_checkpoint_row(config, checkpoint, metadata)
        with self.cursor() as cur:
            cur.execute(INSERT_SQL, row)
        return rows.next_config(config, checkpoint)  # type: ignore[return-value]

    def put_writes(
        self, config: RunnableConfig, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        with self.cursor(transaction=False) as cur:
            self.refuse_js_thread(cur.execute(ROW_TYPE_SQL, _row_key(config)).fetchone())
        super().put_writes(config, writes, task_id, task_path)


class AsyncJsSqliteSaver(_JsThreads, AsyncSqliteSaver):
    """The async twin of `JsSqliteSaver`."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        if not rows.is_js_checkpoint(checkpoint):
            return await super().aput(config, checkpoint, metadata, new_versions)
        await self.setup()
        row = rows.sqlite_checkpoint_row(config, checkpoint, metadata)
        async with self.lock, self.conn.execute(INSERT_SQL, row):
            await self.conn.commit()
        return rows.next_config(config, checkpoint)  # type: ignore[return-value]

    async def aput_writes(
        self, config: RunnableConfig, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        async with self.lock, self.conn.execute(ROW_TYPE_SQL, _row_key(config)) as cur:
            self.refuse_js_thread(await cur.fetchone())
        await super().aput_writes(config, writes, task_id, task_path)

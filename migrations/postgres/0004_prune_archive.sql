-- What a prune deleted, kept so that `langgraph-repair undo --run RUN_ID` puts every
-- row back as it was. Each table mirrors one of LangGraph's, plus the run that
-- deleted the row; `langgraph-repair forget --run RUN_ID` drops a run's rows.

CREATE TABLE IF NOT EXISTS langgraph_repair_pruned_checkpoints (
    run_id               TEXT NOT NULL,
    thread_id            TEXT NOT NULL,
    checkpoint_ns        TEXT NOT NULL DEFAULT '',
    checkpoint_id        TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type                 TEXT,
    checkpoint           JSONB NOT NULL,
    metadata             JSONB NOT NULL DEFAULT '{}'
);

CREATE TABLE IF NOT EXISTS langgraph_repair_pruned_blobs (
    run_id        TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel       TEXT NOT NULL,
    version       TEXT NOT NULL,
    type          TEXT NOT NULL,
    blob          BYTEA
);

CREATE TABLE IF NOT EXISTS langgraph_repair_pruned_writes (
    run_id        TEXT NOT NULL,
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    channel       TEXT NOT NULL,
    type          TEXT,
    blob          BYTEA NOT NULL,
    task_path     TEXT NOT NULL DEFAULT ''
);

-- A kept checkpoint whose parent a prune deleted has its parent pointer cleared, as
-- LangGraph's own prune does; the pointer it had is kept here.
CREATE TABLE IF NOT EXISTS langgraph_repair_pruned_parents (
    run_id               TEXT NOT NULL,
    thread_id            TEXT NOT NULL,
    checkpoint_ns        TEXT NOT NULL,
    checkpoint_id        TEXT NOT NULL,
    parent_checkpoint_id TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS langgraph_repair_pruned_checkpoints_run
    ON langgraph_repair_pruned_checkpoints (run_id, thread_id);
CREATE INDEX IF NOT EXISTS langgraph_repair_pruned_blobs_run
    ON langgraph_repair_pruned_blobs (run_id, thread_id);
CREATE INDEX IF NOT EXISTS langgraph_repair_pruned_writes_run
    ON langgraph_repair_pruned_writes (run_id, thread_id);
CREATE INDEX IF NOT EXISTS langgraph_repair_pruned_parents_run
    ON langgraph_repair_pruned_parents (run_id, thread_id);

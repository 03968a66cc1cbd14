-- Runs of langgraph-repair and the threads each run repaired.
-- These tables belong to langgraph-checkpoint-repair; LangGraph's own tables
-- (checkpoints, checkpoint_blobs, checkpoint_writes) are never altered.

CREATE TABLE IF NOT EXISTS langgraph_repair_runs (
    run_id      TEXT PRIMARY KEY,
    command     TEXT NOT NULL,
    arguments   JSONB NOT NULL DEFAULT '{}',
    started_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at TIMESTAMPTZ,
    summary     JSONB
);

CREATE TABLE IF NOT EXISTS langgraph_repair_threads (
    run_id               TEXT NOT NULL REFERENCES langgraph_repair_runs (run_id),
    thread_id            TEXT NOT NULL,
    checkpoint_ns        TEXT NOT NULL,
    source_checkpoint_id TEXT NOT NULL,
    repair_checkpoint_id TEXT NOT NULL,
    actions              JSONB NOT NULL,
    recorded_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, thread_id, checkpoint_ns)
);

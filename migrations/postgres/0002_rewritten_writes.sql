-- Pending writes a run rewrote in place (the nul_text repair), with their bytes before
-- and after, so that undo can put the original bytes back exactly.
-- LangGraph's own tables (checkpoints, checkpoint_blobs, checkpoint_writes) are never
-- altered: a row of checkpoint_writes only has its blob updated by the repair.

CREATE TABLE IF NOT EXISTS langgraph_repair_rewrites (
    run_id         TEXT NOT NULL REFERENCES langgraph_repair_runs (run_id),
    thread_id      TEXT NOT NULL,
    checkpoint_ns  TEXT NOT NULL,
    checkpoint_id  TEXT NOT NULL,
    task_id        TEXT NOT NULL,
    idx            INTEGER NOT NULL,
    channel        TEXT NOT NULL,
    type           TEXT NOT NULL,
    original_blob  BYTEA NOT NULL,
    rewritten_blob BYTEA NOT NULL,
    recorded_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

-- A pending write a run deleted (a stale answer: the null task's `__resume__` write that
-- a task already took) is recorded in langgraph_repair_rewrites with no rewritten bytes,
-- so that undo can insert its original row again.

ALTER TABLE langgraph_repair_rewrites ALTER COLUMN rewritten_blob DROP NOT NULL;

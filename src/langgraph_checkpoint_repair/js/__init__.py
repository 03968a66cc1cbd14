"""Stores written by LangGraph.js (`@langchain/langgraph-checkpoint-postgres` and
`@langchain/langgraph-checkpoint-sqlite`).

LangGraph.js keeps its threads in the same tables as LangGraph (without `task_path`),
with integer channel versions and `json` values of LangChain.js serialisations. They
are read with LangChain's own reviver (messages only) and written back in LangGraph.js's
own format, so the application resumes; nothing JavaScript runs here.

The savers are the store drivers' (`stores.postgres.js_saver`, `stores.sqlite.js_saver`),
each needing its store's extra; this package holds the formats and imports neither.
"""

from .values import JsJsonSerializer, js_serde

__all__ = ["JsJsonSerializer", "js_serde"]

"""Stores written by LangGraph.js (`@langchain/langgraph-checkpoint-postgres`).

LangGraph.js keeps its threads in the same PostgreSQL tables as LangGraph, without
`task_path`, with integer channel versions and `json` blobs of LangChain.js
serialisations. They are read with LangChain's own reviver (messages only) and written
back in LangGraph.js's own format, so the application resumes; nothing JavaScript runs
here. `open_js_aware` opens LangGraph's savers taught both formats.
"""

from .saver import AsyncJsPostgresSaver, JsPostgresSaver
from .values import JsJsonSerializer, js_serde

__all__ = ["AsyncJsPostgresSaver", "JsJsonSerializer", "JsPostgresSaver", "js_serde"]

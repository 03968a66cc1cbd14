"""Values as LangGraph.js stores them: `json` blobs holding LangChain serialisations.

LangChain.js writes a message as `{"lc": 1, "type": "constructor", "id":
["langchain_core", "messages", "AIMessage"], "kwargs": {...}}` and a JavaScript
`undefined` as `{"lc": 2, "type": "undefined"}`. Reading builds LangChain's own
message classes only, through LangChain's reviver restricted to them; any other
constructor stays plain data and is refused, as the strict serializer refuses an
untrusted msgpack type. Writing gives the ids LangChain.js revives: the legacy
`["langchain", "schema", "messages", ...]` that LangChain Python writes is refused
there ("Invalid namespace"), and a msgpack blob is unreadable there altogether.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

from langchain_core.load import dumpd
from langchain_core.load.load import Reviver
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    HumanMessageChunk,
    SystemMessage,
    SystemMessageChunk,
    ToolMessage,
    ToolMessageChunk,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ..compatibility import features
from ..decoding.strict import StrictSerializer

JS_NAMESPACE = ("langchain_core", "messages")
MESSAGE_CLASSES: tuple[type[BaseMessage], ...] = (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    HumanMessageChunk,
    SystemMessage,
    SystemMessageChunk,
    ToolMessage,
    ToolMessageChunk,
)
"""The classes a JavaScript value may build: the messages LangChain.js and Python share."""
_BY_NAME = {cls.__name__: cls for cls in MESSAGE_CLASSES}
_RESTRICTS = "allowed_objects" in inspect.signature(Reviver.__init__).parameters
"""langchain-core 1.2.5 and later restrict the classes its reviver builds; before, the
ids are checked here alone (`_is_message_id`)."""


class _Undefined:
    """A JavaScript `undefined`: a key holding it is absent, a list item is null."""


UNDEFINED = _Undefined()


def _reviver() -> Reviver:
    """LangChain's reviver, admitting its message classes only where it can say so
    (`"messages"`; `"core"` on releases before it, which the ids checked here narrow to
    messages)."""
    if not _RESTRICTS:
        return Reviver()
    try:
        return Reviver(allowed_objects="messages")
    except (TypeError, ValueError, KeyError):
        return Reviver(allowed_objects="core")


def _is_message_id(ident: Any) -> bool:
    """Whether a constructor's id names one of `MESSAGE_CLASSES`, in either form LangChain
    writes: LangChain.js's `langchain_core.messages.X` or Python's legacy one."""
    if not isinstance(ident, list) or not ident or ident[-1] not in _BY_NAME:
        return False
    return tuple(ident[:-1]) in (JS_NAMESPACE, ("langchain", "schema", "messages"))


def _present(value: Any) -> Any:
    """`value` with JavaScript `undefined`s gone: absent keys, null list items."""
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not UNDEFINED}
    if isinstance(value, list):
        return [None if v is UNDEFINED else _present(v) for v in value]
    return value


class Revival:
    """One JSON value's decoding: the messages it builds and the constructors it refused."""

    def __init__(self) -> None:
        self.reviver = _reviver()
        self.refused: set[str] = set()

    def hook(self, value: dict[str, Any]) -> Any:
        """`json.loads`'s object hook: innermost objects first."""
        if value.get("lc") == 2 and value.get("type") == "undefined":
            return UNDEFINED
        if _is_js_snapshot(value):
            return features._DeltaSnapshot(_present(value["value"]))
        if value.get("lc") != 1 or value.get("type") != "constructor":
            return value
        ident = value.get("id")
        if not _is_message_id(ident):
            self.refused.add(".".join(map(str, ident)) if isinstance(ident, list) else "?")
            return value
        return self.reviver(_present(value))


def loads_js(blob: bytes) -> tuple[Any, set[str]]:
    """A `json` blob's value with its messages built, and the constructors refused."""
    revival = Revival()
    value = json.loads(blob, object_hook=revival.hook)
    return (None if value is UNDEFINED else _present(value)), revival.refused


def message_js(message: BaseMessage) -> dict[str, Any]:
    """A message as LangChain.js serialises it: its own id form, its given fields, no
    `type` field (LangChain.js knows the type from the id)."""
    name = type(message).__name__
    if name not in _BY_NAME:
        raise TypeError(f"LangChain.js has no message class for {name}")
    kwargs = dumpd(message)["kwargs"]
    fields = {k: v for k, v in kwargs.items() if k != "type" and v is not None}
    return {"lc": 1, "type": "constructor", "id": [*JS_NAMESPACE, name], "kwargs": fields}


def _is_js_snapshot(value: dict[str, Any]) -> bool:
    """LangGraph.js's form of a delta channel's snapshot (its `DeltaSnapshot`), where
    this LangGraph has delta channels to read it into."""
    marked = value.get("lc") == 2 and value.get("type") == "delta_snapshot" and "value" in value
    return marked and features.DELTA_SNAPSHOT is not None


def _js_value(value: Any) -> Any:
    if isinstance(value, BaseMessage):
        return message_js(value)
    snapshot = features.DELTA_SNAPSHOT
    if snapshot is not None and isinstance(value, snapshot):  # a NamedTuple: before lists
        return {"lc": 2, "type": "delta_snapshot", "value": _js_value(value.value)}
    if isinstance(value, dict):
        return {str(k): _js_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_js_value(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"a {type(value).__name__} has no LangChain.js form")


def dumps_js(value: Any) -> bytes:
    """`value` (messages, lists, plain data) as LangGraph.js writes a `json` blob."""
    return json.dumps(_js_value(value), ensure_ascii=False, separators=(",", ":")).encode()


_JS_MARKS = re.compile(rb'"langchain_core"\s*,\s*"messages"|"type"\s*:\s*"undefined"')


def _js_written(blob: bytes) -> bool:
    """Whether a `json` blob carries LangChain.js's marks: its message ids or an
    `undefined`. LangGraph Python's own old `json` values go to LangGraph's reader."""
    return _JS_MARKS.search(blob) is not None


class JsJsonPlusSerializer(JsonPlusSerializer):
    """LangGraph's default serializer that also reads LangChain.js's `json` values
    (`loads_js`): what a saver opened without a serializer reads with, as the
    application's own saver would (the Agent Server drop-in). Writes are LangGraph's
    own: a checkpoint of LangGraph.js is written by the drivers' LangGraph.js savers,
    with `dumps_js`."""

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, blob = data
        if type_ != "json" or not _js_written(bytes(blob)):
            return super().loads_typed(data)
        value, refused = loads_js(bytes(blob))
        self.note_refused(refused)
        return value

    def note_refused(self, names: set[str]) -> None:
        """Constructors other than messages stay plain data; nothing records them here."""


class JsJsonSerializer(JsJsonPlusSerializer, StrictSerializer):
    """The strict serializer that also reads LangChain.js's `json` values, noting the
    constructors it refused as it notes untrusted msgpack types."""

    @classmethod
    def sharing(cls, strict: StrictSerializer) -> JsJsonSerializer:
        """One reading the way `strict` does, noting its refusals in the same set, so a
        command names every type it refused whichever thread held it."""
        shared = cls.__new__(cls)
        shared.__dict__ = strict.__dict__
        return shared

    def note_refused(self, names: set[str]) -> None:
        self._note(names)


def js_serde(serde: SerializerProtocol | None) -> SerializerProtocol:
    """The serializer a LangGraph.js-aware saver reads with: the given strict one (the
    command's, sharing its refusals) or LangGraph's default, taught LangChain.js's
    values; a saver's own serializer given by a caller is kept as it is."""
    if serde is None:
        return JsJsonPlusSerializer()
    if isinstance(serde, StrictSerializer):
        return JsJsonSerializer.sharing(serde)
    return serde

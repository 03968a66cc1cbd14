"""Types an application stores in its graph state, for the strict loading tests."""

from __future__ import annotations

from pydantic import BaseModel


class Plan(BaseModel):
    """A custom state value, stored in its own channel."""

    steps: list[str]
    done: int = 0


def hostile(path: str) -> BaseModel:
    """A value LangGraph's serializer stores as an extension naming `os.mkdir` with
    `path`: loading it permissively calls `os.mkdir(path=path)`."""

    class mkdir(BaseModel):  # the stored name is what matters
        path: str

    mkdir.__module__ = "os"
    return mkdir(path=path)

"""`module:attr` targets: a saver, or a callable (plain or `async def`) returning a saver
or a (async) context manager yielding one. Any failure to import, call, await or enter
it is one line; `factory_saver` refuses an async factory before calling it."""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from ..redact import one_line
from .errors import AsyncFactory, TargetError
from .saver_api import ASYNC_API, SYNC_API, implements


def _load_attr(spec: str) -> Any:
    """The object `module:attr` names; any failure of the import is one line."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as error:  # the module's own code failed, or exited
        raise TargetError(f"cannot import {module_name!r}: {one_line(error, typed=True)}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise TargetError(f"{module_name!r} has no attribute {attr!r}") from None


def _is_async_factory(found: Any) -> bool:
    """An `async def` factory, or an `@asynccontextmanager` one (known without calling)."""
    wrapped = getattr(found, "__wrapped__", None)
    return inspect.iscoroutinefunction(found) or inspect.isasyncgenfunction(wrapped)


def _made(spec: str, found: Any) -> Any:
    """A saver as is; a callable is called with no arguments (a failure is one line)."""
    if not callable(found) or isinstance(found, BaseCheckpointSaver):
        return found
    try:
        return found()
    except (Exception, SystemExit) as error:  # a factory that exits is no saver either
        raise TargetError(f"calling {spec}() failed: {one_line(error, typed=True)}") from None


@contextlib.contextmanager
def factory_saver(spec: str) -> Iterator[BaseCheckpointSaver[Any]]:
    found = _load_attr(spec)
    if _is_async_factory(found):
        raise AsyncFactory(f"{spec} is an async factory: open it with aopen_saver")
    made = _made(spec, found)
    if isinstance(made, contextlib.AbstractContextManager):
        with made as saver:
            yield _checked(spec, _entered(made, saver))
    elif isinstance(made, contextlib.AbstractAsyncContextManager):
        raise AsyncFactory(f"{spec} gives an async context manager: open it with aopen_saver")
    else:
        yield _checked(spec, made)


@contextlib.asynccontextmanager
async def afactory_saver(spec: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    made = _made(spec, _load_attr(spec))
    if inspect.isawaitable(made):
        try:
            made = await made
        except (Exception, SystemExit) as error:
            raise TargetError(f"awaiting {spec}() failed: {one_line(error, typed=True)}") from None
    if isinstance(made, contextlib.AbstractAsyncContextManager):
        async with made as saver:
            yield _checked(spec, _entered(made, saver))
    elif isinstance(made, contextlib.AbstractContextManager):
        with made as saver:
            yield _checked(spec, _entered(made, saver))
    else:
        yield _checked(spec, made)


def _entered(made: Any, entered: Any) -> Any:
    """What entering `made` gave; `made` itself when it is a saver and that is not one
    (InMemorySaver of langgraph-checkpoint 3.0.0 enters as its own ExitStack)."""
    if isinstance(made, BaseCheckpointSaver) and not isinstance(entered, BaseCheckpointSaver):
        return made
    return entered


def _checked(spec: str, saver: Any) -> BaseCheckpointSaver[Any]:
    if not isinstance(saver, BaseCheckpointSaver):
        raise TargetError(f"{spec} gave a {type(saver).__name__}, not a checkpoint saver")
    if not (implements(saver, SYNC_API) or implements(saver, ASYNC_API)):
        raise TargetError(
            f"{spec} gave a {type(saver).__name__}, which implements neither "
            f"{'/'.join(SYNC_API)} nor {'/'.join(ASYNC_API)}"
        )
    return saver

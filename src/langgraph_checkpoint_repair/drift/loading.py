"""The application's graph, named as an operator names it on the command line (`--graph`):
`path/to/file.py:attr`, `package.module:attr`, or `path/to/langgraph.json:graph_id` as the
Agent Server resolves it (the file relative to the json's folder, its `dependencies`
folders importable). The attribute is a `StateGraph` builder, a compiled graph, or a
function of no arguments returning either. Any failure is one line naming what failed.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..redact import one_line
from .shape import GraphShape, shape_of


class GraphSpecError(ValueError):
    """`--graph` names no graph this process can load; the message is one line."""


def load_graph(spec: str) -> GraphShape:
    """The shape of the graph `spec` names, imported once."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise GraphSpecError(
            f"--graph {spec!r}: give FILE.py:ATTR, MODULE:ATTR or langgraph.json:GRAPH_ID"
        )
    if where.endswith(".json"):
        return load_graph(_from_config(Path(where), attr))
    found = _attribute(_module(where), attr, where)
    return shape_of(_compiled(_built(found, spec), spec))


def _from_config(config: Path, graph_id: str) -> str:
    """The `file.py:attr` that `graph_id` names in a `langgraph.json`, with the config's
    dependency folders put on the import path as the Agent Server installs them."""
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GraphSpecError(f"--graph: no file {str(config)!r}") from None
    except (OSError, ValueError) as error:
        raise GraphSpecError(f"--graph: cannot read {str(config)!r}: {one_line(error)}") from None
    graphs = data.get("graphs") if isinstance(data, dict) else None
    entry = graphs.get(graph_id) if isinstance(graphs, dict) else None
    if isinstance(entry, dict):
        entry = entry.get("path")
    if not isinstance(entry, str):
        known = ", ".join(sorted(graphs)) if isinstance(graphs, dict) else "none"
        raise GraphSpecError(
            f"--graph: {str(config)!r} has no graph {graph_id!r} (its graphs: {known})"
        )
    folder = config.resolve().parent
    load_env(data.get("env"), folder)
    for dependency in data.get("dependencies") or ():
        if isinstance(dependency, str) and not dependency.startswith(("http", "git+")):
            _importable(folder / dependency)
    where, _, attr = entry.rpartition(":")
    if where.endswith(".py") or "/" in where:
        where = str((folder / where).resolve())
    return f"{where}:{attr}"


def load_env(env: Any, folder: Path) -> None:
    """`langgraph.json`'s `env`, set before the graph is imported as the Agent Server
    sets it: a dotenv file (relative to the json's folder) or a mapping. A variable the
    environment already has keeps its value; no value is ever echoed."""
    if env is None:
        return
    if isinstance(env, str):
        path = folder / env
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise GraphSpecError(
                f"--graph: no env file {str(path)!r} (langgraph.json's env)"
            ) from None
        except (OSError, ValueError) as error:
            raise GraphSpecError(f"--graph: cannot read {str(path)!r}: {one_line(error)}") from None
        env = dict(_dotenv_lines(text))
    if not isinstance(env, dict):
        raise GraphSpecError("--graph: langgraph.json's env must be a file name or a mapping")
    for name, value in env.items():
        os.environ.setdefault(str(name), "" if value is None else str(value))


def _dotenv_lines(text: str) -> Iterator[tuple[str, str]]:
    """NAME=value pairs of a dotenv file: comments, blank lines and `export ` ignored,
    one pair of surrounding quotes removed."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        yield name.strip(), value


def _project_root(path: Path) -> Path | None:
    """The folder holding the nearest `langgraph.json` or `pyproject.toml` above a file:
    the Agent Server makes a project importable from there."""
    for folder in path.parents:
        if (folder / "langgraph.json").is_file() or (folder / "pyproject.toml").is_file():
            return folder
    return None


def _importable(folder: Path) -> None:
    if folder.is_dir() and str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def _module(where: str) -> Any:
    """The module of a file path or a dotted name; its own failure is one line."""
    is_file = where.endswith(".py") or "/" in where
    try:
        if is_file:
            return _file_module(Path(where))
        _importable(Path.cwd())  # as `python -m` finds the operator's own packages
        return importlib.import_module(where)
    except GraphSpecError:
        raise
    except ModuleNotFoundError as error:
        if not is_file and error.name and where.startswith(error.name):
            raise GraphSpecError(f"--graph: no module {where!r}") from None
        raise GraphSpecError(f"--graph: cannot import {where!r}: {one_line(error)}") from None
    except (Exception, SystemExit) as error:  # the application's own code failed
        raise GraphSpecError(f"--graph: cannot import {where!r}: {_why(error)}") from None


def _why(error: BaseException) -> str:
    """The import's failure in one line; a variable read at import that is not set is
    named as such (the Agent Server sets them from langgraph.json's `env`)."""
    missing = error.args[0] if isinstance(error, KeyError) and error.args else None
    if isinstance(missing, str) and missing not in os.environ:
        return (
            f"the environment variable {missing!r} is not set (set it, or name an env file "
            "in langgraph.json's env and give --graph langgraph.json:GRAPH_ID)"
        )
    return one_line(error)


def _file_module(path: Path) -> Any:
    if not path.is_file():
        raise GraphSpecError(f"--graph: no file {str(path)!r}")
    path = path.resolve()
    root = _project_root(path)
    if root is not None:
        _importable(root)  # its project's packages, as the Agent Server installs them
    _importable(path.parent)  # its sibling modules, as `python file.py` would find them
    name = f"langgraph_repair_graph_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise GraphSpecError(f"--graph: {str(path)!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _attribute(module: Any, attr: str, where: str) -> Any:
    try:
        return getattr(module, attr)
    except AttributeError:
        raise GraphSpecError(f"--graph: {where!r} has no attribute {attr!r}") from None


def _built(found: Any, spec: str) -> Any:
    """A graph or builder as is; a factory called with no arguments (awaited if async)."""
    if _is_graph(found) or not callable(found):
        return found
    try:
        made = found()
        return asyncio.run(made) if inspect.iscoroutine(made) else made
    except (Exception, SystemExit) as error:
        raise GraphSpecError(f"--graph: calling {spec}() failed: {one_line(error)}") from None


def _compiled(found: Any, spec: str) -> Any:
    """The compiled graph: a builder is compiled here (without a checkpointer)."""
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    if isinstance(found, Pregel):
        return found
    if isinstance(found, StateGraph):
        try:
            return found.compile()
        except Exception as error:
            raise GraphSpecError(f"--graph: {spec} does not compile: {one_line(error)}") from None
    raise GraphSpecError(
        f"--graph: {spec} is a {type(found).__name__}, not a StateGraph, a compiled graph "
        "or a function of no arguments returning one"
    )


def _is_graph(found: Any) -> bool:
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    return isinstance(found, (Pregel, StateGraph))

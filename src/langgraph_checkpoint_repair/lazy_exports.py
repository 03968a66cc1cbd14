"""A package's public names, imported from their modules on first use (PEP 562).

`langgraph-repair --help` must not pay for LangGraph's graph runtime, and a scan of a
SQLite file must not import psycopg; yet `from langgraph_checkpoint_repair import
PatchingCheckpointer` and `from langgraph_checkpoint_repair.targets import open_saver`
must work as they always have. A package whose `__init__` re-exports its modules'
names eagerly would import all of them for any one; this imports one when it is asked
for, and keeps it as a plain attribute of the package from then on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """`__all__`, `__getattr__` and `__dir__` for `package`, whose names live in the
    (relative) modules `homes` maps to them."""
    home_of = {name: module for module, names in homes.items() for name in names}
    namespace = import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home_of})

    return sorted(home_of), __getattr__, __dir__

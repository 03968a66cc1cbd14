"""Whether a stored type can be rebuilt here, decided without running any module.

A stored name is data written by code the operator may not control, so it is
never imported merely because it is named. `module_findable` asks the import
system's finders (`sys.meta_path`, the same ones `import` asks) for each
package on the way down, exactly as `import` would locate it, but never
executes a package's `__init__`: a module that is not found there is lost.
Only a type the operator allowed is imported, as LangGraph imports it.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Collection, Sequence
from importlib.machinery import ModuleSpec
from typing import Literal

Status = Literal["safe", "allowed", "refused", "lost"]


@functools.lru_cache(maxsize=4096)
def module_findable(module: str) -> bool:
    """True when `import module` would find a file or a loader for it here."""
    parts = module.split(".")
    path: Sequence[str] | None = None
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        loaded = sys.modules.get(name)
        if loaded is not None:
            path = getattr(loaded, "__path__", None)
        else:
            spec = _find_spec(name, path)
            if spec is None:
                return False
            locations = spec.submodule_search_locations
            path = None if locations is None else list(locations)
        if path is None and depth < len(parts):
            return False  # a module, not a package: nothing lives below it
    return True


def _find_spec(name: str, path: Sequence[str] | None) -> ModuleSpec | None:
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            spec = find_spec(name, path)
        except KeyError:
            return _namespace_portions(name, path)
        except (ImportError, ValueError, TypeError, OSError):
            continue
        if isinstance(spec, ModuleSpec):
            return spec
    return None


def _namespace_portions(name: str, path: Sequence[str] | None) -> ModuleSpec | None:
    """A namespace package (a folder without `__init__.py`, as in a src layout) below one
    nobody imported: the path finder cannot make its live path (which asks the parent in
    `sys.modules`), so its portions, the folders of its name on the parent's path, are
    read here instead."""
    last = name.rpartition(".")[2]
    folders = [os.path.join(entry, last) for entry in (path if path is not None else sys.path)]
    portions = [folder for folder in folders if os.path.isdir(folder)]
    if not portions:
        return None
    spec = ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = portions
    return spec


@functools.lru_cache(maxsize=4096)
def importable(module: str, name: str) -> bool:
    """Whether an allowed type imports as LangGraph would import it (module, then class)."""
    try:
        return hasattr(importlib.import_module(module), name)
    except Exception:
        return False


def is_safe(named: tuple[str, ...], safe: Collection[tuple[str, ...]]) -> bool:
    """Whether a stored name is in LangGraph's safe set (a constructor, or a method of one)."""
    return named in safe or named[:2] in safe


def lost_reason(named: tuple[str, ...], allowed: Collection[tuple[str, ...]] = ()) -> str | None:
    """Why a stored type cannot be rebuilt here; None when it can, as far as is known
    without running what the operator did not allow. An `allowed` type is imported, as
    LangGraph imports it; any other's module is only found, and looked into only where
    something imported it already. One rule for `types`, the findings and the wrapper."""
    module, name = named[0], named[1]
    if not module_findable(module):
        return f"module {module!r} is not found here"
    if named[:2] in allowed:
        if importable(module, name):
            return None
        if module not in sys.modules:
            return f"module {module!r} does not import here"
    loaded = sys.modules.get(module)
    if loaded is not None and not hasattr(loaded, name):
        return f"module {module!r} has no {name!r}"
    return None


def type_status(
    named: tuple[str, ...],
    safe: Collection[tuple[str, ...]],
    allowed: Collection[tuple[str, ...]] = (),
) -> Status:
    """`safe` (LangGraph's own set), `allowed` (trusted by the operator and importable),
    `refused` (found here but untrusted: never imported) or `lost` (cannot be rebuilt:
    `lost_reason`)."""
    if is_safe(named, safe):
        return "safe"
    if lost_reason(named, allowed) is not None:
        return "lost"
    return "allowed" if named[:2] in allowed else "refused"

"""`langgraph-repair` in a child process, optionally without some installed modules.

`REPAIR_TEST_BLOCK` lists module names (comma-separated) whose import fails as if
the optional extra providing them were not installed. `REPAIR_TEST_MODULES` names a
file that receives, when the command ends, the modules it imported (one per line).
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

BLOCK_ENV = "REPAIR_TEST_BLOCK"
MODULES_ENV = "REPAIR_TEST_MODULES"


class NotInstalled(importlib.abc.MetaPathFinder):
    """Makes the named modules and their submodules unimportable."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if any(fullname == name or fullname.startswith(f"{name}.") for name in self.names):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


if __name__ == "__main__":
    blocked = [name for name in os.environ.get(BLOCK_ENV, "").split(",") if name]
    if blocked:
        sys.meta_path.insert(0, NotInstalled(blocked))
    from langgraph_checkpoint_repair.cli import main  # after the finder: nothing loaded yet

    try:
        code = main()
    finally:  # --help and --version end in SystemExit
        listing = os.environ.get(MODULES_ENV)
        if listing:
            with open(listing, "w") as modules:
                modules.write("\n".join(sorted(sys.modules)))
    sys.exit(code)

"""The package's public names load on first use, and read as any package's do: every
name of `__all__` imports (one by one and with `*`), `dir()` lists them, an unknown one
is an AttributeError, and asking for one loads its module and no other."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import langgraph_checkpoint_repair
from langgraph_checkpoint_repair import batch, targets

PACKAGES = [langgraph_checkpoint_repair, batch, targets]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.__name__)
def test_every_public_name_imports_and_is_listed(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    found = {name: getattr(package, name) for name in names}

    assert names and all(value is not None for value in found.values())
    assert set(names) <= set(dir(package))
    namespace: dict[str, object] = {}
    exec(f"from {package.__name__} import *", namespace)  # type: ignore[attr-defined]
    assert set(names) <= set(namespace)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.__name__)
def test_an_unknown_name_is_an_attribute_error(package: object) -> None:
    with pytest.raises(AttributeError, match="has no attribute 'repair_everything'"):
        package.repair_everything  # type: ignore[attr-defined]  # noqa: B018


def test_asking_for_one_name_loads_its_module_alone() -> None:
    """In a fresh interpreter: the wrapper's name loads the checkpointer, not the
    batch job, the command line or the in-run helpers; of the stores, only what
    says which driver reads a saver's tables and the history reader it walks parent
    chains with (a driver's SQL loads when a load first needs it), never a store."""
    code = (
        "import json, sys\n"
        "from langgraph_checkpoint_repair import PatchingCheckpointer\n"
        "print(json.dumps([name for name in sys.modules if name.startswith('langgraph_')]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)

    assert "langgraph_checkpoint_repair.checkpointer.saver" in loaded
    ours = [name for name in loaded if name.startswith("langgraph_checkpoint_repair.")]
    rooms = {name.split(".")[1] for name in ours}
    assert not rooms & {"batch", "cli", "in_run", "server"}
    stores = {name for name in ours if name.split(".")[1] == "stores"}
    assert stores == {
        "langgraph_checkpoint_repair.stores",
        "langgraph_checkpoint_repair.stores.drivers",
        "langgraph_checkpoint_repair.stores.history",
        "langgraph_checkpoint_repair.stores.generic",
        "langgraph_checkpoint_repair.stores.generic.chains",
    }

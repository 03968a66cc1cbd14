"""The architecture page's table of rooms is what the code does: every module of the
package belongs to a room the table names, and imports only the rooms the table lets
it import (so nothing imports upward and there is no cycle)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "src" / "langgraph_checkpoint_repair"
PAGE = ROOT / "docs" / "explanation" / "architecture.md"


def allowed_imports() -> dict[str, set[str]]:
    """Each room of the page's table, with the rooms it may import."""
    rooms: dict[str, set[str]] = {}
    for line in PAGE.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rooms[cells[0].strip("`")] = set(re.findall(r"`(\w+)`", cells[2]))
    return rooms


def room_of(parts: list[str]) -> str:
    return parts[0].removesuffix(".py") if parts else "__init__"


def imported_rooms(source: str, parts: list[str]) -> set[str]:
    """The package's rooms that a module of the package (its path's `parts` below the
    package) imports, given its `source`."""
    package = parts[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            target = [*base, *(node.module.split(".") if node.module else [])]
            found.update([target[0]] if target else [name.name for name in node.names])
        elif node.module and node.module.startswith("langgraph_checkpoint_repair."):
            found.add(node.module.split(".")[1])
    return found


def test_every_module_imports_only_what_its_room_may() -> None:
    rooms = allowed_imports()
    assert {"engine", "decisions", "stores", "batch", "cli"} <= set(rooms)
    broken: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).parts)
        room = room_of(parts)
        if room == "__init__":
            continue
        assert room in rooms, f"{path.relative_to(ROOT)}: its room {room!r} is not on the page"
        for other in imported_rooms(path.read_text(), parts) - {room}:
            if other not in rooms[room]:
                broken.append(f"{path.relative_to(ROOT)} imports {other}")
    assert broken == []


def test_a_forbidden_import_is_caught() -> None:
    """The check can fail: an engine module that imports the batch job is named."""
    module = PACKAGE / "engine" / "walk.py"
    planted = module.read_text() + "\nfrom ..batch import repair_threads\n"

    found = imported_rooms(planted, list(module.relative_to(PACKAGE).parts))

    assert "batch" in found and "batch" not in allowed_imports()["engine"]

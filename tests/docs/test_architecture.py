"""The architecture page's table of rooms is what the code does: every module of the
package belongs to a room the table names, and imports only the rooms the table lets
it import, by an import statement or by `importlib.import_module` of a name the module
spells out; and the table itself has no cycle, so nothing imports upward."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
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
    tree = ast.parse(source)
    found = set(loaded_rooms(tree, package))
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            target = [*base, *(node.module.split(".") if node.module else [])]
            found.update([target[0]] if target else [name.name for name in node.names])
        elif node.module and node.module.startswith("langgraph_checkpoint_repair."):
            found.add(node.module.split(".")[1])
    return found


def loaded_rooms(tree: ast.Module, package: list[str]) -> Iterator[str]:
    """The rooms a module loads with `importlib.import_module(NAME, ...)`, where NAME is a
    string it spells out: a literal, `f"{__package__}.sibling"`, or a module-level name
    bound to either (the first look loads its siblings so, to run in a helper process)."""
    bound = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node.func) == "import_module" and node.args:
            name = _spelled(node.args[0], bound)
            if name is not None:
                yield from _room_of_name(name, package)


def _called(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _spelled(node: ast.expr, bound: dict[str, ast.expr]) -> str | None:
    """The module name an expression spells, `{__package__}` written as `.`."""
    if isinstance(node, ast.Name) and node.id in bound:
        return _spelled(bound[node.id], {})
    if isinstance(node, ast.IfExp):  # `... if __package__ else "sibling"`: the package's
        return _spelled(node.body, bound)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        pieces = [
            "" if isinstance(piece, ast.FormattedValue) else str(getattr(piece, "value", ""))
            for piece in node.values
        ]
        return "".join(pieces) if isinstance(node.values[0], ast.FormattedValue) else None
    return None


def _room_of_name(name: str, package: list[str]) -> Iterator[str]:
    if name.startswith("langgraph_checkpoint_repair."):
        yield name.split(".")[1]
    elif name.startswith("."):
        level = len(name) - len(name.lstrip("."))
        target = [*package[: len(package) - (level - 1)], *name.lstrip(".").split(".")]
        yield target[0]


def cycle(rooms: dict[str, set[str]]) -> list[str] | None:
    """A path of rooms that comes back to where it started, or None."""
    state: dict[str, str] = {}

    def visit(room: str, path: list[str]) -> list[str] | None:
        if state.get(room) == "open":
            return [*path, room]
        if state.get(room) == "done":
            return None
        state[room] = "open"
        for other in sorted(rooms.get(room, ())):
            found = visit(other, [*path, room])
            if found is not None:
                return found
        state[room] = "done"
        return None

    return next(filter(None, (visit(room, []) for room in sorted(rooms))), None)


def test_the_table_has_no_cycle() -> None:
    assert cycle(allowed_imports()) is None
    assert cycle({"engine": set(), "batch": {"stores"}, "stores": {"batch"}}) == [
        "batch",
        "stores",
        "batch",
    ]


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


def test_a_room_loaded_by_name_is_caught() -> None:
    """The first look loads a sibling by a name it spells: read as an import of its own
    room; the same load of the batch job from the engine is named."""
    look = PACKAGE / "stores" / "first_look" / "plain.py"
    assert imported_rooms(look.read_text(), ["stores", "first_look", "plain.py"]) >= {"stores"}
    bound = PACKAGE / "stores" / "first_look" / "token_bound.py"
    assert "engine" in imported_rooms(bound.read_text(), ["stores", "first_look", "x.py"])
    planted = (
        'import importlib\n_runner = importlib.import_module("...batch.runner", __package__)\n'
    )

    found = imported_rooms(planted, ["engine", "context", "walk.py"])

    assert "batch" in found


DRIVER_FOLDERS = ("stores/postgres/", "stores/sqlite/", "stores/generic/")
"""Where SQL may be written: a store driver's folder (see the page's recipe for a store)."""
SQL_STATEMENT = re.compile(
    r"^\s*(SELECT\s|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|"
    r"CREATE\s|ALTER\s|DROP\s|WITH\s+(RECURSIVE\s+)?\w+|PRAGMA\s|BEGIN\b|COMMIT\b|"
    r"ROLLBACK\b|SET\s+(LOCAL\s+)?\w+\s*(=|TO\s)|GRANT\b|REVOKE\b|LOCK\s+TABLE|VACUUM\b|"
    r"ANALYZE\b|SAVEPOINT\s|EXPLAIN\s)"
)
LONGEST_MODULE = 450


def sql_literals(source: str) -> list[int]:
    """The lines of the string literals (f-strings' pieces too) that start an SQL statement."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and SQL_STATEMENT.match(node.value)
    ]


def test_sql_is_written_only_in_a_driver_folder() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.relative_to(PACKAGE).as_posix().startswith(DRIVER_FOLDERS)
        for line in sql_literals(path.read_text())
    ]
    assert found == []


def test_a_statement_outside_a_driver_is_caught() -> None:
    """The check can fail: a query planted in the delta room, as it once lived there."""
    planted = 'CHAIN = f"""\nWITH RECURSIVE chain (id) AS (SELECT 1)"""\nX = "BEGIN IMMEDIATE"\n'
    assert sorted(sql_literals(planted)) == [1, 3]
    assert sql_literals('TEXT = "selected heads, with their writes"') == []


def test_no_module_is_longer_than_a_sitting() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) > LONGEST_MODULE
    }
    assert long == {}

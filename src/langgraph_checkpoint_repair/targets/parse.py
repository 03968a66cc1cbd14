"""A TARGET string read: which kind of store it names, without opening it.

postgresql://user@host/db   a PostgreSQL server
sqlite:///path/to/file      a SQLite file
redis://[:password@]host[:port][/db]   a Redis server (rediss:// over TLS)
package.module:attr         a saver, or a factory of one
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .. import redact
from .errors import TargetError


@dataclass(frozen=True)
class Target:
    kind: Literal["postgres", "sqlite", "redis", "factory"]
    location: str


POSTGRES_SCHEMES = ("postgresql", "postgres")
REDIS_SCHEMES = ("redis", "rediss")
TARGET_ENV = "LANGGRAPH_REPAIR_TARGET"


def parse_target(text: str) -> Target:
    """Tell which kind of store a TARGET names, without opening it. Schemes match in
    any case; the passwords a TARGET carries are noted, to be scrubbed from any output."""
    redact.remember(text)
    scheme, separator, rest = text.partition("://")
    scheme = scheme.lower() if separator else ""
    if scheme in POSTGRES_SCHEMES:
        return Target("postgres", f"{scheme}://{rest}")
    base, plus, driver = scheme.partition("+")
    if plus and base in POSTGRES_SCHEMES:  # SQLAlchemy's grammar is not libpq's: say so
        raise TargetError(
            f"{redact.scrub(text)!r} is a SQLAlchemy URL: write it as {base}://... "
            f"(libpq's form, without '+{driver}')"
        )
    if scheme == "sqlite" and rest.startswith("/"):
        path = rest[1:]
        if not path:
            raise TargetError("sqlite:/// needs a file path, e.g. sqlite:///threads.sqlite")
        return Target("sqlite", path)
    if scheme in REDIS_SCHEMES:
        return Target("redis", f"{scheme}://{rest}")
    module, _, attr = text.partition(":")
    if "://" not in text and module and attr.isidentifier():
        if "/" in module or "\\" in module or module.endswith(".py"):
            raise TargetError(
                f"{module!r} is a file path: name the module as Python imports it "
                "(e.g. my_app.savers:make_saver), with its folder on PYTHONPATH"
            )
        return Target("factory", text)
    raise TargetError(
        f"unknown target {redact.scrub(text)!r}: use postgresql://..., sqlite:///path, "
        "redis://... or module:attr"
    )

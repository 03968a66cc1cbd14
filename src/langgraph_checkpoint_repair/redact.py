"""Passwords out of everything the package prints, logs or records, and an error as the
one line a person reads (`one_line`).

A TARGET may carry a password: in a URL's userinfo (`postgresql://app:pw@db/x`),
as a `password=` query parameter, or as a `password=` keyword of a libpq
key=value string. `scrub` replaces each of these forms in any text by `***`,
wherever the text came from (our messages, psycopg's and libpq's errors, log
records); `remember` also notes the passwords of the target in use, so that a
message echoing one alone (libpq quotes a bad percent-escape, for one) is
scrubbed too. Every error line, log line, JSON output and audit row passes
through here.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import unquote

MASK = "***"
SHORTEST_REMEMBERED = 4
"""Shorter passwords are masked where a DSN form shows them, not wherever they appear
(masking every "pw" in every line would garble the output)."""

_USERINFO = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:'\"]*):(?P<secret>[^\s/?#'\"]*)@"
)
_KEYWORD = re.compile(
    r"(?P<head>\bpassword\s*=\s*)(?P<secret>'(?:[^'\\]|\\.)*'?|[^\s&'\"]+)", re.IGNORECASE
)

_known: set[str] = set()
_lock = threading.Lock()


def passwords_in(dsn: str) -> set[str]:
    """The passwords a DSN carries, as written and percent-decoded."""
    found = {m["secret"] for m in _USERINFO.finditer(dsn)}
    found |= {m["secret"].strip("'") for m in _KEYWORD.finditer(dsn)}
    found |= {unquote(secret) for secret in found}
    return {secret for secret in found if secret}


def remember(dsn: str) -> None:
    """Note the passwords of `dsn`, to scrub them wherever they appear later."""
    with _lock:
        _known.update(p for p in passwords_in(dsn) if len(p) >= SHORTEST_REMEMBERED)


def scrub(text: str) -> str:
    """`text` with every password masked: DSN forms, then any remembered password."""
    text = _USERINFO.sub(lambda m: f"{m['head']}:{MASK}@", text)
    text = _KEYWORD.sub(lambda m: f"{m['head']}{MASK}", text)
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in known:
        text = text.replace(secret, MASK)
    return text


def one_line(error: BaseException, *, typed: bool = False) -> str:
    """An error as one line for a person, with any password masked (a driver's error may
    echo the connection string): the database server's own message where the driver
    has it (libpq ends its text with ` at character N` when it lacks the statement,
    which says nothing to an operator), else the first line of its text, else its
    class name; `typed` puts the class name first."""
    primary = getattr(getattr(error, "diag", None), "message_primary", None)
    text = primary if isinstance(primary, str) and primary.strip() else str(error)
    lines = text.strip().splitlines()
    if not lines:
        return type(error).__name__
    return scrub(f"{type(error).__name__}: {lines[0]}" if typed else lines[0])


def scrubbed(value: Any) -> Any:
    """A JSON-like value with every string in it scrubbed (keys too)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrubbed(k): scrubbed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrubbed(item) for item in value]
    return value


class RedactingFilter(logging.Filter):
    """A handler filter that scrubs each record's message and traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
        return True

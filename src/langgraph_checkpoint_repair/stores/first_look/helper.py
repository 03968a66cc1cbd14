"""A helper process that takes most of each page's first look onto another core.

The first look (`plain`) is pure decoding, which the GIL keeps on one
core while the page reads and the full loads need it too. The helper is a
second Python process that loads `plain`, `token_bound`, `js_look` and the
approximation's constants (`engine.context.approximation`) from their files alone
(no package, so it starts in tens of milliseconds), reads batches of blobs on its
standard input and writes back one verdict byte per blob. It sees only the blobs,
never a URL or a credential, and runs the same code as the look in this process.

A page is sent to the helper as soon as it is read, so the helper decodes it
while this process loads the previous page's broken heads. It can only make
the look faster, never different: anything unexpected (it cannot start, it
dies, it stays silent, its answer has the wrong number, length or a byte other
than 0 or 1) stops it for good, and its share is judged here.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

from ...engine.context import approximation
from . import js_look, plain, token_bound

logger = logging.getLogger("langgraph_checkpoint_repair.batch")

MIN_BATCH = 64
"""Pages with fewer blobs are judged here: sending them costs more than it saves."""
HELPER_SHARE = 90
"""Percent of a page's blobs the helper judges: this process also reads the pages and
loads the heads that may be broken."""
ANSWER_TIMEOUT = 60.0
"""Seconds the helper may stay silent while an answer is due before it is given up."""

_PASSED_ON = ("PATH", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH")
"""All the helper gets of the environment: what an interpreter may need to start.
Nothing else (a DSN in `DATABASE_URL`, a cloud token) reaches it."""

_CHILD = """\
import importlib.util, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is the parent's to handle
for name, path in zip(("approximation", "token_bound", "js_look", "look"), sys.argv[1:]):
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
module.serve_verdicts(sys.stdin.buffer, sys.stdout.buffer)
"""


class LookHelper:
    """`start_judging` sends the helper its share of a page's blobs as soon as the page
    is read; the judge it returns, called when the page's turn comes, judges the rest
    here and takes the helper's verdicts, which by then are mostly ready."""

    def __init__(self, start: bool = True) -> None:
        self.start = start
        self.process: subprocess.Popen[bytes] | None = None
        self.batches = 0
        """Batches sent so far: each answer must carry its batch's number."""

    def __enter__(self) -> LookHelper:
        self.process = _start() if self.start else None
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def start_judging(
        self, items: list[bytes], kind: int = plain.HISTORIES, budget: int | None = None
    ) -> Callable[[list[bytes]], bytes]:
        """Send the helper its share of `items` (stored histories, or packed delta walks)
        now. The judge returned gives `plain.plain_verdicts` of the same items (under the
        token `budget`, if given); judges must be called in the order their items were
        sent."""
        here = functools.partial(plain.plain_verdicts, kind=kind, budget=budget)
        if self.process is None or len(items) < MIN_BATCH:
            return here
        share = len(items) * HELPER_SHARE // 100
        number = self._send(items[:share], kind, budget)
        if number is None:
            return here

        def judge(same: list[bytes]) -> bytes:
            mine = here(same[share:])
            answer = self._receive(number, share)
            return (here(same[:share]) if answer is None else answer) + mine

        return judge

    def judge(
        self, items: list[bytes], kind: int = plain.HISTORIES, budget: int | None = None
    ) -> bytes:
        """`plain.plain_verdicts` of `items`, the helper's share judged there."""
        return self.start_judging(items, kind, budget)(items)

    def _send(self, items: list[bytes], kind: int, budget: int | None) -> int | None:
        """The batch's number once sent; None (and the helper given up) if it could not be."""
        self.batches += 1
        try:
            sink = _pipe(self.process, "stdin")
            plain.write_batch(sink, self.batches, kind, items, budget)
        except (OSError, ValueError) as error:
            self._give_up(error)
            return None
        return self.batches

    def _receive(self, number: int, count: int) -> bytes | None:
        """The verdicts of batch `number`, or None (and the helper given up) for an
        answer that is not exactly its header and `count` bytes of 0 or 1."""
        header = plain.answer_header(number, count)
        try:
            answer = _read(_pipe(self.process, "stdout"), len(header) + count)
        except (OSError, ValueError) as error:
            self._give_up(error)
            return None
        verdicts = answer[len(header) :]
        if not answer.startswith(header) or len(verdicts) != count or verdicts.strip(b"\x00\x01"):
            self._give_up(f"an answer of {len(answer)} bytes to batch {number} of {count} blobs")
            return None
        return verdicts

    def _give_up(self, why: object) -> None:
        logger.warning("first-look helper stopped, looking in this process: %s", why)
        self.stop()

    def stop(self) -> None:
        """End the helper: its input closed, then killed if it has not gone within 5 s."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(OSError, ValueError):
            _pipe(process, "stdin").close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        with contextlib.suppress(OSError, ValueError):
            _pipe(process, "stdout").close()


def _pipe(process: subprocess.Popen[bytes] | None, name: str) -> IO[bytes]:
    stream = None if process is None else getattr(process, name)
    if stream is None:
        raise ValueError("the helper is not running")
    return stream  # type: ignore[no-any-return]


def _read(stream: IO[bytes], count: int) -> bytes:
    """`count` bytes, or fewer when the helper ended or stayed silent for a minute.
    Read from the pipe itself, never more than asked: a buffered read could take the
    next batch's answer too, where `select` no longer sees it."""
    received: list[bytes] = []
    while count:
        if not select.select([stream.fileno()], [], [], ANSWER_TIMEOUT)[0]:
            break
        chunk = os.read(stream.fileno(), count)
        if not chunk:
            break
        received.append(chunk)
        count -= len(chunk)
    return b"".join(received)


def _start() -> subprocess.Popen[bytes] | None:
    """The helper process, or None where it cannot help: one core, no file to load, no
    pipes that `select` can wait on (Windows)."""
    modules = (approximation, token_bound, js_look, plain)
    sources = [Path(module.__file__ or "") for module in modules]
    if (os.cpu_count() or 1) < 2 or os.name != "posix" or not all(p.is_file() for p in sources):
        return None
    if not sys.executable:  # an embedded interpreter: nothing to start
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-c", _CHILD, *map(str, sources)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k in _PASSED_ON},
            start_new_session=True,  # Ctrl-C at the terminal reaches this process only
        )
    except OSError as error:
        logger.warning("first-look helper not started, looking in this process: %s", error)
        return None

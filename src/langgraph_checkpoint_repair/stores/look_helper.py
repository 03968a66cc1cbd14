"""A helper process that takes half of each page's first look onto another core.

The first look (`stores.plain`) is pure decoding, which the GIL keeps on one
core while the page reads and the full loads need it too. The helper is a
second Python process that loads `stores/plain.py` from its file alone (no
package, so it starts in tens of milliseconds), reads batches of blobs on its
standard input and writes back one verdict byte per blob. It sees only the
blobs, never a URL or a credential, and runs the same code as the look in
this process.

It can only make the look faster, never different: anything unexpected (it
cannot start, it dies, it answers with the wrong length or a byte other than
0 or 1) stops it for good, and its half is judged here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import IO

from . import plain

logger = logging.getLogger("langgraph_checkpoint_repair.batch")

MIN_BATCH = 64
"""Pages with fewer blobs are judged here: sending them costs more than it saves."""
ANSWER_TIMEOUT = 60.0
"""Seconds the helper may take to start answering a batch before it is given up."""

_PASSED_ON = ("PATH", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH")
"""All the helper gets of the environment: what an interpreter may need to start.
Nothing else (a DSN in `DATABASE_URL`, a cloud token) reaches it."""

_CHILD = """\
import importlib.util, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is the parent's to handle
spec = importlib.util.spec_from_file_location("look", sys.argv[1])
look = importlib.util.module_from_spec(spec)
spec.loader.exec_module(look)
look.serve_verdicts(sys.stdin.buffer, sys.stdout.buffer)
"""


class LookHelper:
    """`judge` gives `plain.plain_verdicts` of a page's blobs, half of them judged by
    the helper process while this one judges the rest."""

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

    def judge(self, blobs: list[bytes]) -> bytes:
        if self.process is None or len(blobs) < MIN_BATCH:
            return plain.plain_verdicts(blobs)
        half = len(blobs) // 2
        theirs, ours = blobs[:half], blobs[half:]
        if not self._send(theirs):
            return plain.plain_verdicts(blobs)
        mine = plain.plain_verdicts(ours)
        answer = self._receive(self.batches, len(theirs))
        return (plain.plain_verdicts(theirs) if answer is None else answer) + mine

    def _send(self, blobs: list[bytes]) -> bool:
        self.batches += 1
        try:
            plain.write_batch(_pipe(self.process, "stdin"), self.batches, blobs)
            return True
        except (OSError, ValueError) as error:
            self._give_up(error)
            return False

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
    """`count` bytes, or fewer when the helper ended or stayed silent for a minute."""
    if not select.select([stream], [], [], ANSWER_TIMEOUT)[0]:
        return b""
    return stream.read(count)


def _start() -> subprocess.Popen[bytes] | None:
    """The helper process, or None where it cannot help: one core, no file to load, no
    pipes that `select` can wait on (Windows)."""
    source = Path(plain.__file__)
    if (os.cpu_count() or 1) < 2 or os.name != "posix" or not source.is_file():
        return None
    if not sys.executable:
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-c", _CHILD, str(source)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k in _PASSED_ON},
            start_new_session=True,  # Ctrl-C at the terminal reaches this process only
        )
    except OSError as error:
        logger.warning("first-look helper not started, looking in this process: %s", error)
        return None

"""A TCP relay on 127.0.0.1 in front of PostgreSQL that can cut a connection in the
middle of a result, or hold the result there until told to go on: it reads the
server's messages (type byte, then length) and, once armed, closes both ends after
relaying part of the next result of many rows (or stops relaying it for a while)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

ROW_DESCRIPTION, DATA_ROW = ord("T"), ord("D")
RESULT_ENDS = frozenset(b"CIZE")
"""CommandComplete, EmptyQueryResponse, ReadyForQuery, ErrorResponse: a prepared
statement's rows come without a RowDescription, so a result is counted between these."""


class Relay:
    """Relays every connection to `target`; `arm` makes it cut the first connection that
    receives `rows` rows of one result (a page of heads, not a single-row lookup).
    With `accepts`, it stops listening after that many connections: later ones are
    refused, as by a server that went away."""

    def __init__(self, target: tuple[str, int], rows: int = 100, accepts: int = 0) -> None:
        self.target = target
        self.rows = rows
        self.accepts = accepts
        self.armed = threading.Event()
        self.cut = threading.Event()
        """Set once a connection was cut mid-result."""
        self.skip = 0
        """Results of `rows` rows relayed whole, once armed, before the one acted on."""
        self.hold = False
        self.held = threading.Event()
        """Set once a result is held (with `hold`): its client waits until `release`."""
        self.released = threading.Event()
        self._results = 0
        self._count = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def uri(self, uri: str) -> str:
        """`uri` through this relay, unencrypted, so that its messages can be read."""
        parts = urlsplit(uri)
        user = parts.netloc.rpartition("@")[0]
        netloc = f"{user}@127.0.0.1:{self.port}" if user else f"127.0.0.1:{self.port}"
        query = "&".join(filter(None, [parts.query, "sslmode=disable", "gssencmode=disable"]))
        return urlunsplit(parts._replace(netloc=netloc, query=query))

    def arm(self, skip: int = 0, hold: bool = False) -> None:
        """Act on the result of many rows after the next `skip` ones: cut it, or with
        `hold`, stop relaying it until `release`."""
        self.skip, self.hold = skip, hold
        self.armed.set()

    def release(self) -> None:
        """A held result goes on to its client, and every later one passes."""
        self.armed.clear()
        self.released.set()

    def _acts_on_this(self) -> bool:
        """Whether the result that just reached `rows` rows is the one to act on."""
        with self._count:
            if not self.armed.is_set() or self.cut.is_set() or self.held.is_set():
                return False
            self._results += 1
            return self._results > self.skip

    def close(self) -> None:
        for sock in [self.listener, *self._sockets]:
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()
            threading.Thread(target=self._relay_results, args=(server, client), daemon=True).start()
            if self.accepts and len(self._sockets) // 2 >= self.accepts:
                self.listener.close()  # every later connection is refused
                return

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        _close(source, sink)

    def _relay_results(self, server: socket.socket, client: socket.socket) -> None:
        """The server's messages to the client, counting each result's rows."""
        pending, rows = b"", 0
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                pending += data
                complete = 0
                for kind, end in _messages(pending):
                    rows = 0 if kind in RESULT_ENDS or kind == ROW_DESCRIPTION else rows
                    rows += kind == DATA_ROW
                    complete = end
                    if kind != DATA_ROW or rows != self.rows or not self._acts_on_this():
                        continue
                    if self.hold:
                        self.held.set()
                        self.released.wait()  # nothing more of it until then
                        continue
                    client.sendall(pending[:end])  # part of the result, then nothing
                    self.cut.set()
                    _close(server, client)
                    return
                client.sendall(pending[:complete])
                pending = pending[complete:]
        _close(server, client)


def _messages(buffer: bytes) -> Iterator[tuple[int, int]]:
    """(type, end offset) of each complete message at the start of `buffer`."""
    at = 0
    while len(buffer) - at >= 5:
        end = at + 1 + int.from_bytes(buffer[at + 1 : at + 5], "big")
        if end > len(buffer):
            return
        yield buffer[at], end
        at = end


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()

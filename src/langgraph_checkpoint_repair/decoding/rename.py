"""Stored bytes renamed: a msgpack blob made to name a moved class, byte for byte.

LangGraph's serializer stores an object as an extension whose payload starts with
the module and class that rebuild it. `rename_types` walks the msgpack bytes
themselves, copies every byte verbatim, and re-emits only the extensions whose
payload names a moved type (and the extensions enclosing them, whose lengths
change). Nothing is unpacked into objects and nothing is imported: the new class
is built later, by LangGraph's own decode, if at all.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping

from .names import CONSTRUCTORS, METHOD, SNAPSHOT, TypeName, UndecodableBytes
from .strict import parse_allowed

Moved = Mapping[TypeName, TypeName]
"""(old module, old name) -> (new module, new name)."""

NAMING_CODES = frozenset({*CONSTRUCTORS, METHOD})
"""Extensions whose payload is [module, name, arguments, ...]."""

_FIXED_SIZES = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}
"""fixext 1/2/4/8/16: a header of two bytes (marker, code), then the payload."""
_FIXEXT_MARKER = {size: marker for marker, size in _FIXED_SIZES.items()}
_SCALAR_SIZES = {
    **{0xC0: 0, 0xC2: 0, 0xC3: 0},
    **{0xCA: 4, 0xCB: 8},
    **{0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8},
    **{0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8},
}
"""Markers followed by a fixed number of bytes: nil, booleans, floats, integers."""
_SIZED = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}
"""bin 8/16/32 and str 8/16/32: a length of this many bytes, then the data."""
_UNSIGNED = {1: ">B", 2: ">H", 4: ">I"}


def parse_moved(text: str) -> tuple[TypeName, TypeName]:
    """`old.mod:Old=new.mod:New` as ((old module, old name), (new module, new name))."""
    old, sep, new = text.strip().partition("=")
    if not sep or not old.strip() or not new.strip():
        raise ValueError(
            f"not a moved type: {text!r} (write old.module:Old=new.module:New, "
            "e.g. shop.models:Order=shop.orders:Order)"
        )
    (old_type, new_type) = parse_allowed((old, new))
    return old_type, new_type


def moved_from(entries: Mapping[str, str] | Iterable[str] | None) -> dict[TypeName, TypeName]:
    """`{"old.mod:Old": "new.mod:New"}` or `["old.mod:Old=new.mod:New", ...]` as a mapping
    of type names; a malformed entry is a ValueError."""
    if not entries:
        return {}
    if isinstance(entries, Mapping):
        texts = [f"{old}={new}" for old, new in entries.items()]
    elif isinstance(entries, str):
        raise TypeError(f"moved types must be a mapping or a list of entries, not {entries!r}")
    else:
        texts = list(entries)
    return dict(parse_moved(text) for text in texts)


def rename_types(blob: bytes, moved: Mapping[TypeName, TypeName]) -> bytes:
    """The blob with every extension naming an old type naming the new one instead.

    No mapping or no match: the very same bytes object. Bytes that are not msgpack
    raise `UndecodableBytes`."""
    if not moved or not any(module.encode() in blob for module, _name in moved):
        return blob
    walker = _Walker(blob, moved)
    try:
        end, changed = walker.value(0)
    except (IndexError, struct.error, UnicodeDecodeError, RecursionError) as error:
        raise UndecodableBytes(f"not msgpack at the bytes renamed: {error}") from error
    if end != len(blob):
        raise UndecodableBytes(f"not msgpack: {len(blob) - end} extra bytes after the value")
    return blob if changed is None else changed


class _Walker:
    """One pass over one blob. Each step returns where the value ends and, only when
    something inside it was renamed, the value's new bytes (else None: copy as is)."""

    def __init__(self, blob: bytes, moved: Mapping[TypeName, TypeName]) -> None:
        self.blob = memoryview(blob)
        self.moved = moved

    def value(self, pos: int) -> tuple[int, bytes | None]:
        marker = self.blob[pos]
        if marker <= 0x7F or marker >= 0xE0:
            return pos + 1, None  # fixint
        if 0xA0 <= marker <= 0xBF:
            return pos + 1 + (marker & 0x1F), None  # fixstr
        if marker in _SCALAR_SIZES:
            return pos + 1 + _SCALAR_SIZES[marker], None
        if marker in _SIZED:
            width = _SIZED[marker]
            return pos + 1 + width + self._unsigned(pos + 1, width), None
        if 0x80 <= marker <= 0x8F:
            return self._items(pos, pos + 1, 2 * (marker & 0x0F))
        if 0x90 <= marker <= 0x9F:
            return self._items(pos, pos + 1, marker & 0x0F)
        if marker in (0xDC, 0xDD, 0xDE, 0xDF):
            width = 2 if marker in (0xDC, 0xDE) else 4
            count = self._unsigned(pos + 1, width) * (2 if marker >= 0xDE else 1)
            return self._items(pos, pos + 1 + width, count)
        if marker in _FIXED_SIZES:
            return self._ext(pos, self.blob[pos + 1], pos + 2, _FIXED_SIZES[marker])
        if marker in (0xC7, 0xC8, 0xC9):
            width = {0xC7: 1, 0xC8: 2, 0xC9: 4}[marker]
            size = self._unsigned(pos + 1, width)
            return self._ext(pos, self.blob[pos + 1 + width], pos + 2 + width, size)
        raise UndecodableBytes(f"not msgpack: marker 0x{marker:02x} at byte {pos}")

    def _unsigned(self, pos: int, width: int) -> int:
        if pos + width > len(self.blob):
            raise IndexError("length past the end")
        return int(struct.unpack_from(_UNSIGNED[width], self.blob, pos)[0])

    def _items(self, start: int, pos: int, count: int) -> tuple[int, bytes | None]:
        """An array or map: its header, then `count` values copied or renamed."""
        pieces: list[bytes | memoryview] = [self.blob[start:pos]]
        changed = False
        for _ in range(count):
            end, new = self.value(pos)
            pieces.append(self.blob[pos:end] if new is None else new)
            changed = changed or new is not None
            pos = end
        return pos, (b"".join(pieces) if changed else None)

    def _ext(self, start: int, code: int, data: int, size: int) -> tuple[int, bytes | None]:
        end = data + size
        if end > len(self.blob):
            raise IndexError("extension past the end")
        if code in NAMING_CODES:
            payload = self._naming_payload(data, end)
        elif code == SNAPSHOT:
            payload = self._whole(data, end)
        else:
            return end, None
        return end, None if payload is None else ext_bytes(code, payload)

    def _whole(self, start: int, end: int) -> bytes | None:
        """A payload holding one msgpack value (a delta snapshot's)."""
        stop, new = self.value(start)
        if stop != end:
            raise IndexError("extension payload is not one value")
        return new

    def _naming_payload(self, start: int, end: int) -> bytes | None:
        """[module, name, arguments, ...]: the names replaced when moved, the rest walked."""
        marker = self.blob[start]
        if not 0x92 <= marker <= 0x9F:  # not a short array of at least two items
            return self._whole(start, end)
        pieces: list[bytes | memoryview] = [self.blob[start : start + 1]]
        changed = False
        pos = start + 1
        for _ in range(marker & 0x0F):
            stop, new = self.value(pos)
            pieces.append(self.blob[pos:stop] if new is None else new)
            changed = changed or new is not None
            pos = stop
        if pos != end:
            raise IndexError("extension payload is not one value")
        new_type = self.moved.get((self._text(pieces[1]), self._text(pieces[2])))
        if new_type is not None:
            pieces[1:3] = [str_bytes(new_type[0]), str_bytes(new_type[1])]
        return b"".join(pieces) if changed or new_type is not None else None

    @staticmethod
    def _text(piece: bytes | memoryview) -> str:
        """The text of a msgpack str value; "" for any other value."""
        marker = piece[0]
        if 0xA0 <= marker <= 0xBF:
            begin = 1
        elif marker in (0xD9, 0xDA, 0xDB):
            begin = 1 + _SIZED[marker]
        else:
            return ""
        return bytes(piece[begin:]).decode()


def str_bytes(text: str) -> bytes:
    """A str in msgpack, with the shortest header (as msgpack writes it)."""
    data = text.encode()
    size = len(data)
    if size < 32:
        return bytes([0xA0 | size]) + data
    if size < 1 << 8:
        return bytes([0xD9, size]) + data
    if size < 1 << 16:
        return b"\xda" + struct.pack(">H", size) + data
    return b"\xdb" + struct.pack(">I", size) + data


def ext_bytes(code: int, payload: bytes) -> bytes:
    """An extension in msgpack, with the header msgpack chooses for its size."""
    size = len(payload)
    head = bytes([code])
    if size in _FIXEXT_MARKER:
        return bytes([_FIXEXT_MARKER[size]]) + head + payload
    if size < 1 << 8:
        return bytes([0xC7, size]) + head + payload
    if size < 1 << 16:
        return b"\xc8" + struct.pack(">H", size) + head + payload
    return b"\xc9" + struct.pack(">I", size) + head + payload

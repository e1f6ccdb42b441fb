"""Wire framing for Parlance's JSON-RPC 2.0 over a byte stream.

Parlance accepts two framings on the same connection, detected per message from the
first non-blank byte:

* **NDJSON**: one JSON text per line (``{`` or ``[`` starts a line, ``\\n`` ends it).
* **LSP**: ``Content-Length: N\\r\\n\\r\\n`` followed by exactly N bytes of UTF-8 JSON.

Replies use the framing of the message the daemon read most recently. :class:`FrameDecoder`
decodes both, so a client never has to know which one the daemon answered in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Optional

Framing = Literal["ndjson", "lsp"]
"""The two framings: ``"ndjson"`` or ``"lsp"``."""

_BLANK = b" \t\r\n"
_MAX_HEADER = 8 * 1024


def encode(message: Any, framing: Framing = "ndjson") -> bytes:
    """Serialize one JSON-RPC message (a dict or a list for a batch) as one frame.

    JSON is written compactly as UTF-8 (non-ASCII characters are not escaped); an NDJSON
    frame never contains a raw newline because JSON escapes newlines inside strings.
    """
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return frame(body, framing)


def frame(body: bytes, framing: Framing = "ndjson") -> bytes:
    """Wrap an already serialized body in a frame."""
    if framing == "ndjson":
        return body + b"\n"
    if framing == "lsp":
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    raise ValueError(f"unknown framing {framing!r}")


@dataclass
class Frame:
    """One decoded frame: the parsed JSON (or the parse error) and how it was framed."""

    framing: Framing
    body: bytes
    value: Any = None
    error: Optional[str] = None


class FrameDecoder:
    """Incremental decoder for a mixed NDJSON / LSP byte stream.

    Feed it arbitrary chunks with :meth:`push`; pull whole frames with :meth:`next`.
    A body that is not valid JSON still yields a :class:`Frame` with ``error`` set, so a
    caller can report it without losing sync.
    """

    def __init__(self) -> None:
        self._buf = bytearray()

    def push(self, data: bytes) -> None:
        """Append bytes read from the stream."""
        self._buf += data

    @property
    def pending(self) -> int:
        """Bytes buffered but not yet decoded into a frame."""
        return len(self._buf)

    def next(self) -> Optional[Frame]:
        """Return the next complete frame, or None when more bytes are needed."""
        buf = self._buf
        i = 0
        while i < len(buf) and buf[i] in _BLANK:
            i += 1
        if i:
            del buf[:i]
        if not buf:
            return None
        if buf[0] in b"{[":
            nl = buf.find(b"\n")
            if nl < 0:
                return None
            body = bytes(buf[:nl]).rstrip(b"\r")
            del buf[: nl + 1]
            return self._parse(body, "ndjson")
        # LSP header block, terminated by an empty line (\r\n\r\n, or a bare \n\n).
        end = buf.find(b"\r\n\r\n")
        sep = 4
        alt = buf.find(b"\n\n")
        if alt >= 0 and (end < 0 or alt < end):
            end, sep = alt, 2
        if end < 0:
            if len(buf) > _MAX_HEADER:
                raise ValueError("LSP header block too long without a blank line")
            return None
        header = bytes(buf[:end]).decode("ascii", "replace")
        length = None
        for line in header.splitlines():
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length is None:
            raise ValueError(f"LSP header without Content-Length: {header!r}")
        start = end + sep
        if len(buf) - start < length:
            return None
        body = bytes(buf[start : start + length])
        del buf[: start + length]
        return self._parse(body, "lsp")

    @staticmethod
    def _parse(body: bytes, framing: Framing) -> Frame:
        try:
            return Frame(framing, body, json.loads(body.decode("utf-8")))
        except (ValueError, UnicodeDecodeError) as e:
            return Frame(framing, body, None, str(e))

"""Shared fixtures: a client over a real pipe pair, and the test's end of those pipes.

The package is imported as installed (``pip install``) when it is; otherwise from the
directory above (a source checkout).
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import Any, Dict, Iterator, List, Optional

import pytest

try:
    import parlance_client  # noqa: F401
except ImportError:  # a checkout: the package is the directory next to tests/
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from parlance_client import FrameDecoder, ParlanceClient, encode  # noqa: E402
from parlance_client.framing import Frame, Framing  # noqa: E402

TIMEOUT = 30.0
"""Seconds any single wait in the unit tests may take before the test fails (they never
sleep: every wait ends on an event, this only bounds a bug)."""


class Peer:
    """The other end of a client's pipes: the test writes what a daemon would send and
    reads what the client wrote, frame by frame."""

    def __init__(self, write_fd: int, read_fd: int) -> None:
        self._w = os.fdopen(write_fd, "wb", buffering=0)
        self._r = read_fd
        self._decoder = FrameDecoder()
        self.frames: List[Frame] = []

    def send(self, message: Any, framing: Framing = "ndjson") -> None:
        self._w.write(encode(message, framing))

    def send_raw(self, data: bytes) -> None:
        self._w.write(data)

    def recv_frame(self, timeout: float = TIMEOUT) -> Frame:
        """The next frame the client wrote (AssertionError after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            f = self._decoder.next()
            if f is not None:
                self.frames.append(f)
                return f
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._r], [], [], max(0.0, left))
            if not ready:
                raise AssertionError(f"the client wrote nothing within {timeout} s")
            chunk = os.read(self._r, 65536)
            if not chunk:
                raise AssertionError("the client closed its output")
            self._decoder.push(chunk)

    def recv(self, timeout: float = TIMEOUT) -> Dict[str, Any]:
        """The next message the client wrote, parsed."""
        f = self.recv_frame(timeout)
        assert f.error is None, f.body
        assert isinstance(f.value, dict), f.value
        return f.value

    def call_tool(self, name: str, arguments: Any = None, id: Any = "parlance-1", call_id: str = "call-1",
                  session_id: str = "s1-test") -> None:
        """Send a ``tool/call`` request as the daemon does."""
        params: Dict[str, Any] = {"sessionId": session_id, "callId": call_id, "name": name}
        params["arguments"] = {} if arguments is None else arguments
        self.send({"jsonrpc": "2.0", "id": id, "method": "tool/call", "params": params})

    def close_output(self) -> None:
        if not self._w.closed:
            self._w.close()

    def close(self) -> None:
        self.close_output()
        try:
            os.close(self._r)
        except OSError:
            pass


class PipePair:
    """A :class:`ParlanceClient` over ``os.pipe()`` pairs, and the :class:`Peer` end."""

    def __init__(self, framing: Framing = "ndjson") -> None:
        to_client_r, to_client_w = os.pipe()
        from_client_r, from_client_w = os.pipe()
        self.client = ParlanceClient(
            streams=(os.fdopen(to_client_r, "rb"), os.fdopen(from_client_w, "wb")),
            framing=framing, default_timeout=TIMEOUT)
        self.peer = Peer(to_client_w, from_client_r)

    def close(self) -> None:
        self.peer.close_output()           # the client's reader sees end of input
        assert self.client.wait(TIMEOUT) == 0
        self.client.close_input()
        self.peer.close()


@pytest.fixture
def pipes() -> Iterator[PipePair]:
    p = PipePair()
    try:
        yield p
    finally:
        p.close()


def compact(message: Any) -> str:
    return json.dumps(message, sort_keys=True)


def daemon_binary() -> Optional[str]:
    """$PARLANCE_BIN, else `parlance` as the client finds it; None when there is none."""
    try:
        from parlance_client import find_binary
        b = find_binary()
    except FileNotFoundError:
        return None
    return b if os.access(b, os.X_OK) else None

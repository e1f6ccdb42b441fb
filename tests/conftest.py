"""Shared fixtures for the tests under tests/ (`python3 -m pytest tests -q`, run by
scripts/test-extra.sh against the real daemon and model).

- ``parlance_bin``: the daemon under test: $PARLANCE_BIN, else .build/release/parlance.
- ``daemon_env``: the environment daemons (and README commands) run with: a throwaway
  analysis cache and data dir (PARLANCE_CACHE_DIR, PARLANCE_DATA_DIR, fresh per test, so no
  answer comes from an earlier run's cache) and XDG_CONFIG_HOME (never the user's config).
- ``daemon``: starts ``parlance --stdio`` on pipes and returns a ``Daemon``; every daemon a
  test started is killed (by its own pid) at the end of the test if it is still running.

Tests wait on observable events only (a message, end of output, process exit); every
timeout only bounds a hung test. Daemons run one after another: the machine has 2 cores
and llama.cpp's threads spin.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Bounds for hung tests only (a generation of <= 64 tokens takes seconds; the first
# request of a daemon also loads the model).
GENERATION_TIMEOUT = 300.0
QUICK_TIMEOUT = 30.0


def binary_path() -> Path:
    return Path(os.environ.get("PARLANCE_BIN") or ROOT / ".build" / "release" / "parlance").resolve()


@pytest.fixture(scope="session")
def parlance_bin() -> Path:
    p = binary_path()
    if not (p.is_file() and os.access(p, os.X_OK)):
        pytest.fail(f"no daemon at {p} (run `make build`, or set PARLANCE_BIN)", pytrace=False)
    return p


@pytest.fixture
def daemon_env(tmp_path: Path) -> Dict[str, str]:
    env = dict(os.environ)
    env.update({
        "PARLANCE_CACHE_DIR": str(tmp_path / "cache"),
        "PARLANCE_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PARLANCE_LOG_LEVEL": "info",
    })
    env.pop("PARLANCE_LOG_FILE", None)  # logs go to the stderr file each test keeps
    return env


# -- JSON-RPC helpers ----------------------------------------------------------------------

def request(id: Any, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    m: Dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        m["params"] = params
    return m


def notification(method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    m: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return m


def encode(message: Dict[str, Any], framing: str) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    if framing == "ndjson":
        return body + b"\n"
    if framing == "lsp":
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    raise ValueError(framing)


def is_response(m: Dict[str, Any], id: Any = None) -> bool:
    return "method" not in m and ("result" in m or "error" in m) and (id is None or m.get("id") == id)


def is_delta(m: Dict[str, Any], token: Any) -> bool:
    p = m.get("params") or {}
    return m.get("method") == "$/progress" and p.get("token") == token and bool((p.get("value") or {}).get("delta"))


class Daemon:
    """``parlance --stdio`` on pipes, read from the test's thread (select with a deadline;
    no reader thread, so closing our end of stdout really closes the pipe's read end).
    Replies are decoded in either framing; ``framings`` records each message's."""

    def __init__(self, binary: Path, args: List[str], env: Dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen([str(binary), "--stdio", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._log, env=env, cwd=ROOT)
        self._buf = b""
        self.messages: List[Dict[str, Any]] = []
        self.framings: List[str] = []
        self.undecodable: List[bytes] = []
        self.eof = False

    # writing
    def send(self, *messages: Dict[str, Any], framing: str = "ndjson") -> None:
        """Writes all messages in one write (one pipe write: the daemon gets them together)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(encode(m, framing) for m in messages))
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()

    def close_stdout(self) -> None:
        """Closes the read end of the daemon's stdout: the client is gone."""
        if self.proc.stdout and not self.proc.stdout.closed:
            self.proc.stdout.close()

    # reading
    def _read_some(self, deadline: float) -> bool:
        """Reads what is available within the deadline; False on timeout."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return False
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            self.eof = True
        self._buf += chunk
        self._parse()
        return True

    def _parse(self) -> None:
        while True:
            b = self._buf.lstrip(b"\r\n \t")
            if not b:
                self._buf = b
                return
            if b[:1] in (b"{", b"["):  # NDJSON: one message per line
                nl = b.find(b"\n")
                if nl < 0:
                    self._buf = b
                    return
                body, rest, framing = b[:nl], b[nl + 1:], "ndjson"
            else:  # LSP: headers, a blank line, Content-Length bytes
                end = b.find(b"\r\n\r\n")
                if end < 0:
                    self._buf = b
                    return
                headers = dict(h.split(b":", 1) for h in b[:end].split(b"\r\n") if b":" in h)
                length = {k.strip().lower(): v for k, v in headers.items()}.get(b"content-length")
                if length is None:
                    self.undecodable.append(b[:end + 4])
                    self._buf = b[end + 4:]
                    continue
                n = int(length.strip())
                if len(b) < end + 4 + n:
                    self._buf = b
                    return
                body, rest, framing = b[end + 4:end + 4 + n], b[end + 4 + n:], "lsp"
            self._buf = rest
            try:
                m = json.loads(body)
            except ValueError:
                self.undecodable.append(body)
                continue
            for one in (m if isinstance(m, list) else [m]):
                self.messages.append(one)
                self.framings.append(framing)

    def wait_for(self, predicate: Callable[[Dict[str, Any]], bool], timeout: float, what: str) -> Dict[str, Any]:
        """The first message (already read or still to come) matching; fails on end of
        output or timeout."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for m in self.messages[seen:]:
                if predicate(m):
                    return m
            seen = len(self.messages)
            if self.eof:
                raise AssertionError(f"end of output before {what}\n{self.diagnostics()}")
            if not self._read_some(deadline):
                raise AssertionError(f"no {what} within {timeout:.0f} s\n{self.diagnostics()}")

    def response(self, id: Any, timeout: float = GENERATION_TIMEOUT) -> Dict[str, Any]:
        return self.wait_for(lambda m: is_response(m, id), timeout, f"answer to id {id!r}")

    def read_to_eof(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.eof:
            if not self._read_some(deadline):
                raise AssertionError(f"output still open after {timeout:.0f} s\n{self.diagnostics()}")

    def wait_exit(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"daemon still running after {timeout:.0f} s\n{self.diagnostics()}") from None

    # inspecting
    def responses(self, id: Any) -> List[Dict[str, Any]]:
        return [m for m in self.messages if is_response(m, id)]

    def index_of_response(self, id: Any) -> int:
        return next(i for i, m in enumerate(self.messages) if is_response(m, id))

    def deltas(self, token: Any) -> str:
        return "".join(m["params"]["value"]["delta"] for m in self.messages if is_delta(m, token))

    def diagnostics(self) -> str:
        try:
            log = self.log_path.read_text(errors="replace")
        except OSError:
            log = ""
        tail = "\n".join(log.splitlines()[-25:])
        msgs = "\n".join(json.dumps(m)[:300] for m in self.messages if not is_delta(m, (m.get("params") or {}).get("token")))
        return (f"exit code: {self.proc.poll()}\nmessages (deltas left out):\n{msgs}\n"
                f"undecodable: {self.undecodable[:3]}\nlog {self.log_path} (tail):\n{tail}")

    def stop(self) -> None:
        self.close_stdin()
        if self.proc.poll() is None:
            self.proc.kill()  # this test's own daemon, by its pid
            self.proc.wait(30)
        self.close_stdout()
        self._log.close()


@pytest.fixture
def daemon(parlance_bin: Path, daemon_env: Dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    """daemon(*extra_args) -> a running Daemon (not initialized)."""
    started: List[Daemon] = []

    def start(*args: str) -> Daemon:
        d = Daemon(parlance_bin, list(args), daemon_env, tmp_path / f"daemon-{len(started) + 1}.log")
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()

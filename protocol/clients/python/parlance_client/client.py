"""A small, dependency-free Parlance client: spawn ``parlance --stdio`` and talk JSON-RPC 2.0.

Example::

    from parlance_client import ParlanceClient

    with ParlanceClient() as client:               # spawns `parlance --stdio`
        client.initialize()
        r = client.request(
            "analysis/summarize", {"text": "Alice: we ship Friday. Bob: then QA starts today."},
            on_progress=lambda v: print(v.get("delta", ""), end="", flush=True))
        print(r["summary"])

Tools: register functions with :meth:`ParlanceClient.tool` and pass
:attr:`ParlanceClient.tools` to ``session/create``; the client answers the daemon's
``tool/call`` requests by running them::

    with ParlanceClient() as client:
        @client.tool
        def get_weather(city: str) -> str:
            '''The current weather in a city.'''
            return f"Sunny in {city}"

        client.initialize()                        # declares capabilities.tools
        sid = client.request("session/create", {"tools": client.tools})["sessionId"]
        r = client.request("session/respond", {"sessionId": sid, "prompt": "Weather in Paris?"})
        print(r["toolCalls"], r["text"])

Threading model: one background thread reads the daemon's stdout, decodes frames and
dispatches them; progress callbacks and notification handlers run on that thread (keep
them short; never call :meth:`ParlanceClient.request` from inside one). Each tool call
runs on a thread of its own, so a slow tool does not stop the reader. Every public
method may be called from any thread.
"""

from __future__ import annotations

import collections
import itertools
import os
import queue
import shutil
import subprocess
import threading
import time
from typing import (IO, Any, Callable, Deque, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypeVar,
                    Union, overload)

from .framing import Frame, FrameDecoder, Framing, encode
from .tools import Tool, ToolArgumentsError, ToolInvocation, _set_current, json_content, tool_from_function

JSON = Any
RequestId = Union[int, str]
ProgressCallback = Callable[[Dict[str, Any]], None]
NotificationHandler = Callable[[str, Any], None]
ToolCallHandler = Callable[[ToolInvocation], None]
F = TypeVar("F", bound=Callable[..., Any])

TOOL_CALL = "tool/call"
"""The request the daemon sends to run a tool."""
PROGRESS_CREATE = "window/workDoneProgress/create"
"""The request an LSP server sends before it reports progress on a token of its own."""

ERROR_NAMES: Dict[int, str] = {
    -32700: "parseError",
    -32600: "invalidRequest",
    -32601: "methodNotFound",
    -32602: "invalidParams",
    -32603: "internalError",
    -32002: "serverNotInitialized",
    -32800: "requestCancelled",
    -32801: "contentModified",
    -32803: "requestFailed",
    -32001: "modelUnavailable",
    -32010: "generationFailed",
    -32011: "remoteFailed",
    -32012: "mcpServerFailed",
    -32004: "notFound",
}
"""Every error code Parlance answers, by name (see protocol/README.md, "Errors")."""


class RPCError(Exception):
    """An error response: ``code``, ``message`` and the optional ``data`` object.

    ``name`` is the code's name (``"notFound"``…); ``kind`` is ``data["error"]`` when the
    daemon sent one (``"exceededContextWindowSize"``, ``"tooLarge"``…), the field a program
    should switch on.
    """

    def __init__(self, code: int, message: str, data: JSON = None, method: Optional[str] = None) -> None:
        super().__init__(f"{code} {ERROR_NAMES.get(code, '?')}: {message}" + (f" ({method})" if method else ""))
        self.code = code
        self.message = message
        self.data = data
        self.method = method

    @property
    def name(self) -> str:
        return ERROR_NAMES.get(self.code, str(self.code))

    @property
    def kind(self) -> Optional[str]:
        return self.data.get("error") if isinstance(self.data, dict) else None

    @classmethod
    def from_response(cls, response: Mapping[str, Any], method: Optional[str] = None) -> "RPCError":
        e = response.get("error") or {}
        return cls(int(e.get("code", 0)), str(e.get("message", "")), e.get("data"), method)


class ConnectionClosed(ConnectionError):
    """The daemon's output ended before the awaited response arrived."""


def find_binary(binary: Optional[str] = None) -> str:
    """The daemon to run: ``binary``, else ``$PARLANCE_BIN``, else ``parlance`` on PATH,
    else ``.build/release/parlance`` above the current directory."""
    if binary:
        return binary
    env = os.environ.get("PARLANCE_BIN")
    if env:
        return env
    found = shutil.which("parlance")
    if found:
        return found
    d = os.path.abspath(os.getcwd())
    while True:
        p = os.path.join(d, ".build", "release", "parlance")
        if os.access(p, os.X_OK):
            return p
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    raise FileNotFoundError("parlance not found: pass binary=, set PARLANCE_BIN or put parlance on PATH")


class PendingRequest:
    """A request in flight. Wait for it with :meth:`result`; cancel it with :meth:`cancel`.

    ``progress`` collects every ``$/progress`` value for the request's work-done token, in
    order; ``text`` is the concatenation of their ``delta`` fields (the streamed output)
    since the last ``restart`` (a new attempt after a result failed verification).
    """

    def __init__(self, client: "ParlanceClient", id: RequestId, method: str, params: JSON,
                 token: JSON, on_progress: Optional[ProgressCallback]) -> None:
        self.client = client
        self.id = id
        self.method = method
        self.params = params
        self.token = token
        self.on_progress = on_progress
        self.progress: List[Dict[str, Any]] = []
        self.response: Optional[Dict[str, Any]] = None
        self.framing: Optional[Framing] = None
        self._done = threading.Event()

    @property
    def text(self) -> str:
        """The streamed ``delta``s of the current attempt, joined (``part_text`` for one part)."""
        return self.part_text(None)

    def part_text(self, part: Optional[str]) -> str:
        """The deltas of ``part`` (None: every part) since its last ``restart``, joined."""
        out: List[str] = []
        for v in list(self.progress):
            if part is not None and v.get("part") != part:
                continue
            if v.get("restart") and (part is not None or v.get("part") is None):
                out = []
            out.append(v.get("delta") or "")
        return "".join(out)

    def done(self) -> bool:
        """True once the response has arrived (or the connection closed)."""
        return self._done.is_set()

    def wait(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The raw response object (``{"jsonrpc", "id", "result"|"error"}``).

        Raises :class:`TimeoutError` after ``timeout`` seconds (default: the client's) and
        :class:`ConnectionClosed` when the daemon exited without answering.
        """
        t = self.client.default_timeout if timeout is None else timeout
        if not self._done.wait(t):
            raise TimeoutError(f"no response to {self.method} (id {self.id!r}) within {t} s")
        if self.response is None:
            raise ConnectionClosed(f"the daemon closed its output before answering {self.method} (id {self.id!r})")
        return self.response

    def result(self, timeout: Optional[float] = None) -> JSON:
        """The result, or raise :class:`RPCError` for an error response."""
        r = self.wait(timeout)
        if "error" in r:
            raise RPCError.from_response(r, self.method)
        return r.get("result")

    def error(self, timeout: Optional[float] = None) -> Optional[RPCError]:
        """The error response as an :class:`RPCError`, or None when the request succeeded."""
        r = self.wait(timeout)
        return RPCError.from_response(r, self.method) if "error" in r else None

    def cancel(self) -> None:
        """Send ``$/cancelRequest`` for this request. It still answers: ``-32800`` with
        ``data.partial`` (the text generated so far), or its result if it already finished."""
        self.client.cancel(self.id)

    def _progress(self, value: Dict[str, Any]) -> None:
        self.progress.append(value)
        if self.on_progress is not None:
            self.on_progress(value)

    def _resolve(self, response: Optional[Dict[str, Any]], framing: Optional[Framing]) -> None:
        self.response = response
        self.framing = framing
        self._done.set()


class ParlanceClient:
    """Spawns ``parlance --stdio`` and speaks JSON-RPC 2.0 to it.

    :param binary: the daemon executable (default: :func:`find_binary`).
    :param args: extra command-line flags, e.g. ``["--model", path, "--ctx", "2048"]``.
    :param framing: how this client frames what it sends, ``"ndjson"`` (default) or ``"lsp"``.
    :param env: extra environment variables for the daemon (merged over ``os.environ``).
    :param stderr: where the daemon's log goes: a file object, ``subprocess.DEVNULL``, or
        None to inherit this process's stderr.
    :param default_timeout: seconds :meth:`request` waits for a response.
    :param tools: functions to register as tools (as :meth:`tool` does).
    :param streams: ``(reader, writer)``: talk over these byte streams instead of spawning
        the daemon — a pipe pair, a socket's ``makefile("rb")`` / ``makefile("wb")``, a
        process started elsewhere. ``binary``, ``args``, ``env``, ``stderr`` and ``cwd`` are
        then unused and :attr:`process` is None.
    """

    def __init__(self, binary: Optional[str] = None, args: Sequence[str] = (), *, framing: Framing = "ndjson",
                 env: Optional[Mapping[str, str]] = None, stderr: Union[None, int, IO[Any]] = None,
                 cwd: Optional[str] = None, default_timeout: float = 300.0,
                 tools: Iterable[Callable[..., Any]] = (),
                 streams: Optional[Tuple[IO[bytes], IO[bytes]]] = None) -> None:
        if framing not in ("ndjson", "lsp"):
            raise ValueError(f"framing must be 'ndjson' or 'lsp', got {framing!r}")
        self.framing: Framing = framing
        self.default_timeout = default_timeout
        #: The daemon's process (None with ``streams``).
        self.process: Optional["subprocess.Popen[bytes]"] = None
        self.binary: Optional[str] = None
        if streams is None:
            self.binary = find_binary(binary)
            full_env = dict(os.environ)
            full_env.update(env or {})
            self.process = subprocess.Popen(
                [self.binary, "--stdio", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=stderr, env=full_env, cwd=cwd, bufsize=0)
            assert self.process.stdin is not None and self.process.stdout is not None
            self._rfile: IO[bytes] = self.process.stdout
            self._wfile: IO[bytes] = self.process.stdin
        else:
            self._rfile, self._wfile = streams
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()  # guards _pending, _tokens
        self._ids = itertools.count(1)
        self._pending: Dict[RequestId, PendingRequest] = {}
        self._tokens: Dict[Any, PendingRequest] = {}
        self._handlers: List[NotificationHandler] = []
        self._unmatched: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self._batches: "queue.Queue[List[Any]]" = queue.Queue()
        self._server_requests: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self._closed = threading.Event()
        #: Every notification received, as (method, params), most recent last.
        self.notifications: Deque[Tuple[str, Any]] = collections.deque(maxlen=10000)
        #: The framing of every message received, in order.
        self.received_framings: Deque[Framing] = collections.deque(maxlen=10000)
        #: How many error responses of each code this client has received.
        self.error_codes: "collections.Counter[int]" = collections.Counter()
        #: Frames whose body was not valid JSON (should never happen).
        self.undecodable: List[Frame] = []
        #: Set by :meth:`initialize`.
        self.server_info: Optional[Dict[str, Any]] = None
        self.capabilities: Optional[Dict[str, Any]] = None
        self.model: Optional[Dict[str, Any]] = None
        self._tools: Dict[str, Tool] = {}
        self._tool_lock = threading.Lock()  # guards _tools, _tool_calls
        self._tool_calls: Dict[Any, ToolInvocation] = {}  # running, by request id
        # Set by initialize() when it declares window.workDoneProgress: the client then
        # answers window/workDoneProgress/create itself, as that capability promises.
        self._answers_progress_create = False
        self._tool_handlers: List[ToolCallHandler] = []
        #: Every ``tool/call`` this client answered (or is running), oldest first.
        self.tool_invocations: Deque[ToolInvocation] = collections.deque(maxlen=10000)
        for t in tools:
            self.tool(t)
        self._reader = threading.Thread(target=self._read_loop, name="parlance-reader", daemon=True)
        self._reader.start()

    # -- lifecycle -------------------------------------------------------------------

    def initialize(self, client_name: str = "parlance-python", client_version: Optional[str] = None,
                   send_initialized: bool = True, *, tools: Optional[bool] = None, **params: Any) -> Dict[str, Any]:
        """Send ``initialize`` (then the ``initialized`` notification) and return the result.

        The result holds ``serverInfo``, ``capabilities`` (``methods``: every method this
        daemon answers) and ``model`` (availability, as ``model/status`` reports it).

        ``capabilities.tools`` is declared (true) when ``tools`` is True, or when it is None
        and a tool is registered: the daemon accepts ``tools`` on ``session/create`` only
        then. A ``capabilities`` dict in ``params`` is merged over the defaults.

        ``window.workDoneProgress`` is declared (the default) as LSP means it: the client
        then answers the daemon's ``window/workDoneProgress/create`` requests itself (the
        daemon waits for that answer before it reports progress on the token, for example
        while it resolves a code action). A client initialized by a raw ``request`` gets
        those requests from :meth:`next_server_request` instead.
        """
        info: Dict[str, Any] = {"name": client_name}
        if client_version:
            info["version"] = client_version
        caps: Dict[str, Any] = {"window": {"workDoneProgress": True}}
        with self._tool_lock:
            declare = bool(self._tools) if tools is None else tools
        if declare:
            caps["tools"] = True
        p: Dict[str, Any] = {"processId": os.getpid(), "clientInfo": info}
        extra_caps = params.pop("capabilities", None)
        if isinstance(extra_caps, Mapping):
            caps.update(extra_caps)
            p["capabilities"] = caps
        elif extra_caps is not None:
            p["capabilities"] = extra_caps  # sent as given (e.g. to test the daemon's validation)
        else:
            p["capabilities"] = caps
        p.update(params)
        declared = p.get("capabilities")
        window = declared.get("window") if isinstance(declared, Mapping) else None
        self._answers_progress_create = isinstance(window, Mapping) and window.get("workDoneProgress") is True
        result: Dict[str, Any] = self.request("initialize", p)
        self.server_info = result.get("serverInfo")
        self.capabilities = result.get("capabilities")
        self.model = result.get("model")
        if send_initialized:
            self.notify("initialized", {})
        return result

    @property
    def methods(self) -> List[str]:
        """The methods announced in ``initialize``'s capabilities (empty before it)."""
        return list((self.capabilities or {}).get("methods", []))

    def shutdown(self, timeout: Optional[float] = None) -> None:
        """Send ``shutdown``: work in flight is cancelled; only ``exit`` is accepted after."""
        self.request("shutdown", timeout=timeout)

    def exit(self) -> None:
        """Send the ``exit`` notification (exit code 0 after ``shutdown``, 1 without)."""
        self.notify("exit")

    def close_input(self) -> None:
        """Close the daemon's stdin; it cancels outstanding work and exits with code 0."""
        with self._write_lock:
            try:
                if not self._wfile.closed:
                    self._wfile.close()
            except OSError:
                pass

    def wait(self, timeout: Optional[float] = None) -> int:
        """Wait for the daemon to exit and return its exit code. With ``streams``: wait for
        the other side to close its output, then return 0 (raises
        :class:`subprocess.TimeoutExpired` after ``timeout``)."""
        if self.process is None:
            self._reader.join(timeout)
            if self._reader.is_alive():
                raise subprocess.TimeoutExpired("parlance (streams)", timeout or 0.0)
            return 0
        code = self.process.wait(timeout)
        self._reader.join(5)
        return code

    def close(self, timeout: float = 10.0) -> int:
        """Stop the daemon: ``shutdown`` + ``exit`` when it is still serving, then close
        stdin; kill it if it has not exited within ``timeout``. Returns the exit code
        (with ``streams``: 0, or -1 when the other side kept its output open)."""
        if self.running and not self._closed.is_set():
            try:
                self.shutdown(timeout=timeout)
                self.exit()
            except (RPCError, OSError, TimeoutError, ConnectionError):
                pass
        self.close_input()
        try:
            return self.wait(timeout)
        except subprocess.TimeoutExpired:
            if self.process is None:
                return -1
            self.process.kill()
            return self.wait(timeout)

    def __enter__(self) -> "ParlanceClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def running(self) -> bool:
        """True while the daemon process is alive (with ``streams``: until its output ends)."""
        if self.process is None:
            return not self._closed.is_set()
        return self.process.poll() is None

    # -- messages --------------------------------------------------------------------

    def next_id(self) -> int:
        """A fresh integer request id."""
        return next(self._ids)

    def start(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
              on_progress: Optional[ProgressCallback] = None, progress: bool = False,
              id: Optional[RequestId] = None, framing: Optional[Framing] = None) -> PendingRequest:
        """Send a request and return at once with a :class:`PendingRequest`.

        With ``on_progress`` (or ``progress=True``) the request gets a work-done token
        (``params["workDoneToken"]``, unless the params already carry one), and every
        ``$/progress`` for it is recorded in ``PendingRequest.progress`` and passed to
        ``on_progress`` — ``begin``, then ``report`` values (``phase``, ``delta``,
        ``partial``, ``percentage``…), then ``end``.
        """
        rid: RequestId = self.next_id() if id is None else id
        p: Optional[Dict[str, Any]] = dict(params) if params is not None else None
        token = p.get("workDoneToken") if p else None
        if token is None and (on_progress is not None or progress):
            token = f"py-{rid}"
            p = dict(p or {})
            p["workDoneToken"] = token
        pending = PendingRequest(self, rid, method, p, token, on_progress)
        with self._lock:
            self._pending[rid] = pending
            if token is not None:
                self._tokens[_key(token)] = pending
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if p is not None:
            msg["params"] = p
        try:
            self.send(msg, framing=framing)
        except OSError:
            with self._lock:
                self._pending.pop(rid, None)
            raise
        return pending

    def request(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
                on_progress: Optional[ProgressCallback] = None, timeout: Optional[float] = None,
                framing: Optional[Framing] = None) -> JSON:
        """Send a request and wait for its result; raise :class:`RPCError` on an error response."""
        return self.start(method, params, on_progress=on_progress, framing=framing).result(timeout)

    def notify(self, method: str, params: Optional[Mapping[str, Any]] = None, *, framing: Optional[Framing] = None) -> None:
        """Send a notification (no response)."""
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = dict(params)
        self.send(msg, framing=framing)

    def cancel(self, id: Union[RequestId, PendingRequest]) -> None:
        """Send ``$/cancelRequest`` for a request id (or a :class:`PendingRequest`)."""
        rid = id.id if isinstance(id, PendingRequest) else id
        self.notify("$/cancelRequest", {"id": rid})

    def batch(self, messages: Iterable[Any], timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Send a JSON-RPC batch (a JSON array) and wait for the array of responses.

        Responses to a batch arrive together as one array (none at all when the batch
        held only notifications: then this returns ``[]`` without waiting). Elements that
        are not valid messages are answered too (``-32600``)."""
        msgs = list(messages)
        self.send(msgs)
        if all(isinstance(m, dict) and "method" in m and "id" not in m for m in msgs):
            return []
        t = self.default_timeout if timeout is None else timeout
        try:
            return self._batches.get(timeout=t)
        except queue.Empty:
            raise TimeoutError(f"no batch response within {t} s") from None

    def send(self, message: Any, *, framing: Optional[Framing] = None) -> None:
        """Send one message (a dict, or a list for a batch) in this client's framing."""
        self.send_raw(encode(message, framing or self.framing))

    def send_raw(self, data: bytes) -> None:
        """Write raw bytes to the daemon's stdin (for testing framing and parse errors)."""
        with self._write_lock:
            out = self._wfile
            if out.closed:
                raise BrokenPipeError("the daemon's stdin is closed")
            view = memoryview(data)
            while view:
                n = out.write(view)  # a raw (unbuffered) stream may write less
                view = view[len(view) if n is None else n:]
            out.flush()

    def next_unmatched(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The next response whose id is null or unknown (e.g. ``-32700`` parse errors)."""
        t = self.default_timeout if timeout is None else timeout
        try:
            return self._unmatched.get(timeout=t)
        except queue.Empty:
            raise TimeoutError(f"no unmatched response within {t} s") from None

    def next_server_request(self, method: Optional[str] = None, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The next request the daemon sent us (LSP's ``workspace/applyEdit``,
        ``window/workDoneProgress/create``, ``tool/call``), whole: answer it with
        :meth:`respond`. Requests of other methods than ``method`` are skipped (left
        unanswered). A ``tool/call`` the client answers itself (see :meth:`tool`) is not
        queued here."""
        t = self.default_timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        while True:
            try:
                m = self._server_requests.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no request {method or ''} from the daemon within {t} s") from None
            if method is None or m.get("method") == method:
                return m

    def respond(self, id: RequestId, result: JSON = None, error: Optional[Mapping[str, Any]] = None) -> None:
        """Answers a request the daemon sent (its ``id``): ``result``, or ``error`` {code, message}.
        A ``tool/call`` is answered with ``result={"content": …}``."""
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": id}
        if error is not None:
            msg["error"] = dict(error)
        else:
            msg["result"] = result
        self.send(msg)

    def on_notification(self, handler: NotificationHandler) -> Callable[[], None]:
        """Call ``handler(method, params)`` for every notification (progress included).
        Returns a function that removes the handler."""
        self._handlers.append(handler)
        return lambda: self._handlers.remove(handler) if handler in self._handlers else None

    # -- tools -----------------------------------------------------------------------

    @overload
    def tool(self, func: F, /, *, name: Optional[str] = None, description: Optional[str] = None,
             parameters: Optional[Mapping[str, Any]] = None) -> F: ...

    @overload
    def tool(self, func: None = None, /, *, name: Optional[str] = None, description: Optional[str] = None,
             parameters: Optional[Mapping[str, Any]] = None) -> Callable[[F], F]: ...

    def tool(self, func: Optional[F] = None, /, *, name: Optional[str] = None, description: Optional[str] = None,
             parameters: Optional[Mapping[str, Any]] = None) -> Union[F, Callable[[F], F]]:
        """Register ``func`` as a tool the model may call; returns ``func`` unchanged, so it
        works as a decorator, bare (``@client.tool``) or with options
        (``@client.tool(name="weather", description="…")``), and as a plain call
        (``client.tool(func, name="weather")``).

        ``name`` defaults to the function's name, ``description`` to its docstring's first
        paragraph, ``parameters`` to a JSON Schema derived from its signature and type hints
        (:func:`parlance_client.tools.function_schema`, which raises :class:`TypeError` for a
        parameter without a hint or with one it cannot express); an explicit ``parameters``
        schema is used as given. Registering a name twice raises :class:`ValueError`.

        When the daemon sends ``tool/call`` for it, the client runs ``func(**arguments)`` on
        a thread of its own and answers ``{"content": value}`` (the return value as is when
        JSON-serialisable, else ``str(value)``), or error ``-32000`` with the exception's
        message and ``data.type`` (its class name) when it raises.
        """
        def register(f: F) -> F:
            self.add_tool(tool_from_function(f, name=name, description=description, parameters=parameters))
            return f

        if func is not None:
            return register(func)
        return register

    def add_tool(self, tool: Tool) -> Tool:
        """Register a :class:`parlance_client.tools.Tool` (one with ``function=None`` is
        answered by hand: see :meth:`declare_tool`). Returns it."""
        with self._tool_lock:
            if tool.name in self._tools:
                raise ValueError(f"a tool named {tool.name!r} is already registered (remove_tool() it first)")
            self._tools[tool.name] = tool
        return tool

    def declare_tool(self, name: str, *, description: Optional[str] = None,
                     parameters: Optional[Mapping[str, Any]] = None) -> Tool:
        """Register a tool without a function: it is in :attr:`tools`, and its ``tool/call``
        requests go to :meth:`next_server_request` for the program to answer with
        :meth:`respond`."""
        return self.add_tool(Tool(name, None, description, parameters))

    def remove_tool(self, name: str) -> None:
        """Unregister a tool (KeyError if there is none of that name)."""
        with self._tool_lock:
            del self._tools[name]

    @property
    def tools(self) -> List[Dict[str, Any]]:
        """The registered tools' definitions, ``[{name, description, parameters}]``: the
        ``tools`` of ``session/create``."""
        return self.tool_definitions()

    def tool_definitions(self, *names: str) -> List[Dict[str, Any]]:
        """The definitions of the named tools (all when no name is given), in registration
        order; KeyError for a name that is not registered."""
        with self._tool_lock:
            chosen = [self._tools[n] for n in names] if names else list(self._tools.values())
        return [t.definition() for t in chosen]

    @property
    def registered_tools(self) -> Dict[str, Tool]:
        """The registered tools by name (a copy)."""
        with self._tool_lock:
            return dict(self._tools)

    def on_tool_call(self, handler: ToolCallHandler) -> Callable[[], None]:
        """Call ``handler(invocation)`` when a tool call starts (``state == "running"``) and
        when it ends (``"finished"``/``"failed"``), on the call's thread. Returns a function
        that removes the handler."""
        self._tool_handlers.append(handler)
        return lambda: self._tool_handlers.remove(handler) if handler in self._tool_handlers else None

    def _take_tool_call(self, msg: Dict[str, Any]) -> bool:
        """Answer a ``tool/call`` request (True), or leave it to :meth:`next_server_request`
        (False): when no tool with a function is registered, or the tool is declared
        without one."""
        params = msg.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        with self._tool_lock:
            tool = self._tools.get(name) if isinstance(name, str) else None
            auto = any(t.function is not None for t in self._tools.values())
            if not auto or (tool is not None and tool.function is None):
                return False
            names = sorted(self._tools)
            inv = ToolInvocation(msg.get("id"), params if isinstance(params, dict) else {})
            self._tool_calls[_key(inv.request_id)] = inv
        self.tool_invocations.append(inv)
        if tool is None:
            what = f"unknown tool {name!r}" if isinstance(name, str) else "tool/call without a tool name"
            self._finish_tool_call(inv, error={
                "code": -32601, "message": f"{what}; this client's tools: {', '.join(names)}",
                "data": {"name": name, "tools": names}})
            return True
        if not isinstance(params, dict) or not isinstance(params.get("arguments", {}), dict):
            self._finish_tool_call(inv, error={"code": -32602, "message": f"arguments of {name} must be a JSON object"})
            return True
        threading.Thread(target=self._run_tool, args=(tool, inv), name=f"parlance-tool-{name}", daemon=True).start()
        return True

    def _run_tool(self, tool: Tool, inv: ToolInvocation) -> None:
        _set_current(inv)
        try:
            self._emit_tool_call(inv)
            try:
                value = tool.invoke(inv.arguments)
            except ToolArgumentsError as e:
                self._finish_tool_call(inv, error={"code": -32602, "message": str(e)})
            except BaseException as e:  # noqa: B036 - every failure is answered
                self._finish_tool_call(inv, error={
                    "code": -32000, "message": str(e) or type(e).__name__, "data": {"type": type(e).__name__}})
            else:
                self._finish_tool_call(inv, output=json_content(value))
        finally:
            _set_current(None)

    def _finish_tool_call(self, inv: ToolInvocation, output: Any = None,
                          error: Optional[Dict[str, Any]] = None) -> None:
        with self._tool_lock:
            self._tool_calls.pop(_key(inv.request_id), None)
        inv._finish(output, error)
        if not inv.cancelled:
            try:
                if error is not None:
                    self.respond(inv.request_id, error=error)
                else:
                    self.respond(inv.request_id, {"content": inv.output})
                inv.answered = True
            except (OSError, ValueError):  # the daemon is gone (or its stdin closed)
                pass
        inv._done.set()
        self._emit_tool_call(inv)

    def _emit_tool_call(self, inv: ToolInvocation) -> None:
        for h in list(self._tool_handlers):
            try:
                h(inv)
            except Exception:  # a handler's bug must not stop the answer
                pass

    def _cancel_tool_call(self, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("id"), (int, str)):
            return
        with self._tool_lock:
            inv = self._tool_calls.get(_key(params["id"]))
        if inv is not None:
            inv._cancelled.set()

    # -- reader ----------------------------------------------------------------------

    def _read_loop(self) -> None:
        decoder = FrameDecoder()
        read: Callable[[], bytes]
        if self.process is not None:
            fd = self._rfile.fileno()
            read = lambda: os.read(fd, 65536)  # noqa: E731
        else:
            r = self._rfile
            read1 = getattr(r, "read1", None)
            read = (lambda: read1(65536)) if read1 is not None else (lambda: r.read(65536))  # noqa: E731
        try:
            while True:
                try:
                    chunk = read()
                except (OSError, ValueError):  # ValueError: read from a closed file
                    break
                if not chunk:
                    break
                decoder.push(chunk)
                while True:
                    f = decoder.next()
                    if f is None:
                        break
                    self._dispatch(f)
        finally:
            self._closed.set()
            with self._lock:
                pending = list(self._pending.values())
                self._pending.clear()
                self._tokens.clear()
            for p in pending:
                p._resolve(None, None)

    def _dispatch(self, f: Frame) -> None:
        self.received_framings.append(f.framing)
        if f.error is not None:
            self.undecodable.append(f)
            return
        v = f.value
        if isinstance(v, list):
            for r in v:
                if isinstance(r, dict) and isinstance(r.get("error"), dict):
                    self.error_codes[r["error"].get("code")] += 1
            self._batches.put(v)
            return
        if not isinstance(v, dict):
            self.undecodable.append(f)
            return
        if "method" in v:
            method, params = v["method"], v.get("params")
            if "id" in v:
                if method == PROGRESS_CREATE and self._answers_progress_create:
                    # Declared by initialize(): accept the token (its $/progress reaches
                    # on_notification and the request's progress like any other).
                    self.respond(v["id"], None)
                elif method != TOOL_CALL or not self._take_tool_call(v):
                    self._server_requests.put(v)
            elif method == "$/cancelRequest":
                self._cancel_tool_call(params)
            self.notifications.append((method, params))
            if method == "$/progress" and isinstance(params, dict):
                with self._lock:
                    target = self._tokens.get(_key(params.get("token")))
                if target is not None and isinstance(params.get("value"), dict):
                    target._progress(params["value"])
            for h in list(self._handlers):
                h(method, params)
            return
        if isinstance(v.get("error"), dict):
            self.error_codes[v["error"].get("code")] += 1
        rid = v.get("id")
        with self._lock:
            pending = self._pending.pop(rid, None) if isinstance(rid, (int, str)) else None
            if pending is not None and pending.token is not None:
                self._tokens.pop(_key(pending.token), None)
        if pending is None:
            self._unmatched.put(v)
        else:
            pending._resolve(v, f.framing)


def _key(token: Any) -> Any:
    # 1 and "1" are different tokens; True is not an int token.
    return (type(token).__name__, token)

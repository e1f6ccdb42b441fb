"""Every documented error code, provoked and checked (code, message, data shape).

Two tables:

* ``PROVOKERS``: one function per code in the spec's ``components.errors``; each
  provokes the code (often several of its cases) on real daemons and checks it.
* per method, every error code the method's spec entry lists (``errors``), provoked on
  that method (``test_method_error``), plus -32602 for every method.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional

import pytest

import support
from cases import CASES, LSP_TEXT, CaseContext, lsp_range
from parlance_client import ParlanceClient, RPCError
from support import check_error, error_of, expect_error

Spawn = Callable[..., ParlanceClient]
MISSING = "conformance-missing-0000"
ID_FIELDS = ("sessionId", "uri", "variationId", "id")


@pytest.fixture(scope="module")
def nomodel(spawn: Spawn) -> ParlanceClient:
    """A daemon whose model file does not exist."""
    return spawn("--model", os.path.join(tempfile.gettempdir(), "parlance-conformance-no-such-model.gguf"))


# A remote model whose server refuses connections (nothing listens on port 1).
REMOTE_DOWN = ("--model", "down=openai:http://127.0.0.1:1/v1")


@pytest.fixture(scope="module")
def remotedown(spawn: Spawn) -> ParlanceClient:
    """A daemon whose default model is a remote server that refuses connections."""
    return spawn(*REMOTE_DOWN)


# An MCP server whose command does not exist.
MCP_MISSING = ("--mcp-server", "missing=parlance-conformance-no-such-mcp-server --stdio")


def provoke_mcp_server_failed(d: ParlanceClient, spec: Dict[str, Any]) -> None:
    e = expect_error(d, "session/create", {"mcpServers": ["missing"]})
    check_error(spec, e, -32012, "mcpServerFailed")
    assert e.data["reason"] == "notFound" and e.data["server"] == "missing", e.data
    assert "parlance-conformance-no-such-mcp-server" in e.message, e.message
    listed = d.request("mcp/list")["servers"]
    assert listed[0]["name"] == "missing" and listed[0]["state"] == "failed" and listed[0]["reason"] == "notFound", listed


# == One provoker per documented code =================================================

PROVOKERS: Dict[int, Callable[[ParlanceClient, Spawn, Dict[str, Any]], None]] = {}


def provokes(code: int) -> Callable[[Callable[[ParlanceClient, Spawn, Dict[str, Any]], None]], Callable[[ParlanceClient, Spawn, Dict[str, Any]], None]]:
    def register(fn: Callable[[ParlanceClient, Spawn, Dict[str, Any]], None]) -> Callable[[ParlanceClient, Spawn, Dict[str, Any]], None]:
        PROVOKERS[code] = fn
        return fn
    return register


def alive(c: ParlanceClient) -> None:
    assert c.request("model/status")["availability"] in ("available", "unavailable")


@provokes(-32700)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    # Not JSON, in either framing; then a broken LSP header. The id is null; the daemon stays up.
    for raw in (b"{not json}\n", b"Content-Length: 9\r\n\r\n{not json", b"[1, 2\n"):
        c.send_raw(raw)
        r = c.next_unmatched(30)
        assert r["id"] is None and r["error"]["code"] == -32700, r
    c.send_raw(b"Content-Type: application/json\r\n\r\n")
    r = c.next_unmatched(30)
    assert r["id"] is None and r["error"]["code"] == -32700 and r["error"]["data"]["error"] == "missingContentLength", r
    c.send_raw(b"Content-Length: lots\r\n\r\n")
    r = c.next_unmatched(30)
    assert r["error"]["code"] == -32700 and r["error"]["data"]["error"] == "invalidContentLength", r
    alive(c)


@provokes(-32600)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    # Not a request: no "jsonrpc", wrong version, non-string method, bad params, bad id.
    # The client did not start these requests, so their answers arrive as unmatched responses.
    for bad in ({"id": 9001, "method": "model/status"}, {"jsonrpc": "1.0", "id": 9002, "method": "model/status"},
                {"jsonrpc": "2.0", "id": 9003, "method": 5}, {"jsonrpc": "2.0", "id": 9004, "method": "model/status", "params": 3}):
        c.send(bad)
        r = c.next_unmatched(30)
        assert r["id"] == bad["id"] and r["error"]["code"] == -32600, r
    # Bad ids, and JSON texts that are not objects. (A line must start with { or [ to be
    # NDJSON, so scalars can only arrive LSP-framed.)
    for bad_id, framing in (({"jsonrpc": "2.0", "id": None, "method": "model/status"}, "ndjson"),
                            ({"jsonrpc": "2.0", "id": [1], "method": "model/status"}, "ndjson"),
                            (5, "lsp"), ("text", "lsp")):
        c.send(bad_id, framing=framing)  # type: ignore[arg-type]
        r = c.next_unmatched(30)
        assert r["id"] is None and r["error"]["code"] == -32600, r
    # A batch element that is not a message; an empty batch.
    rs = c.batch([1, {"jsonrpc": "2.0", "id": 9005}])
    assert len(rs) == 2 and all(r["error"]["code"] == -32600 for r in rs), rs
    assert sorted(str(r["id"]) for r in rs) == ["9005", "None"], rs
    c.send([])
    r = c.next_unmatched(30)
    assert r["id"] is None and r["error"]["code"] == -32600, r
    # A second initialize.
    e = expect_error(c, "initialize", {})
    check_error(spec, e, -32600)
    assert e.data["method"] == "initialize"
    # A message over --max-message-bytes, in both framings: data.error is "tooLarge".
    small = spawn("--max-message-bytes", "4096")
    assert small.capabilities["maxMessageBytes"] == 4096  # type: ignore[index]
    for framing in ("ndjson", "lsp"):
        small.start("analysis/summarize", {"text": "word " * 2000}, framing=framing)  # type: ignore[arg-type]
        r = small.next_unmatched(30)
        assert r["id"] is None and r["error"]["code"] == -32600, r
        assert r["error"]["data"]["error"] == "tooLarge" and r["error"]["data"]["maxMessageBytes"] == 4096, r
        assert "4096" in r["error"]["message"]
    alive(small)
    # After shutdown, every request but exit.
    s = spawn()
    s.shutdown()
    e = expect_error(s, "model/status", None)
    check_error(spec, e, -32600)
    s.exit()
    assert s.wait(30) == 0
    alive(c)


@provokes(-32601)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    for name in ("no/such", "document/opens", "rpc.nothing"):
        e = expect_error(c, name, {})
        check_error(spec, e, -32601)
        assert e.data["method"] == name


@provokes(-32602)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    cases = [
        ({"text": "hello there", "bogus": 1}, "additionalProperties", None),
        ({"text": 5}, "type", "text"),
        ({"text": "hello there", "temperature": 9}, "maximum", "temperature"),
        ({"text": "hello there", "maxTokens": 1}, "minimum", "maxTokens"),
        ({}, "required", None),
        ({"text": "a", "uri": "file:///x"}, "oneOf", None),
    ]
    for params, keyword, path in cases:
        e = expect_error(c, "analysis/summarize", params)
        check_error(spec, e, -32602)
        assert e.data["keyword"] == keyword, (params, e.data)
        assert "path" in e.data
        if path:
            assert e.data["path"] == path, (params, e.data)
    # By-position params are refused; a non-empty array names the problem.
    c.send({"jsonrpc": "2.0", "id": "pos", "method": "analysis/summarize", "params": ["hello"]})
    r = c.next_unmatched(30)
    assert r["error"]["code"] == -32602 and r["error"]["data"]["keyword"] == "type", r
    # A response schema the grammar cannot express is refused before any work.
    sid = c.request("session/create", {})["sessionId"]
    e = expect_error(c, "session/respond", {"sessionId": sid, "prompt": "x", "schema": {"type": "object", "patternProperties": {"a": {}}}})
    check_error(spec, e, -32602)


@provokes(-32603)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    pytest.skip("internal error is a bug by definition and cannot be provoked; instead every daemon the suite "
                "starts is checked, at the end of its module, never to have answered -32603 (conftest.py)")


@provokes(-32002)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    fresh = spawn(initialize=False)
    for m in ("model/status", "session/create", "rpc.discover", "shutdown"):
        e = expect_error(fresh, m, None)
        check_error(spec, e, -32002)
        assert e.data["method"] == m
    fresh.initialize()
    alive(fresh)


@provokes(-32800)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    sid = c.request("session/create", {})["sessionId"]
    p = c.start("session/respond", {"sessionId": sid, "prompt": "Write a long story about a lighthouse keeper.",
                                    "options": {"maxTokens": 400}}, progress=True)
    wait_for(lambda: any(v.get("delta") for v in p.progress), f"a streamed delta from {p.method}")
    p.cancel()
    e = error_of(p)
    check_error(spec, e, -32800)
    assert isinstance(e.data["partial"], str) and e.data["partial"], e.data
    assert e.data["partial"] == p.text, "data.partial is the text streamed so far"


@provokes(-32011)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    # A remote model's server that refuses connections: model/status says why, a request
    # gets remoteFailed naming the fault, the model and the endpoint; the daemon stays up.
    d = spawn(*REMOTE_DOWN)
    st = d.request("model/status")
    assert st["availability"] == "unavailable" and st["reason"] == "remoteUnavailable" and st["message"], st
    assert st["remote"]["endpoint"] == "127.0.0.1:1" and st["remote"]["apiKey"] is False, st
    e = expect_error(d, "analysis/summarize", {"text": support.SAMPLE_TEXT})
    check_error(spec, e, -32011, "remoteUnavailable")
    assert e.data["model"] == "down" and e.data["endpoint"] == "127.0.0.1:1" and e.data["attempts"] >= 1, e.data
    alive(d)
    d.close()


@provokes(-32012)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    # A session naming an MCP server that cannot start: mcpServerFailed with the reason; the daemon stays up.
    d = spawn(*MCP_MISSING)
    provoke_mcp_server_failed(d, spec)
    alive(d)
    d.close()


@provokes(-32001)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    tmp = tempfile.mkdtemp(prefix="parlance-conformance-models-")
    garbage = os.path.join(tmp, "garbage.gguf")
    with open(garbage, "wb") as f:
        f.write(b"NOPE, not a model" * 100)
    for args, reason in ((["--model", os.path.join(tmp, "absent.gguf")], "modelNotFound"),
                         (["--model", garbage], "invalidModelFile"),
                         (["--ctx", "256"], "contextTooSmall")):
        d = spawn(*args)
        assert d.model["availability"] == "unavailable" and d.model["reason"] == reason, d.model  # type: ignore[index]
        st = d.request("model/status")
        assert st["availability"] == "unavailable" and st["reason"] == reason and st["message"], st
        e = expect_error(d, "analysis/summarize", {"text": support.SAMPLE_TEXT})
        check_error(spec, e, -32001)
        assert e.data["reason"] == reason, e.data
        d.close()
    # "loading" is a state model/status and model/list report while a load runs; a request
    # waits for the load rather than failing with it (tests/…/ModelRegistryTests).


@provokes(-32010)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    sid = c.request("session/create", {})["sessionId"]
    # exceededContextWindowSize: prompt + maxTokens over the context.
    e = expect_error(c, "session/respond", {"sessionId": sid, "prompt": "Hello", "options": {"maxTokens": 8192}})
    check_error(spec, e, -32010, "exceededContextWindowSize")
    ctx_size = c.request("model/status")["model"]["contextSize"]
    assert e.data["maxTokens"] == 8192 and e.data["contextSize"] == ctx_size and e.data["promptTokens"] > 0, e.data
    # unsupportedLanguageOrLocale: a language Parlance does not know.
    e = expect_error(c, "analysis/summarize", {"text": support.SAMPLE_TEXT, "language": "qq"})
    check_error(spec, e, -32010, "unsupportedLanguageOrLocale")
    assert e.data["language"] == "qq" and "en-us" in e.data["supportedLanguages"], e.data
    # decodingFailure: schema-guided output cut off by maxTokens cannot be parsed.
    e = expect_error(c, "session/respond", {"sessionId": sid, "prompt": "Describe a cat.",
                                           "schema": {"type": "object", "properties": {"description": {"type": "string"}},
                                                      "required": ["description"]},
                                           "options": {"maxTokens": 3}})
    check_error(spec, e, -32010, "decodingFailure")
    # concurrentRequests: a second respond on a session that is still responding.
    a = c.start("session/respond", {"sessionId": sid, "prompt": "Count to twenty.", "options": {"maxTokens": 48}})
    b = c.start("session/respond", {"sessionId": sid, "prompt": "Count to ten.", "options": {"maxTokens": 48}})
    errors = [x.error() for x in (a, b)]
    failed = [x for x in errors if x is not None]
    assert len(failed) == 1, f"exactly one of two concurrent responds on one session fails: {errors}"
    check_error(spec, failed[0], -32010, "concurrentRequests")


@provokes(-32801)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    # An editor buffer changes after a rewrite was offered: choosing it is refused.
    uri = "file:///conformance/content-modified.md"
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": LSP_TEXT}})
    action = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": lsp_range()})[0]
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": LSP_TEXT + "more\n"}]})
    e = expect_error(c, "codeAction/resolve", action)
    check_error(spec, e, -32801)
    assert e.data == {"error": "contentModified", "uri": uri, "offeredVersion": 1, "currentVersion": 2}, e.data
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@provokes(-32803)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    # This client did not declare workspace.applyEdit: a command that must end in an edit is refused.
    uri = "file:///conformance/request-failed.md"
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": LSP_TEXT}})
    action = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": lsp_range()})[0]
    e = expect_error(c, "workspace/executeCommand", {"command": "parlance.rewrite", "arguments": [action["data"]]})
    check_error(spec, e, -32803)
    assert e.data["error"] == "applyEditUnsupported", e.data
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@provokes(-32004)
def _(c: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    for method, params, kind in (("session/transcript", {"sessionId": MISSING}, "session"),
                                 ("document/close", {"uri": MISSING}, "document"),
                                 ("analysis/summarize", {"uri": MISSING}, "document")):
        e = expect_error(c, method, params)
        check_error(spec, e, -32004, "notFound")
        assert e.data["kind"] == kind and e.data["id"] == MISSING, e.data


def test_every_documented_code_has_a_provoker(spec: Dict[str, Any]) -> None:
    codes = {e["code"] for e in spec["components"]["errors"].values()}
    missing = sorted(codes - set(PROVOKERS))
    assert not missing, f"documented error codes without a provoker in test_errors.py: {missing}"


@pytest.mark.parametrize("code", sorted(PROVOKERS, reverse=True))
def test_error_code(code: int, client: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    PROVOKERS[code](client, spawn, spec)
    alive(client)


def wait_for(cond: Callable[[], bool], what: str, timeout: float = support.TIMEOUT) -> None:
    end = time.time() + timeout
    while not cond():
        if time.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


# == Per method: the codes its spec entry lists, and -32602 ============================

def filler(name: str, schema: Dict[str, Any]) -> Any:
    if name in ID_FIELDS:
        return MISSING
    t = schema.get("type")
    if t == "string":
        if "enum" in schema:
            return schema["enum"][0]
        return "x" * max(1, schema.get("minLength", 1))
    if t == "array":
        n = max(1, schema.get("minItems", 1))
        items = schema.get("items", {})
        if name in ("uris", "ids"):
            return [MISSING] * n
        if "uri" in items.get("properties", {}):
            return [{"uri": MISSING} for _ in range(n)]
        return [filler("", items) for _ in range(n)]
    if t in ("integer", "number"):
        return schema.get("minimum", 1)
    if t == "boolean":
        return False
    if t == "object":
        return {}
    return "x"


def missing_params(m: Dict[str, Any]) -> Dict[str, Any]:
    """Params that are valid per the schema but name an id that does not exist."""
    props = {p["name"]: p.get("schema", {}) for p in m["params"]}
    out = {p["name"]: filler(p["name"], p.get("schema", {})) for p in m["params"] if p.get("required")}
    if not any(f in out for f in ID_FIELDS + ("uris", "documents")):
        for f in ID_FIELDS + ("uris", "documents"):
            if f in props:
                out[f] = filler(f, props[f])
                break
    return out


# Combinations a spec entry lists that no request can produce; reported as skips.
UNPROVOKABLE: Dict[tuple, str] = {}

# Known disagreements between the spec and the daemon, reported to the lead; strict
# xfails, so the entry must be removed once either side is fixed.
KNOWN_MISMATCHES: Dict[tuple, str] = {
    ("session/create", -32001): "session/create lists modelUnavailable but succeeds without a model "
                                "(sessions need the model only at respond/prewarm)",
}


def provoke_model_unavailable(method: str, m: Dict[str, Any], d: ParlanceClient) -> Dict[str, Any]:
    """Valid params for `method` on a daemon without a model (sessions and documents do
    not need one, so they are created for real)."""
    if method == "codeAction/resolve":
        # An action offered for an editor buffer (offering needs no model; resolving does).
        return CASES[method].prepare(CaseContext(d, {}, {}))
    p = missing_params(m)
    if "sessionId" in p:
        p["sessionId"] = d.request("session/create", {})["sessionId"]
    if "uri" in p:
        uri = f"file:///conformance/nomodel-{method.replace('/', '-')}.srt"
        d.request("document/open", {"uri": uri, "text": support.SAMPLE_SRT})
        p["uri"] = uri
    if "uris" in p:
        uris = []
        for i in range(len(p["uris"])):
            uri = f"file:///conformance/nomodel-{method.replace('/', '-')}-{i}.srt"
            d.request("document/open", {"uri": uri, "text": support.SAMPLE_SRT})
            uris.append(uri)
        p["uris"] = uris
    if "documents" in p:
        docs = []
        for i in range(len(p["documents"])):
            uri = f"file:///conformance/nomodel-{method.replace('/', '-')}-doc{i}.srt"
            d.request("document/open", {"uri": uri, "text": support.SAMPLE_SRT})
            docs.append({"uri": uri})
        p["documents"] = docs
    if "variationId" in p or (method.startswith("compose/history/") and "id" in p):
        pytest.skip(f"{method} needs a stored composition, which needs a model")
    if "text" in {x["name"] for x in m["params"]} and "uri" not in p and "text" not in p:
        p["text"] = support.SAMPLE_TEXT
    return p


def provoke_generation_failed(method: str, m: Dict[str, Any], c: ParlanceClient, spec: Dict[str, Any]) -> tuple:
    """Valid params that make `method` fail with -32010: an unknown output language when
    the method takes one, else a maxTokens the context cannot hold."""
    names = {x["name"]: x.get("schema", {}) for x in m["params"]}
    base = CASES[method].prepare(CaseContext(c, spec, {})) if method in CASES else missing_params(m)
    if "language" in names:
        base["language"] = "qq"
        return base, "unsupportedLanguageOrLocale"
    if "options" in names:
        base["options"] = {**base.get("options", {}), "maxTokens": 8192}
        return base, "exceededContextWindowSize"
    pytest.skip(f"no generic way to make {method} fail generation (no language or options param)")


def method_error_pairs() -> List[tuple]:
    spec = support.printed_spec()
    pairs = []
    for name, m in support.methods_of(spec).items():
        for e in m.get("errors", []):
            pairs.append((name, e["code"]))
    return pairs


@pytest.mark.parametrize("method,code", method_error_pairs())
def test_method_error(method: str, code: int, client: ParlanceClient, nomodel: ParlanceClient, remotedown: ParlanceClient,
                      spawn: Spawn, spec: Dict[str, Any], request: pytest.FixtureRequest) -> None:
    if (method, code) in UNPROVOKABLE:
        pytest.skip(UNPROVOKABLE[(method, code)])
    if (method, code) in KNOWN_MISMATCHES:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_MISMATCHES[(method, code)], strict=True))
    m = support.methods_of(spec)[method]
    if code == -32004:
        p = missing_params(m)
        e = expect_error(client, method, p)
        check_error(spec, e, -32004, "notFound")
        assert e.data["id"] == MISSING, e.data
    elif code == -32001 and method == "model/pull":
        # A pull fails with -32001 too, its reason saying why: here a registry on loopback
        # that does not answer (the discard port), so nothing leaves the machine.
        e = expect_error(nomodel, method, {"model": "ollama:127.0.0.1:9/library/none:latest"})
        check_error(spec, e, -32001)
        assert e.data["reason"] == "network" and e.data["model"] == "ollama:127.0.0.1:9/library/none:latest", e.data
        e = expect_error(nomodel, method, {"model": "hf:only-an-org"})
        check_error(spec, e, -32001)
        assert e.data["reason"] == "invalidName", e.data
    elif code == -32001:
        p = provoke_model_unavailable(method, m, nomodel)
        e = expect_error(nomodel, method, p)
        check_error(spec, e, -32001)
        assert e.data["reason"] == "modelNotFound"
    elif code == -32011:
        p = provoke_model_unavailable(method, m, remotedown)
        e = expect_error(remotedown, method, p)
        check_error(spec, e, -32011, "remoteUnavailable")
        assert e.data["model"] == "down" and e.data["endpoint"] == "127.0.0.1:1", e.data
    elif code == -32010:
        p, kind = provoke_generation_failed(method, m, client, spec)
        e = expect_error(client, method, p)
        check_error(spec, e, -32010, kind)
    elif code == -32012 and method == "session/create":
        d = spawn(*MCP_MISSING)
        provoke_mcp_server_failed(d, spec)
        d.close()
    else:
        pytest.fail(f"no generic provoker for code {code} on {method}: extend test_method_error")
    alive(client)


@pytest.mark.parametrize("method", list(support.methods_of(support.printed_spec())))
def test_method_invalid_params(method: str, client: ParlanceClient, spawn: Spawn, spec: Dict[str, Any]) -> None:
    """Every method refuses params that break its schema with -32602 and data.path/keyword."""
    m = support.methods_of(spec)[method]
    target = client
    if method == "initialize":
        # initialize accepts unknown fields (LSP clients send many); break a known one instead.
        target = spawn(initialize=False)
        params: Dict[str, Any] = {"processId": "not a number"}
    elif any(p.get("required") for p in m["params"]):
        params = {}
    else:
        params = {"conformanceBogus": 1}
    e = expect_error(target, method, params)
    check_error(spec, e, -32602)
    assert isinstance(e.data, dict) and "path" in e.data and "keyword" in e.data, e.data
    alive(client)

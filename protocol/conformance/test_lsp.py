"""The standard LSP surface, as a plain LSP client sees it: the server-to-client request
and response pairs (window/workDoneProgress/create, workspace/applyEdit), standard
progress, window/showMessage, incremental edits in multi-byte text, stale actions, and
what an LSP server must answer for methods it does not implement. Every message the
daemon sends is validated against the spec."""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Dict

import support
from cases import LSP_TEXT, LSP_WORDS, lsp_range
from parlance_client import ParlanceClient, RPCError

URI = "file:///conformance/lsp.md"


def lsp_client(spawn: Callable[..., ParlanceClient], capabilities: Dict[str, Any]) -> ParlanceClient:
    c = spawn(framing="lsp", initialize=False)
    r = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": capabilities,
                                 "initializationOptions": {"tones": ["formal"], "maxTokens": 40}})
    assert r["capabilities"]["textDocumentSync"] == {"openClose": True, "change": 2}
    c.notify("initialized", {})
    c.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "markdown", "version": 1, "text": LSP_TEXT}})
    return c


def content_hash(c: ParlanceClient) -> str:
    docs = c.request("document/list", {})["documents"]
    return next(d["contentHash"] for d in docs if d["uri"] == URI)


def test_progress_and_resolve_pairs(spawn: Callable[..., ParlanceClient], spec: Dict[str, Any]) -> None:
    c = lsp_client(spawn, {"window": {"workDoneProgress": True},
                           "textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]}}}})
    actions = c.request("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": lsp_range()})
    assert [a["title"] for a in actions] == ["Rewrite: formal", "Shorter", "Clearer"]
    assert all("command" not in a for a in actions), "a client that resolves edits gets data-only actions"
    pending = c.start("codeAction/resolve", actions[0])
    create = c.next_server_request("window/workDoneProgress/create")
    m = support.client_methods_of(spec)["window/workDoneProgress/create"]
    support.validate(create["params"], support.params_schema(m), "window/workDoneProgress/create params")
    c.respond(create["id"], None)
    resolved = pending.result()
    assert resolved["edit"]["changes"][URI][0]["range"] == lsp_range()
    # Standard $/progress on the token the daemon created: begin, reports, end.
    token = create["params"]["token"]
    values = [p["value"] for (meth, p) in list(c.notifications) if meth == "$/progress" and p["token"] == token]
    schema = support.params_schema(support.notifications_of(spec)["$/progress"])
    for v in values:
        support.validate({"token": token, "value": v}, schema, "$/progress params")
    kinds = [v["kind"] for v in values]
    assert kinds[0] == "begin" and kinds[-1] == "end" and set(kinds[1:-1]) <= {"report"}, kinds
    assert "delta" not in str(values), "standard progress carries message and percentage, not Parlance's stream"


def test_incremental_edits_in_multibyte_text_and_stale_actions(spawn: Callable[..., ParlanceClient], spec: Dict[str, Any]) -> None:
    c = lsp_client(spawn, {"workspace": {"applyEdit": True}})
    text = LSP_TEXT
    # UTF-16 positions after an emoji (2 units) and CJK (1 unit each): insert, then delete.
    c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 2, "character": 2}, "end": {"line": 2, "character": 2}}, "text": "é👍"},
        {"range": {"start": {"line": 2, "character": 5}, "end": {"line": 2, "character": 7}}, "text": ""}]})
    line = text.split("\n")[2]
    units = line.encode("utf-16-le")
    edited = (units[:4] + "é👍".encode("utf-16-le") + units[4:]).decode("utf-16-le")
    u = edited.encode("utf-16-le")
    edited = (u[:10] + u[14:]).decode("utf-16-le")
    text = text.replace(line, edited)
    assert content_hash(c) == hashlib.sha256(text.encode()).hexdigest()
    # Offered for version 2, the buffer moves to version 3: no edit, a message that says so.
    rng = lsp_range(text, LSP_WORDS)
    actions = c.request("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": rng})
    c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 3},
                                        "contentChanges": [{"text": text + "P.S.\n"}]})
    seen = []
    remove = c.on_notification(lambda meth, p: seen.append(p) if meth == "window/showMessage" else None)
    assert c.request("workspace/executeCommand", actions[0]["command"]) is None
    # The message is sent before executeCommand's answer, which we have now.
    remove()
    assert seen, "no window/showMessage for a stale action"
    support.validate(seen[0], support.params_schema(support.notifications_of(spec)["window/showMessage"]), "showMessage params")
    assert "changed" in seen[0]["message"] and seen[0]["type"] == 2
    # codeAction/resolve on the stale action: -32801 with both versions.
    try:
        c.request("codeAction/resolve", actions[0])
        raise AssertionError("a stale action must not resolve")
    except RPCError as e:
        assert e.code == -32801 and e.data["offeredVersion"] == 2 and e.data["currentVersion"] == 3, e


def test_unimplemented_requests_and_notifications(spawn: Callable[..., ParlanceClient]) -> None:
    c = lsp_client(spawn, {})
    for method in ("textDocument/hover", "textDocument/completion", "workspace/symbol"):
        try:
            c.request(method, {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}})
            raise AssertionError(f"{method} must be -32601")
        except RPCError as e:
            assert e.code == -32601 and e.data["method"] == method
    for method in ("textDocument/didSave", "$/setTrace", "workspace/didChangeWatchedFiles", "textDocument/willSave"):
        c.notify(method, {"textDocument": {"uri": URI}})
    # A settings change with a wrong type is ignored (logged); valid settings apply.
    c.notify("workspace/didChangeConfiguration", {"settings": {"parlance": {"tones": "formal"}}})
    c.notify("workspace/didChangeConfiguration", {"settings": {"tones": ["casual", "direct"]}})
    titles = [a["title"] for a in c.request("textDocument/codeAction", {"textDocument": {"uri": URI}, "range": lsp_range()})]
    assert titles == ["Rewrite: casual", "Rewrite: direct", "Shorter", "Clearer"], titles
    assert c.request("shutdown", None) == {}

"""Transports: NDJSON and LSP framing (auto-detected per message; replies in the client's
framing), framing edge cases, and JSON-RPC batches."""

from __future__ import annotations

import time
from typing import Any, Callable, Dict

import pytest

import support
from parlance_client import ParlanceClient, encode, frame

Spawn = Callable[..., ParlanceClient]


@pytest.fixture(scope="module")
def lsp(spawn: Spawn) -> ParlanceClient:
    """A daemon driven only in LSP (Content-Length) framing."""
    return spawn(framing="lsp")


def test_ndjson_replies_in_ndjson(client: ParlanceClient) -> None:
    p = client.start("model/status")
    p.result()
    assert p.framing == "ndjson"


def test_lsp_session_end_to_end(lsp: ParlanceClient, spec: Dict[str, Any]) -> None:
    assert lsp.model["availability"] == "available"  # type: ignore[index]
    for method, params in (("model/status", None), ("rpc.discover", None),
                           ("document/open", {"uri": "file:///lsp.srt", "text": support.SAMPLE_SRT})):
        p = lsp.start(method, params)
        r = p.result()
        support.validate(r, support.result_schema(support.methods_of(spec)[method]), method)
        assert p.framing == "lsp"
    sid = lsp.request("session/create", {})["sessionId"]
    p = lsp.start("session/respond", {"sessionId": sid, "prompt": "Hi", "options": {"maxTokens": 8}}, progress=True)
    r = p.result()
    assert p.framing == "lsp" and p.text == r["text"] and p.progress[-1]["kind"] == "end"
    assert set(lsp.received_framings) == {"lsp"}, "every message to an LSP client, $/progress included, is LSP-framed"


def test_framing_follows_each_message(client: ParlanceClient) -> None:
    for framing in ("lsp", "ndjson", "lsp", "ndjson"):
        p = client.start("model/status", framing=framing)  # type: ignore[arg-type]
        p.result()
        assert p.framing == framing


def test_utf8_content_length_counts_bytes(lsp: ParlanceClient) -> None:
    text = "1\n00:00:01,000 --> 00:00:02,000\nZOË: Café ☕ — 日本語のテスト 🎉\n"
    r = lsp.request("document/open", {"uri": "file:///ユニコード.srt", "text": text})
    assert r["uri"] == "file:///ユニコード.srt"
    assert r["bytes"] == len(text.encode("utf-8"))


def test_lsp_header_variants(client: ParlanceClient) -> None:
    body = b'{"jsonrpc":"2.0","id":"hv1","method":"model/status"}'
    variants = [
        b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(body),
        b"content-length: %d\r\n\r\n" % len(body),
        b"Content-Length:%d\n\n" % len(body),
    ]
    for i, header in enumerate(variants):
        b = body.replace(b"hv1", b"hv%d" % i)
        client.send_raw(header + b)
        r = client.next_unmatched(60)
        assert r["id"] == f"hv{i}" and r["result"]["availability"] == "available", r


def test_ndjson_crlf_and_blank_lines(client: ParlanceClient) -> None:
    client.send_raw(b'\r\n\n  {"jsonrpc":"2.0","id":"crlf","method":"model/status"}\r\n')
    r = client.next_unmatched(60)
    assert r["id"] == "crlf" and "result" in r


def test_split_and_coalesced_writes(client: ParlanceClient) -> None:
    one = encode({"jsonrpc": "2.0", "id": "split", "method": "model/status"}, "lsp")
    for i in range(0, len(one), 7):
        client.send_raw(one[i:i + 7])
        time.sleep(0.002)
    r = client.next_unmatched(60)
    assert r["id"] == "split"
    many = b"".join(encode({"jsonrpc": "2.0", "id": f"c{i}", "method": "model/status"}, "ndjson" if i % 2 else "lsp")
                    for i in range(6))
    client.send_raw(many)
    got = {client.next_unmatched(60)["id"] for _ in range(6)}
    assert got == {f"c{i}" for i in range(6)}


def test_framing_errors_resynchronise(client: ParlanceClient) -> None:
    client.send_raw(b"X-Nothing: 1\r\n\r\n")
    r = client.next_unmatched(30)
    assert r["error"]["code"] == -32700 and r["error"]["data"]["error"] == "missingContentLength"
    client.send_raw(b"Content-Length: -5\r\n\r\n")
    r = client.next_unmatched(30)
    assert r["error"]["code"] == -32700 and r["error"]["data"]["error"] == "invalidContentLength"
    client.send_raw(b"not a header line\r\n\r\n")
    r = client.next_unmatched(30)
    assert r["error"]["code"] == -32700 and r["error"]["data"]["error"] == "badHeader"
    assert client.request("model/status")["availability"] == "available"


def test_too_large_in_both_framings(spawn: Spawn, spec: Dict[str, Any]) -> None:
    d = spawn("--max-message-bytes", "2048")
    big = b'{"jsonrpc":"2.0","id":1,"method":"model/status","params":{"x":"' + b"a" * 4000 + b'"}}'
    for raw in (frame(big, "ndjson"), frame(big, "lsp")):
        d.send_raw(raw)
        r = d.next_unmatched(30)
        assert r["id"] is None and r["error"]["code"] == -32600 and r["error"]["data"]["error"] == "tooLarge", r
        assert d.request("model/status")["availability"] == "available", "the connection stays usable"


def test_batch(client: ParlanceClient) -> None:
    replies = client.batch([
        {"jsonrpc": "2.0", "id": "b1", "method": "model/status"},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": "b2", "method": "no/such"},
        {"jsonrpc": "2.0", "id": "b3", "method": "document/list", "params": {}},
    ])
    by_id = {r["id"]: r for r in replies}
    assert set(by_id) == {"b1", "b2", "b3"}, "one reply per request, none for notifications"
    assert by_id["b1"]["result"]["availability"] == "available"
    assert by_id["b2"]["error"]["code"] == -32601
    assert "documents" in by_id["b3"]["result"]
    assert client.batch([{"jsonrpc": "2.0", "method": "initialized"}]) == []
    assert client.request("model/status")["availability"] == "available"

"""Lifecycle: initialize → initialized → … → shutdown → exit, and exit codes."""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict

import support
from parlance_client import ConnectionClosed, ParlanceClient

Spawn = Callable[..., ParlanceClient]


def test_requests_before_initialize(spawn: Spawn, spec: Dict[str, Any]) -> None:
    d = spawn(initialize=False)
    e = support.expect_error(d, "model/status", None)
    support.check_error(spec, e, -32002)
    d.notify("initialized")  # notifications before initialize are ignored, not answered
    r = d.initialize()
    assert r["serverInfo"]["name"] == "parlance"
    assert d.request("model/status")["availability"] == "available"


def test_initialize_accepts_unknown_lsp_fields(spawn: Spawn) -> None:
    d = spawn(initialize=False)
    r = d.request("initialize", {"processId": 1, "rootUri": "file:///tmp", "trace": "off",
                                 "capabilities": {"window": {"workDoneProgress": True}}, "locale": "en"})
    assert r["serverInfo"]["protocolVersion"]


def test_initialize_result_matches_model_status(client: ParlanceClient) -> None:
    # initialize answers without loading: it names the default model and its state then;
    # model/load and model/status agree on the loaded model.
    assert client.model["name"] and client.model["state"] in ("unloaded", "loading", "ready"), client.model  # type: ignore[index]
    loaded = client.request("model/load")
    st = client.request("model/status")
    assert loaded["name"] == st["name"] == client.model["name"]  # type: ignore[index]
    assert loaded["model"] == st["model"]
    assert client.server_info["version"] and client.server_info["protocolVersion"]  # type: ignore[index]


def test_second_initialize_is_rejected(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    e = support.expect_error(client, "initialize", {})
    support.check_error(spec, e, -32600)


def test_shutdown_then_exit_is_0(spawn: Spawn, spec: Dict[str, Any]) -> None:
    d = spawn()
    assert d.request("shutdown") == {}
    for m in ("model/status", "session/create", "shutdown"):
        support.check_error(spec, support.expect_error(d, m, None), -32600)
    d.exit()
    assert d.wait(30) == 0


def test_exit_without_shutdown_is_1(spawn: Spawn) -> None:
    d = spawn()
    d.exit()
    assert d.wait(30) == 1


def test_exit_before_initialize_is_1(spawn: Spawn) -> None:
    d = spawn(initialize=False)
    d.exit()
    assert d.wait(30) == 1


def test_closing_stdin_exits_0(spawn: Spawn) -> None:
    d = spawn()
    d.close_input()
    assert d.wait(30) == 0


def test_closing_stdin_during_generation_finishes_it_then_exits_0(spawn: Spawn) -> None:
    d = spawn()
    sid = d.request("session/create", {})["sessionId"]
    streaming = threading.Event()
    p = d.start("session/respond", {"sessionId": sid, "prompt": "Write a very long essay about rivers.",
                                    "options": {"maxTokens": 64}},
                on_progress=lambda v: streaming.set() if v.get("delta") else None)
    assert streaming.wait(support.TIMEOUT), "no streamed text before closing stdin"
    d.close_input()
    # End of input drains: the work in flight runs to its end and is answered, then exit 0
    # (`cat requests.ndjson | parlance --stdio` answers everything).
    r = p.wait()
    assert "result" in r, f"the request was not finished before the exit: {r}"
    assert d.wait(support.TIMEOUT) == 0


def test_unknown_notifications_and_client_responses_are_ignored(client: ParlanceClient) -> None:
    client.notify("$/setTrace", {"value": "off"})
    client.notify("workspace/didChangeConfiguration", {"settings": {}})
    client.send({"jsonrpc": "2.0", "id": 12345, "result": {}})
    client.send({"jsonrpc": "2.0", "id": 12346, "error": {"code": 1, "message": "client error"}})
    # The daemon reads its input in order, so a reply to any of the messages above would
    # have been written, and read, before this later request's answer.
    assert client.request("model/status")["availability"] == "available"
    try:
        r = client.next_unmatched(0)
        raise AssertionError(f"unexpected reply: {r}")
    except TimeoutError:
        pass

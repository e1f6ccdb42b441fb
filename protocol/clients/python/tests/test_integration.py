"""Tools against the real daemon ($PARLANCE_BIN, else `parlance` on PATH, else
.build/release/parlance above the current directory) and its real model.

The default model is tiny: nothing here asserts on its wording, only on the protocol —
the function ran with the arguments the daemon sent, the result reports what it returned,
a final text exists. Skipped when there is no daemon, or when the daemon refuses tools
(-32601/-32602 about tools: a daemon from before tool calling).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from conftest import daemon_binary

from parlance_client import ParlanceClient, RPCError, current_tool_call

pytestmark = pytest.mark.integration

TIMEOUT = float(os.environ.get("PARLANCE_TEST_TIMEOUT", "600"))
PROMPT = "What is the weather in Paris?"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[ParlanceClient]:
    """A daemon with fresh cache and data directories, its log in the test's tmp_path."""
    binary = daemon_binary()
    if binary is None:
        pytest.skip("no parlance daemon: set PARLANCE_BIN (make build)")
    log = open(tmp_path / "daemon.log", "w")
    env = {"PARLANCE_CACHE_DIR": str(tmp_path / "cache"), "PARLANCE_DATA_DIR": str(tmp_path / "data")}
    c = ParlanceClient(binary, env=env, stderr=log, default_timeout=TIMEOUT)
    try:
        yield c
    finally:
        c.close()
        log.close()


def create_session(c: ParlanceClient, **params: Any) -> str:
    """``initialize`` then ``session/create`` with the client's tools; skips when the daemon
    does not know tools yet."""
    c.initialize(client_name="parlance_client tests")
    if (c.model or {}).get("availability") != "available":
        pytest.fail(f"model unavailable: {c.model}")
    try:
        r = c.request("session/create", {"tools": c.tools, **params})
    except RPCError as e:
        text = f"{e.message} {e.data}".lower()
        if e.kind == "toolsNotSupportedByClient":  # we declared capabilities.tools: a client bug
            raise
        if e.code in (-32601, -32602) and "tool" in text:
            pytest.skip(f"this daemon does not support tools yet: {e.code} {e.message}")
        raise
    return str(r["sessionId"])


def test_a_registered_function_is_called(client: ParlanceClient) -> None:
    calls: List[Any] = []

    @client.tool
    def get_weather(city: str) -> str:
        """Get the current weather in a city."""
        calls.append(city)
        return f"It is sunny and 21 degrees in {city}."

    sid = create_session(client, toolChoice={"name": "get_weather"})
    progress: List[Dict[str, Any]] = []
    r = client.request("session/respond", {"sessionId": sid, "prompt": PROMPT}, on_progress=progress.append)

    assert calls, "get_weather was not called"
    assert all(isinstance(c, str) for c in calls), calls
    tc = r["toolCalls"]
    assert tc and tc[0]["name"] == "get_weather"
    assert tc[0]["arguments"] == {"city": calls[0]}
    assert tc[0]["output"] == f"It is sunny and 21 degrees in {calls[0]}."
    assert "error" not in tc[0]
    assert isinstance(tc[0]["callId"], str) and tc[0]["callId"]
    assert isinstance(r["text"], str) and r["text"].strip(), r

    inv = client.tool_invocations[0]
    assert inv.name == "get_weather" and inv.call_id == tc[0]["callId"] and inv.answered and inv.state == "finished"
    assert inv.session_id == sid
    # $/progress may report the call: when it does, it names the same call.
    reports = [v["toolCall"] for v in progress if v.get("phase") == "toolCall" and isinstance(v.get("toolCall"), dict)]
    for rep in reports:
        assert rep["name"] == "get_weather" and rep["state"] in ("started", "finished", "failed")
    if reports:
        assert tc[0]["callId"] in {rep["callId"] for rep in reports}


def test_an_exception_is_reported_to_the_daemon_as_a_failure(client: ParlanceClient) -> None:
    @client.tool
    def get_weather(city: str) -> str:
        """Get the current weather in a city."""
        raise ConnectionError("the weather service is down")

    sid = create_session(client, toolChoice={"name": "get_weather"}, maxToolCalls=1)
    r = client.request("session/respond", {"sessionId": sid, "prompt": PROMPT})
    tc = r["toolCalls"]
    assert tc and tc[0]["name"] == "get_weather"
    assert tc[0]["error"]["code"] == -32000
    assert "the weather service is down" in tc[0]["error"]["message"]
    assert "output" not in tc[0] or tc[0]["output"] is None
    assert isinstance(r["text"], str)


def test_a_tool_answered_by_hand(client: ParlanceClient) -> None:
    client.declare_tool("get_weather", description="Get the current weather in a city.",
                        parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    sid = create_session(client, toolChoice={"name": "get_weather"}, maxToolCalls=1)
    p = client.start("session/respond", {"sessionId": sid, "prompt": PROMPT})
    req = client.next_server_request("tool/call", timeout=TIMEOUT)
    assert req["params"]["name"] == "get_weather" and isinstance(req["params"]["arguments"]["city"], str)
    client.respond(req["id"], {"content": {"sky": "clear", "celsius": 21}})
    r = p.result(TIMEOUT)
    assert r["toolCalls"][0]["callId"] == req["params"]["callId"]
    assert r["toolCalls"][0]["output"] == {"sky": "clear", "celsius": 21}


def test_cancelling_the_respond_cancels_the_tool_call(client: ParlanceClient) -> None:
    started = threading.Event()

    @client.tool
    def get_weather(city: str) -> str:
        """Get the current weather in a city."""
        inv = current_tool_call()
        assert inv is not None
        started.set()
        inv.wait_cancelled(TIMEOUT)  # a slow tool that notices its cancellation
        return "too late"

    sid = create_session(client, toolChoice={"name": "get_weather"})
    p = client.start("session/respond", {"sessionId": sid, "prompt": PROMPT})
    assert started.wait(TIMEOUT), "get_weather was not called"
    p.cancel()
    with pytest.raises(RPCError) as e:
        p.result(TIMEOUT)
    assert e.value.code == -32800
    inv = client.tool_invocations[0]
    assert inv.wait_cancelled(TIMEOUT), "no $/cancelRequest for the outstanding tool/call"
    inv.wait(TIMEOUT)
    assert not inv.answered

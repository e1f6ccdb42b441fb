"""Tool calling as a client that runs tools sees it: the tool/call request the daemon sends
and our answer validate against the spec's client method, the respond's result and every
$/progress value against theirs, and each fault answers the documented error. The tools are
answered by hand (next_server_request), as a client in another language would."""

from __future__ import annotations

from typing import Any, Callable, Dict

import support
from parlance_client import ParlanceClient, RPCError

WEATHER = {"name": "get_weather", "description": "Current weather for a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40}}, "required": ["city"]}}


def tool_client(spawn: Callable[..., ParlanceClient], framing: str = "ndjson") -> ParlanceClient:
    c = spawn(framing=framing, initialize=False)
    r = c.initialize(tools=True)
    assert r["capabilities"]["tools"] is True
    return c


def session(c: ParlanceClient, **extra: Any) -> str:
    params: Dict[str, Any] = {"tools": [WEATHER], "toolChoice": {"name": "get_weather"}, "maxToolCalls": 1,
                              "options": {"temperature": 0, "maxTokens": 32}}
    params.update(extra)
    return str(c.request("session/create", params)["sessionId"])


def test_tool_call_pair_result_and_progress_validate(spawn: Callable[..., ParlanceClient], spec: Dict[str, Any]) -> None:
    for framing in ("ndjson", "lsp"):
        c = tool_client(spawn, framing)
        sid = session(c)
        pending = c.start("session/respond", {"sessionId": sid, "prompt": "Weather in Oslo?"}, progress=True)
        call = c.next_server_request("tool/call")
        m = support.client_methods_of(spec)["tool/call"]
        support.validate(call["params"], support.params_schema(m), "tool/call params")
        assert isinstance(call["id"], str) and call["params"]["sessionId"] == sid and call["params"]["name"] == "get_weather"
        answer = {"content": {"tempC": -3, "sky": "snow"}}
        support.validate(answer, support.result_schema(m), "our answer to tool/call")
        c.respond(call["id"], answer)
        r = pending.result()
        support.validate(r, support.result_schema(support.methods_of(spec)["session/respond"]), "session/respond result")
        assert r["toolCalls"][0]["output"] == answer["content"] and r["text"]
        schema = support.params_schema(support.notifications_of(spec)["$/progress"])
        values = support.progress_values(pending)
        for v in values:
            support.validate({"token": pending.token, "value": v}, schema, "$/progress params")
        assert [v["toolCall"]["state"] for v in values if v.get("phase") == "toolCall"] == ["started", "finished"]
        t = c.request("session/transcript", {"sessionId": sid})
        support.validate(t, support.result_schema(support.methods_of(spec)["session/transcript"]), "session/transcript result")
        assert [e["kind"] for e in t["turns"]] == ["prompt", "toolCalls", "toolOutput", "response"]


def test_tool_faults_answer_the_documented_errors(spawn: Callable[..., ParlanceClient], spec: Dict[str, Any]) -> None:
    c = tool_client(spawn)
    # The client's error is the call's outcome; the turn goes on.
    sid = session(c)
    pending = c.start("session/respond", {"sessionId": sid, "prompt": "Weather in Oslo?"})
    call = c.next_server_request("tool/call")
    c.respond(call["id"], error={"code": -32000, "message": "no network"})
    r = pending.result()
    assert r["toolCalls"][0]["error"] == {"code": -32000, "message": "no network"}
    # No answer in time: -32010 toolCallFailed with the call.
    sid = session(c, toolTimeoutMs=150)
    pending = c.start("session/respond", {"sessionId": sid, "prompt": "Weather in Oslo?"})
    call = c.next_server_request("tool/call")
    e = support.error_of(pending)
    support.check_error(spec, e, -32010, "toolCallFailed")
    assert e.data["callId"] == call["params"]["callId"] and e.data["reason"] == "timedOut"
    # Cancelled while the call is outstanding: the daemon cancels its request, answers -32800.
    sid = session(c)
    pending = c.start("session/respond", {"sessionId": sid, "prompt": "Weather in Oslo?"})
    call = c.next_server_request("tool/call")
    seen = []
    c.on_notification(lambda meth, p: seen.append(p) if meth == "$/cancelRequest" else None)
    pending.cancel()
    e = support.error_of(pending)
    support.check_error(spec, e, -32800)
    assert {"id": call["id"]} in seen, seen
    assert [t["kind"] for t in e.data["transcript"]] == ["prompt", "toolCalls"]
    # Bad definitions.
    e = support.expect_error(c, "session/create", {"tools": [WEATHER, WEATHER]})
    support.check_error(spec, e, -32602, "duplicateToolName")
    e = support.expect_error(c, "session/create", {"tools": [WEATHER], "toolChoice": {"name": "nope"}})
    support.check_error(spec, e, -32602, "invalidToolChoice")


def test_tools_need_the_client_capability(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    try:
        client.request("session/create", {"tools": [WEATHER]})
    except RPCError as e:
        support.check_error(spec, e, -32602, "toolsNotSupportedByClient")
    else:
        raise AssertionError("a client that did not declare capabilities.tools created a session with tools")

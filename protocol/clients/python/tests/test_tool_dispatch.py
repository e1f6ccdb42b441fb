"""The client answering ``tool/call`` over a real pipe pair: the test writes what the
daemon would send and reads the client's answers frame by frame. No sleeps: every wait
ends on a message or an event."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Dict, List, Literal, Optional, Tuple

import pytest
from conftest import TIMEOUT, PipePair

from parlance_client import ParlanceClient, ToolInvocation, current_tool_call, tool_from_function


def answer(p: PipePair, id: Any = "parlance-1") -> Dict[str, Any]:
    m = p.peer.recv()
    assert m["jsonrpc"] == "2.0" and m["id"] == id, m
    assert "method" not in m
    return m


# -- registration -----------------------------------------------------------------------------


def test_decorator_forms_and_definitions(pipes: PipePair) -> None:
    c = pipes.client

    @c.tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return city

    @c.tool(name="forecast", description="A forecast.")
    def some_function(city: str, days: int = 3) -> List[str]:
        """Ignored: description= wins."""
        return [city] * days

    def plain(x: int) -> int:
        return x

    assert c.tool(plain) is plain
    assert get_weather("x") == "x" and some_function("a", 1) == ["a"]  # still plain functions
    assert c.tools == c.tool_definitions() == [
        {"name": "get_weather", "description": "The weather in a city.",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
        {"name": "forecast", "description": "A forecast.",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                         "days": {"type": "integer", "default": 3}},
                        "required": ["city"]}},
        {"name": "plain", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
    ]
    assert [d["name"] for d in c.tool_definitions("plain", "get_weather")] == ["plain", "get_weather"]
    with pytest.raises(KeyError):
        c.tool_definitions("nope")
    with pytest.raises(ValueError, match="already registered"):
        c.tool(get_weather)
    c.remove_tool("plain")
    assert sorted(c.registered_tools) == ["forecast", "get_weather"]
    with pytest.raises(TypeError, match="no type hint"):
        c.tool(lambda city: city)


def test_tools_given_to_the_constructor() -> None:
    def a(x: int) -> int:
        return x

    def b(y: str) -> str:
        return y

    import os
    r, w = os.pipe()
    r2, w2 = os.pipe()
    c = ParlanceClient(streams=(os.fdopen(r, "rb"), os.fdopen(w2, "wb")), tools=[a, b])
    try:
        assert [t["name"] for t in c.tools] == ["a", "b"]
    finally:
        os.close(w)
        c.wait(TIMEOUT)
        c.close_input()
        os.close(r2)


# -- initialize declares the capability ------------------------------------------------------------


def initialize_params(p: PipePair, **kwargs: Any) -> Dict[str, Any]:
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        fut = ex.submit(p.client.initialize, **kwargs)
        req = p.peer.recv()
        assert req["method"] == "initialize"
        p.peer.send({"jsonrpc": "2.0", "id": req["id"], "result": {"capabilities": {"methods": ["session/create"]}}})
        fut.result(TIMEOUT)
        assert p.peer.recv()["method"] == "initialized"
    return req["params"]  # type: ignore[no-any-return]


def test_initialize_without_tools_does_not_declare_them(pipes: PipePair) -> None:
    caps = initialize_params(pipes)["capabilities"]
    assert caps == {"window": {"workDoneProgress": True}}
    assert pipes.client.methods == ["session/create"]


def test_initialize_with_a_registered_tool_declares_tools(pipes: PipePair) -> None:
    pipes.client.tool(lambda: "x", name="noop", parameters={"type": "object", "properties": {}})
    assert initialize_params(pipes)["capabilities"] == {"window": {"workDoneProgress": True}, "tools": True}


def test_initialize_tools_flag(pipes: PipePair) -> None:
    assert initialize_params(pipes, tools=True)["capabilities"]["tools"] is True


def test_initialize_tools_false_wins_and_capabilities_merge(pipes: PipePair) -> None:
    pipes.client.tool(lambda: "x", name="noop", parameters={"type": "object"})
    caps = initialize_params(pipes, tools=False, capabilities={"workspace": {"applyEdit": True}})["capabilities"]
    assert caps == {"window": {"workDoneProgress": True}, "workspace": {"applyEdit": True}}


# -- answers ------------------------------------------------------------------------------------


def test_result_is_the_return_value(pipes: PipePair) -> None:
    seen: List[Any] = []

    @pipes.client.tool
    def get_weather(city: str) -> str:
        seen.append(city)
        return f"Sunny in {city}"

    pipes.peer.call_tool("get_weather", {"city": "Paris"}, id="parlance-3")
    assert answer(pipes, "parlance-3") == {"jsonrpc": "2.0", "id": "parlance-3", "result": {"content": "Sunny in Paris"}}
    assert seen == ["Paris"]
    inv = pipes.client.tool_invocations[-1]
    inv.wait(TIMEOUT)
    assert (inv.name, inv.call_id, inv.session_id, inv.arguments) == ("get_weather", "call-1", "s1-test", {"city": "Paris"})
    assert inv.state == "finished" and inv.output == "Sunny in Paris" and inv.answered and not inv.cancelled
    assert inv.ms is not None and inv.ms >= 0


@pytest.mark.parametrize("value", [{"temp": 21, "sky": ["sun"]}, [1, 2.5, None], 42, 2.5, True, None, "", "é ✓"])
def test_json_values_are_sent_as_is(pipes: PipePair, value: Any) -> None:
    pipes.client.tool(lambda: value, name="v", parameters={"type": "object"})
    pipes.peer.call_tool("v")
    assert answer(pipes)["result"] == {"content": value}


class Weather:
    def __str__(self) -> str:
        return "a Weather object"


@pytest.mark.parametrize("value, sent", [(Weather(), "a Weather object"), ({1, 2}, "{1, 2}"), (b"x", "b'x'"),
                                          (float("nan"), "nan"), ({"k": Weather()}, None),
                                          ((1, 2), [1, 2])])
def test_other_values_are_sent_as_str(pipes: PipePair, value: Any, sent: Any) -> None:
    if sent is None:  # a dict's str() shows repr() of its values
        sent = str(value)
    pipes.client.tool(lambda: value, name="v", parameters={"type": "object"})
    pipes.peer.call_tool("v")
    assert answer(pipes)["result"] == {"content": sent}


def test_an_exception_is_a_32000_error(pipes: PipePair) -> None:
    @pipes.client.tool
    def get_weather(city: str) -> str:
        raise LookupError(f"no station near {city}")

    pipes.peer.call_tool("get_weather", {"city": "Atlantis"}, id="parlance-9")
    assert answer(pipes, "parlance-9") == {"jsonrpc": "2.0", "id": "parlance-9", "error": {
        "code": -32000, "message": "no station near Atlantis", "data": {"type": "LookupError"}}}
    inv = pipes.client.tool_invocations[-1].wait(TIMEOUT)
    assert inv.state == "failed" and inv.error is not None and inv.error["code"] == -32000 and inv.answered


def test_an_exception_without_message_is_named(pipes: PipePair) -> None:
    class QuotaExceeded(Exception):
        pass

    def boom() -> None:
        raise QuotaExceeded()

    pipes.client.tool(boom)
    pipes.peer.call_tool("boom")
    assert answer(pipes)["error"] == {"code": -32000, "message": "QuotaExceeded", "data": {"type": "QuotaExceeded"}}


def test_unknown_tool_is_32601_listing_the_tools(pipes: PipePair) -> None:
    @pipes.client.tool
    def get_weather(city: str) -> str:
        return city

    @pipes.client.tool
    def read_file(path: str) -> str:
        return path

    pipes.peer.call_tool("get_time", {}, id="parlance-4")
    e = answer(pipes, "parlance-4")["error"]
    assert e["code"] == -32601
    assert "get_time" in e["message"] and "get_weather" in e["message"] and "read_file" in e["message"]
    assert e["data"] == {"name": "get_time", "tools": ["get_weather", "read_file"]}
    assert pipes.client.tool_invocations[-1].state == "failed"


def test_arguments_that_do_not_fit_are_32602(pipes: PipePair) -> None:
    @pipes.client.tool
    def get_weather(city: str) -> str:
        return city

    pipes.peer.call_tool("get_weather", {"town": "Paris"}, id=1)
    e = answer(pipes, 1)["error"]
    assert e["code"] == -32602 and "get_weather" in e["message"]
    pipes.peer.call_tool("get_weather", ["Paris"], id=2)
    e = answer(pipes, 2)["error"]
    assert e["code"] == -32602 and "JSON object" in e["message"]


def test_optional_without_default_receives_none(pipes: PipePair) -> None:
    got: List[Any] = []

    @pipes.client.tool
    def search(query: str, limit: Optional[int]) -> str:
        got.append(limit)
        return "ok"

    pipes.peer.call_tool("search", {"query": "x"})
    assert answer(pipes)["result"] == {"content": "ok"}
    assert got == [None]


def test_literal_and_defaults_are_passed_through(pipes: PipePair) -> None:
    @pipes.client.tool
    def convert(value: float, unit: Literal["C", "F"] = "C") -> Dict[str, Any]:
        return {"value": value, "unit": unit}

    pipes.peer.call_tool("convert", {"value": 3}, id=1)
    assert answer(pipes, 1)["result"] == {"content": {"value": 3, "unit": "C"}}
    pipes.peer.call_tool("convert", {"value": 2.5, "unit": "F"}, id=2)
    assert answer(pipes, 2)["result"] == {"content": {"value": 2.5, "unit": "F"}}


def test_async_function(pipes: PipePair) -> None:
    @pipes.client.tool
    async def fetch(url: str) -> str:
        await asyncio.sleep(0)
        return f"fetched {url}"

    pipes.peer.call_tool("fetch", {"url": "u"})
    assert answer(pipes)["result"] == {"content": "fetched u"}


def test_integer_ids_and_lsp_framing() -> None:
    p = PipePair(framing="lsp")
    try:
        p.client.tool(lambda: "pong", name="ping", parameters={"type": "object"})
        p.peer.send({"jsonrpc": "2.0", "id": 7, "method": "tool/call",
                     "params": {"sessionId": "s", "callId": "c", "name": "ping", "arguments": {}}}, framing="lsp")
        f = p.peer.recv_frame()
        assert f.framing == "lsp" and f.value == {"jsonrpc": "2.0", "id": 7, "result": {"content": "pong"}}
    finally:
        p.close()


# -- threads, cancellation ------------------------------------------------------------------------


def test_a_slow_tool_does_not_block_the_reader(pipes: PipePair) -> None:
    started, release = threading.Event(), threading.Event()
    threads: Dict[str, Any] = {}

    @pipes.client.tool
    def slow() -> str:
        threads["slow"] = threading.current_thread()
        started.set()
        assert release.wait(TIMEOUT)
        return "slow done"

    @pipes.client.tool
    def fast() -> str:
        return "fast done"

    pipes.peer.call_tool("slow", id="parlance-1", call_id="call-1")
    assert started.wait(TIMEOUT)
    pipes.peer.call_tool("fast", id="parlance-2", call_id="call-2")
    assert answer(pipes, "parlance-2")["result"] == {"content": "fast done"}  # while slow() still runs
    release.set()
    assert answer(pipes, "parlance-1")["result"] == {"content": "slow done"}
    assert threads["slow"] is not threading.main_thread() and threads["slow"].name == "parlance-tool-slow"


def test_a_cancelled_call_is_not_answered(pipes: PipePair) -> None:
    started, release = threading.Event(), threading.Event()

    @pipes.client.tool
    def slow() -> str:
        started.set()
        assert release.wait(TIMEOUT)
        return "too late"

    @pipes.client.tool
    def fast() -> str:
        return "fast"

    pipes.peer.call_tool("slow", id="parlance-1")
    assert started.wait(TIMEOUT)
    inv = pipes.client.tool_invocations[-1]
    pipes.peer.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "parlance-1"}})
    assert inv.wait_cancelled(TIMEOUT)
    release.set()
    inv.wait(TIMEOUT)
    assert inv.cancelled and not inv.answered and inv.state == "finished" and inv.output == "too late"
    # The next frame the client writes is the answer to a later call, not the cancelled one.
    pipes.peer.call_tool("fast", id="parlance-2")
    assert answer(pipes, "parlance-2")["result"] == {"content": "fast"}
    assert [f.value.get("id") for f in pipes.peer.frames] == ["parlance-2"]


def test_a_tool_can_watch_for_its_cancellation(pipes: PipePair) -> None:
    seen: List[Optional[ToolInvocation]] = []
    started = threading.Event()

    @pipes.client.tool
    def wait_for_cancel() -> str:
        inv = current_tool_call()
        seen.append(inv)
        started.set()
        assert inv is not None and inv.wait_cancelled(TIMEOUT)
        return "stopped"

    pipes.peer.call_tool("wait_for_cancel", id="parlance-5", call_id="call-5")
    assert started.wait(TIMEOUT)
    pipes.peer.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "parlance-5"}})
    inv = pipes.client.tool_invocations[-1].wait(TIMEOUT)
    assert seen == [inv] and inv.call_id == "call-5" and inv.cancelled and not inv.answered
    assert current_tool_call() is None  # only inside a tool


def test_cancel_for_another_id_does_not_touch_the_call(pipes: PipePair) -> None:
    release = threading.Event()

    @pipes.client.tool
    def slow() -> str:
        assert release.wait(TIMEOUT)
        return "done"

    pipes.peer.call_tool("slow", id="parlance-1")
    pipes.peer.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "parlance-99"}})
    pipes.peer.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})  # 1 is not "parlance-1"
    # The reader handles messages in order: once this ping is answered both cancels were seen.
    pipes.client.tool(lambda: "pong", name="ping", parameters={"type": "object"})
    pipes.peer.call_tool("ping", id="parlance-2")
    assert answer(pipes, "parlance-2")["result"] == {"content": "pong"}
    release.set()
    assert answer(pipes, "parlance-1")["result"] == {"content": "done"}
    assert not pipes.client.tool_invocations[0].cancelled


def test_on_tool_call_sees_start_and_end(pipes: PipePair) -> None:
    events: List[Tuple[str, str, Any]] = []
    done = threading.Event()

    def handler(inv: ToolInvocation) -> None:
        events.append((inv.name, inv.state, inv.arguments))
        if inv.state != "running":
            done.set()

    remove = pipes.client.on_tool_call(handler)

    @pipes.client.tool
    def add(a: int, b: int) -> int:
        return a + b

    pipes.peer.call_tool("add", {"a": 2, "b": 3})
    assert answer(pipes)["result"] == {"content": 5}
    assert done.wait(TIMEOUT)
    assert events == [("add", "running", {"a": 2, "b": 3}), ("add", "finished", {"a": 2, "b": 3})]
    remove()
    assert pipes.client._tool_handlers == []


def test_a_failing_handler_does_not_stop_the_answer(pipes: PipePair) -> None:
    def bad(inv: ToolInvocation) -> None:
        raise RuntimeError("handler bug")

    pipes.client.on_tool_call(bad)
    pipes.client.tool(lambda: "fine", name="t", parameters={"type": "object"})
    pipes.peer.call_tool("t")
    assert answer(pipes)["result"] == {"content": "fine"}


# -- answering by hand ---------------------------------------------------------------------------


def test_without_tools_tool_calls_go_to_next_server_request(pipes: PipePair) -> None:
    pipes.peer.call_tool("get_weather", {"city": "Paris"}, id="parlance-1")
    req = pipes.client.next_server_request("tool/call", timeout=TIMEOUT)
    assert req["params"]["arguments"] == {"city": "Paris"}
    pipes.client.respond(req["id"], {"content": "by hand"})
    assert answer(pipes)["result"] == {"content": "by hand"}
    assert list(pipes.client.tool_invocations) == []


def test_declared_tools_are_answered_by_hand_others_automatically(pipes: PipePair) -> None:
    pipes.client.declare_tool("ask_user", description="Ask the user.",
                              parameters={"type": "object", "properties": {"q": {"type": "string"}}})
    pipes.client.tool(lambda: "auto", name="auto_tool", parameters={"type": "object"})
    assert [t["name"] for t in pipes.client.tools] == ["ask_user", "auto_tool"]
    assert pipes.client.tools[0]["description"] == "Ask the user."

    pipes.peer.call_tool("ask_user", {"q": "?"}, id="parlance-1")
    pipes.peer.call_tool("auto_tool", id="parlance-2")
    assert answer(pipes, "parlance-2")["result"] == {"content": "auto"}
    req = pipes.client.next_server_request("tool/call", timeout=TIMEOUT)
    assert req["id"] == "parlance-1"
    pipes.client.respond(req["id"], error={"code": -32000, "message": "the user left"})
    assert answer(pipes, "parlance-1")["error"] == {"code": -32000, "message": "the user left"}


def test_other_server_requests_still_queue(pipes: PipePair) -> None:
    pipes.client.tool(lambda: "x", name="t", parameters={"type": "object"})
    pipes.peer.send({"jsonrpc": "2.0", "id": 5, "method": "workspace/applyEdit", "params": {"edit": {}}})
    assert pipes.client.next_server_request("workspace/applyEdit", timeout=TIMEOUT)["id"] == 5


def test_tool_from_function_can_be_added(pipes: PipePair) -> None:
    def echo(text: str) -> str:
        return text

    t = pipes.client.add_tool(tool_from_function(echo, name="say"))
    assert t.name == "say"
    pipes.peer.call_tool("say", {"text": "hi"})
    assert answer(pipes)["result"] == {"content": "hi"}


def test_a_tool_call_after_the_daemon_went_away_is_not_an_error(pipes: PipePair) -> None:
    started, release = threading.Event(), threading.Event()

    @pipes.client.tool
    def slow() -> str:
        started.set()
        assert release.wait(TIMEOUT)
        return "x"

    pipes.peer.call_tool("slow")
    assert started.wait(TIMEOUT)
    inv = pipes.client.tool_invocations[-1]
    pipes.client.close_input()  # the answer cannot be written any more
    release.set()
    inv.wait(TIMEOUT)
    assert inv.state == "finished" and not inv.answered


def test_a_tool_may_call_request(pipes: PipePair) -> None:
    @pipes.client.tool
    def model_name() -> str:
        return str(pipes.client.request("model/status", timeout=TIMEOUT)["name"])

    pipes.peer.call_tool("model_name", id="parlance-1")
    req = pipes.peer.recv()  # the tool's own request reaches the daemon first
    assert req["method"] == "model/status"
    pipes.peer.send({"jsonrpc": "2.0", "id": req["id"], "result": {"name": "tiny"}})
    assert answer(pipes, "parlance-1")["result"] == {"content": "tiny"}


# -- window/workDoneProgress/create --------------------------------------------------------------


def test_a_declared_work_done_progress_answers_the_create_request(pipes: PipePair) -> None:
    initialize_params(pipes)
    pipes.peer.send({"jsonrpc": "2.0", "id": "parlance-7", "method": "window/workDoneProgress/create", "params": {"token": "t-1"}})
    assert answer(pipes, "parlance-7") == {"jsonrpc": "2.0", "id": "parlance-7", "result": None}


def test_without_the_capability_the_create_request_is_the_programs(pipes: PipePair) -> None:
    initialize_params(pipes, capabilities={"window": {"workDoneProgress": False}})
    pipes.peer.send({"jsonrpc": "2.0", "id": "parlance-8", "method": "window/workDoneProgress/create", "params": {"token": "t-2"}})
    assert pipes.client.next_server_request("window/workDoneProgress/create", timeout=TIMEOUT)["id"] == "parlance-8"

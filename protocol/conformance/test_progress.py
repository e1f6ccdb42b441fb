"""Progress ($/progress with work-done tokens), streamed text, partial structured
results, and cancellation ($/cancelRequest → -32800 with the partial output)."""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Dict, List

import pytest

import support
from parlance_client import ParlanceClient, PendingRequest
from support import check_error, error_of

Spawn = Callable[..., ParlanceClient]


def wait_for(cond: Callable[[], bool], what: str, timeout: float = support.TIMEOUT) -> None:
    end = time.time() + timeout
    while not cond():
        if time.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def validate_progress(p: PendingRequest, spec: Dict[str, Any]) -> List[Dict[str, Any]]:
    schema = support.params_schema(support.notifications_of(spec)["$/progress"])
    values = list(p.progress)
    assert values, "no $/progress"
    for v in values:
        support.validate({"token": p.token, "value": v}, schema, "$/progress params")
    assert values[0]["kind"] == "begin" and values[-1]["kind"] == "end", [v["kind"] for v in values]
    assert all(v["kind"] == "report" for v in values[1:-1])
    assert values[0].get("title") and values[0].get("cancellable") is True and values[0].get("percentage") == 0
    return values


def progress_notifications(c: ParlanceClient, token: Any) -> List[Dict[str, Any]]:
    return [params for (method, params) in list(c.notifications)
            if method == "$/progress" and params["token"] == token and type(params["token"]) is type(token)]


# == Progress and streamed text ========================================================

def test_plain_text_deltas_concatenate_to_the_result(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    sid = client.request("session/create", {"options": {"temperature": 0}})["sessionId"]
    p = client.start("session/respond", {"sessionId": sid, "prompt": "List three fruits.", "options": {"maxTokens": 24}}, progress=True)
    r = p.result()
    values = validate_progress(p, spec)
    assert p.text == r["text"], "the deltas, joined, are exactly the result text"
    phases = [v.get("phase") for v in values if v["kind"] == "report"]
    assert "generating" in phases and "prompt" in phases, phases
    assert phases.index("prompt") < phases.index("generating")
    prompt_reports = [v for v in values if v.get("phase") == "prompt"]
    for v in prompt_reports:
        assert 0 <= v["evaluatedTokens"] <= v["promptTokens"] and 0 <= v["cachedTokens"] <= v["promptTokens"], v
    assert prompt_reports[-1]["promptTokens"] == r["usage"]["promptTokens"]
    assert all(v.get("partial") is None for v in values), "plain text output has no partial JSON"
    assert values[-1]["message"] == "done"


@pytest.mark.parametrize("token", [7, "tok-α", 0])
def test_token_is_echoed_exactly(token: Any, client: ParlanceClient) -> None:
    sid = client.request("session/create", {})["sessionId"]
    client.request("session/respond", {"sessionId": sid, "prompt": "Hi", "options": {"maxTokens": 3}, "workDoneToken": token})
    got = progress_notifications(client, token)
    assert got and got[0]["value"]["kind"] == "begin" and got[-1]["value"]["kind"] == "end"


def test_no_token_no_progress(client: ParlanceClient) -> None:
    sid = client.request("session/create", {})["sessionId"]
    before = len([1 for (m, _) in list(client.notifications) if m == "$/progress"])
    client.request("session/respond", {"sessionId": sid, "prompt": "Hi", "options": {"maxTokens": 3}})
    after = len([1 for (m, _) in list(client.notifications) if m == "$/progress"])
    assert after == before, "a request without workDoneToken gets no $/progress"


def test_schema_guided_partial_results(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {
        "city": {"type": "string", "maxLength": 40},
        "reasons": {"type": "array", "items": {"type": "string", "maxLength": 60}, "minItems": 2, "maxItems": 2},
        "score": {"type": "integer", "minimum": 1, "maximum": 10}}, "required": ["city", "reasons", "score"]}
    sid = client.request("session/create", {"options": {"temperature": 0}})["sessionId"]
    p = client.start("session/respond", {"sessionId": sid, "prompt": "Pick a city to visit, with two reasons and a score.",
                                         "schema": schema, "options": {"maxTokens": 160}}, progress=True)
    r = p.result()
    values = validate_progress(p, spec)
    support.validate(r["content"], schema, "session/respond content")
    assert "text" not in r or r["text"] is None
    generating = [v for v in values if v.get("phase") == "generating"]
    assert generating and all("delta" in v for v in generating)
    partials = [v["partial"] for v in generating if v.get("partial") is not None]
    assert partials, "schema-guided generation reports partial JSON"
    assert all(isinstance(x, dict) for x in partials), "partials of an object schema are objects"
    assert partials[-1] == r["content"], "the last partial is the complete result"
    assert json.loads(p.text) == r["content"], "the deltas, joined, are the JSON text of the content"
    # Partial objects only grow: every key seen stays.
    seen: set = set()
    for x in partials:
        assert seen <= set(x), (seen, x)
        seen = set(x)


def test_summarize_progress(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    p = client.start("analysis/summarize", {"text": support.SAMPLE_SRT, "temperature": 0}, progress=True)
    r = p.result()
    values = validate_progress(p, spec)
    reports = [v for v in values if v["kind"] == "report"]
    assert any(v.get("delta") for v in reports)
    partials = [v["partial"] for v in reports if isinstance(v.get("partial"), dict)]
    assert partials and set(partials[-1]) <= set(r), "partials carry the generated fields"
    for v in values:
        if "percentage" in v:
            assert 0 <= v["percentage"] <= 100


def test_map_reduce_progress(spawn: Spawn, spec: Dict[str, Any]) -> None:
    """A transcript longer than the context is summarized in parts: phase map (part
    chunk-N) then reduce."""
    d = spawn("--ctx", "1024")
    lines = []
    for i in range(18):  # about 650 tokens: three parts at this context
        lines.append(f"{i + 1}\n00:{i // 60:02d}:{i % 60:02d},000 --> 00:{i // 60:02d}:{i % 60:02d},900\n"
                     f"SPEAKER{i % 3}: Item {i}: the team reviewed budget line {i} and agreed to move it to quarter {i % 4 + 1}.\n")
    text = "\n".join(lines)
    p = d.start("analysis/summarize", {"text": text, "temperature": 0, "maxTokens": 300}, progress=True)
    r = p.result()
    values = validate_progress(p, spec)
    assert r["chunks"] > 1, r["chunks"]
    phases = [v.get("phase") for v in values]
    assert "map" in phases and "reduce" in phases, phases
    assert phases.index("map") < phases.index("reduce")
    parts = {v["part"] for v in values if v.get("phase") == "map"}
    assert parts and all(x.startswith("chunk-") for x in parts), parts


def test_compose_progress_parts(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    if "compose/variations" not in client.methods:
        pytest.skip("compose/variations not in capabilities")
    p = client.start("compose/variations", {"text": "Please send me the report by Friday, thanks.", "tones": ["formal", "casual"],
                                            "maxTokens": 32, "seed": 3}, progress=True)
    r = p.result()
    values = validate_progress(p, spec)
    ids = {v["id"] for v in r["variations"]}
    delta_parts = {v["part"] for v in values if v.get("delta")}
    assert delta_parts <= ids and delta_parts, (delta_parts, ids)
    for v in r["variations"]:
        streamed = p.part_text(v["id"])
        assert streamed.strip() == v["text"].strip() or v["text"] in streamed or streamed, v["id"]


# == Cancellation ========================================================================

LONG = {"prompt": "Write a long, detailed story about a lighthouse keeper and a storm.", "options": {"maxTokens": 400}}


def test_cancel_mid_generation(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    sid = client.request("session/create", {})["sessionId"]
    p = client.start("session/respond", {"sessionId": sid, **LONG}, progress=True)
    wait_for(lambda: len(p.text) > 10, "streamed text")
    p.cancel()
    e = error_of(p)
    check_error(spec, e, -32800)
    assert e.data["partial"] == p.text, (e.data, p.text)
    assert isinstance(e.data["generatedTokens"], int)
    # Stopped where it was, not run to its end: fewer tokens than it was allowed.
    assert e.data["generatedTokens"] < LONG["options"]["maxTokens"], e.data
    assert p.progress[-1]["kind"] == "end" and p.progress[-1]["message"] == "cancelled"
    # A cancelled turn leaves the session as it was; the session still works.
    assert client.request("session/transcript", {"sessionId": sid})["turns"] == []
    r = client.request("session/respond", {"sessionId": sid, "prompt": "Say yes.", "options": {"maxTokens": 4}})
    assert r["text"] is not None


def test_cancel_string_id(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    sid = client.request("session/create", {})["sessionId"]
    p = client.start("session/respond", {"sessionId": sid, **LONG}, id="cancel-me", progress=True)
    wait_for(lambda: bool(p.text), "streamed text")
    client.cancel("cancel-me")
    check_error(spec, error_of(p), -32800)


def test_cancel_before_generation_starts(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    sid = client.request("session/create", {})["sessionId"]
    p = client.start("session/respond", {"sessionId": sid, **LONG})
    p.cancel()
    e = p.error()
    assert e is not None, "a request cancelled at once answers -32800"
    check_error(spec, e, -32800)


def test_cancel_analysis(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    p = client.start("analysis/summarize", {"text": support.SAMPLE_SRT + "\n", "seed": 77}, progress=True)
    wait_for(lambda: bool(p.text), "streamed text")
    p.cancel()
    e = error_of(p)
    check_error(spec, e, -32800)
    # Nothing half-done is cached: the same request now runs to completion.
    r = client.request("analysis/summarize", {"text": support.SAMPLE_SRT + "\n", "seed": 77})
    assert r["cached"] is False


def test_cancel_unknown_or_finished_is_ignored(client: ParlanceClient) -> None:
    r = client.start("model/status")
    r.result()
    client.cancel(r.id)
    client.cancel(987654321)
    client.cancel("never-sent")
    client.notify("$/cancelRequest", {})  # no id: logged and ignored
    assert client.request("model/status")["availability"] == "available"


def test_shutdown_finishes_work_in_flight_then_answers(spawn: Spawn, spec: Dict[str, Any]) -> None:
    d = spawn()
    sid = d.request("session/create", {})["sessionId"]
    p = d.start("session/respond", {"sessionId": sid, "prompt": LONG["prompt"], "options": {"maxTokens": 64}}, progress=True)
    wait_for(lambda: bool(p.text), "streamed text")
    # shutdown drains: the turn in flight runs to its end and is answered before shutdown is.
    assert d.request("shutdown") == {}
    assert p.done, "shutdown answered before the request in flight"
    assert p.result()["text"], p.response
    d.exit()
    assert d.wait(30) == 0


def test_concurrent_requests_stream_independently(client: ParlanceClient) -> None:
    sids = [client.request("session/create", {"options": {"temperature": 0}})["sessionId"] for _ in range(3)]
    ps = [client.start("session/respond", {"sessionId": s, "prompt": f"Count from {i} to {i + 5}.", "options": {"maxTokens": 16}},
                       progress=True) for i, s in enumerate(sids)]
    results = [p.result() for p in ps]
    for p, r in zip(ps, results):
        assert p.text == r["text"], "each request's deltas belong to it alone"

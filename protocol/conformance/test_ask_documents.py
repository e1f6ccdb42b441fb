"""ask/stream over several open documents (``uris``): the result validates against the
spec, every citation names one of the documents and is that document's segment, a
follow-up by sessionId alone stays on the same documents, and each bad list of documents
gets its own precise error."""

from __future__ import annotations

from typing import Any, Dict

import support
from parlance_client import ParlanceClient

BAKERY_SRT = """1
00:00:01,000 --> 00:00:04,000
LEO: Welcome to the Bakery Hour.

2
00:00:04,500 --> 00:00:09,000
INES: On Saturdays we bake four hundred loaves, and they are gone by noon.

3
00:00:09,500 --> 00:00:13,000
LEO: And the sourdough starter?

4
00:00:13,500 --> 00:00:17,000
INES: It is eleven years old, fed with rye flour twice a day.
"""

LAUNCH = "file:///conformance/uris-launch.srt"
BAKERY = "file:///conformance/uris-bakery.srt"

#: Each document's segments, by id: what a citation naming it must quote.
TEXTS = {
    LAUNCH: {1: "Welcome back. Today we talk about the product launch.",
             2: "The launch moves to March because the battery tests failed twice.",
             3: "Then marketing needs the new date by Friday.",
             4: "I will send it today, and QA starts the new battery tests on Monday."},
    BAKERY: {1: "Welcome to the Bakery Hour.",
             2: "On Saturdays we bake four hundred loaves, and they are gone by noon.",
             3: "And the sourdough starter?",
             4: "It is eleven years old, fed with rye flour twice a day."},
}


def open_documents(client: ParlanceClient) -> None:
    client.request("document/open", {"uri": LAUNCH, "text": support.SAMPLE_SRT})
    client.request("document/open", {"uri": BAKERY, "text": BAKERY_SRT})


def check_citations(r: Dict[str, Any]) -> None:
    used = {d["uri"]: set(d["segmentsUsed"]) for d in r["retrieval"]["documents"]}
    for c in r["citations"]:
        assert c.get("uri") in TEXTS, f"a citation over uris names its document: {c}"
        assert c["text"] == TEXTS[c["uri"]][c["segmentId"]], f"a citation quotes its own document's segment: {c}"
        assert c["segmentId"] in used[c["uri"]], f"cited a segment it was not shown: {c} {used}"


def test_ask_across_documents(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    open_documents(client)
    m = support.methods_of(spec)["ask/stream"]
    p = {"uris": [LAUNCH, BAKERY], "question": "How many loaves are baked on Saturdays?", "maxTokens": 96, "seed": 1}
    support.validate(p, support.params_schema(m), "the params")
    r = client.request("ask/stream", p, timeout=support.TIMEOUT)
    support.validate(r, support.result_schema(m), "the result of ask/stream over uris")
    assert [d["uri"] for d in r["retrieval"]["documents"]] == [LAUNCH, BAKERY]
    assert [d["segmentsSearched"] for d in r["retrieval"]["documents"]] == [4, 4]
    assert r["retrieval"]["segmentsSearched"] == 8 and r["retrieval"]["segmentsUsed"] == []
    check_citations(r)
    if r["found"]:
        assert any(c["uri"] == BAKERY for c in r["citations"]), r["citations"]
    # A follow-up by sessionId alone continues over the same documents.
    f = client.request("ask/stream", {"question": "Why does the launch move to March?", "sessionId": r["sessionId"], "maxTokens": 64},
                       timeout=support.TIMEOUT)
    support.validate(f, support.result_schema(m), "a follow-up's result")
    assert f["turn"] == 2 and "documents" in f["retrieval"], f
    check_citations(f)


def test_bad_lists_of_documents(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    open_documents(client)
    q = "Why does the launch move to March?"
    e = support.expect_error(client, "ask/stream", {"uris": [LAUNCH, "file:///conformance/never-opened.srt"], "question": q})
    support.check_error(spec, e, -32004, "notFound")
    assert e.data["id"] == "file:///conformance/never-opened.srt" and e.data["path"] == "uris[1]", e.data
    e = support.expect_error(client, "ask/stream", {"uris": [LAUNCH, BAKERY], "uri": LAUNCH, "question": q})
    support.check_error(spec, e, -32602, "conflictingSources")
    assert e.data["properties"] == ["uris", "uri"], e.data
    e = support.expect_error(client, "ask/stream", {"uris": [LAUNCH, BAKERY], "text": support.SAMPLE_SRT, "question": q})
    support.check_error(spec, e, -32602, "conflictingSources")
    e = support.expect_error(client, "ask/stream", {"uris": [LAUNCH, BAKERY, LAUNCH], "question": q})
    support.check_error(spec, e, -32602, "duplicateDocument")
    assert e.data["path"] == "uris[2]" and e.data["firstIndex"] == 0, e.data
    for uris, keyword in (([], "minItems"), ([LAUNCH], "minItems"), ([f"file:///conformance/e{i}.srt" for i in range(17)], "maxItems")):
        e = support.expect_error(client, "ask/stream", {"uris": uris, "question": q})
        support.check_error(spec, e, -32602)
        assert e.data["path"] == "uris" and e.data["keyword"] == keyword, e.data

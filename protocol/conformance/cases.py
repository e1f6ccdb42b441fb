"""The conformance case table: one entry per method.

A case prepares whatever state the method needs (a session, an open document, a stored
composition) on the daemon it is given, and returns valid params. The runner
(test_methods.py) checks those params against the spec's params schema, calls the
method (with a work-done token when the method takes one), validates the result against
the spec's result schema and every ``$/progress`` against the notification's schema, and
then runs the case's ``check`` for what a schema cannot say.

Adding a method to Parlance? Add a case here: ``test_every_capability_has_a_case`` fails,
naming the method, until you do.

``daemon`` says where the case runs:

* ``"shared"``: the module's daemon (initialized);
* ``"fresh"``: a new initialized daemon (for calls that end it, like ``shutdown``);
* ``"uninitialized"``: a new daemon that has not seen ``initialize``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import support
from parlance_client import ParlanceClient, RPCError

Params = Dict[str, Any]


class CaseContext:
    """What a case may use: the daemon the call goes to, and helpers that prepare state."""

    _uris = itertools.count(1)

    def __init__(self, client: ParlanceClient, spec: Dict[str, Any], cache: Dict[str, Any]) -> None:
        self.client = client
        self.spec = spec
        self.cache = cache  # shared across the cases of one module (same daemon)

    # -- sessions ------------------------------------------------------------------
    def session(self, **params: Any) -> str:
        """A new session; params are session/create's."""
        p = {"instructions": "You are terse. Answer in a few words."}
        p.update(params)
        return self.client.request("session/create", p)["sessionId"]

    # -- documents -----------------------------------------------------------------
    def new_uri(self, ext: str = "srt") -> str:
        return f"file:///conformance/doc-{next(self._uris)}.{ext}"

    def document(self, text: str = support.SAMPLE_SRT, ext: str = "srt") -> str:
        """Opens a new document and returns its uri."""
        uri = self.new_uri(ext)
        self.client.request("document/open", {"uri": uri, "text": text})
        return uri

    def shared_document(self) -> str:
        """One document opened once per module (analyses share its cached prompt prefix)."""
        if "document" not in self.cache:
            self.cache["document"] = self.document()
        return self.cache["document"]

    # -- compose -------------------------------------------------------------------
    COMPOSE_TEXT = ("We have to move the launch to March because the battery tests failed twice. "
                    "Marketing needs the new date by Friday.")

    def compose(self, **params: Any) -> Dict[str, Any]:
        """A cheap compose/variations call (one short variation)."""
        p: Params = {"text": self.COMPOSE_TEXT, "tones": ["formal"], "audience": "team", "maxTokens": 48, "seed": 11}
        p.update(params)
        return self.client.request("compose/variations", p)

    def composition(self) -> Dict[str, Any]:
        """A stored composition, made once per module (until compose/history/clear)."""
        if "composition" not in self.cache:
            self.cache["composition"] = self.compose()
        return self.cache["composition"]


@dataclass
class Case:
    method: str
    prepare: Callable[[CaseContext], Params]
    daemon: str = "shared"
    check: Optional[Callable[[Any, Params, CaseContext], None]] = None
    #: Extra daemon flags for "fresh"/"uninitialized" cases.
    args: List[str] = field(default_factory=list)


CASES: Dict[str, Case] = {}


def case(method: str, daemon: str = "shared", args: Optional[List[str]] = None) -> Callable[[Callable[[CaseContext], Params]], Callable[[CaseContext], Params]]:
    def register(fn: Callable[[CaseContext], Params]) -> Callable[[CaseContext], Params]:
        assert method not in CASES, f"two cases for {method}"
        CASES[method] = Case(method, fn, daemon, None, args or [])
        return fn
    return register


def check(method: str) -> Callable[[Callable[[Any, Params, CaseContext], None]], Callable[[Any, Params, CaseContext], None]]:
    def register(fn: Callable[[Any, Params, CaseContext], None]) -> Callable[[Any, Params, CaseContext], None]:
        CASES[method].check = fn
        return fn
    return register


def apply_diff(original: str, hunks: List[Dict[str, Any]]) -> str:
    """Applies compose's word-diff hunks (UTF-16 offsets), last first."""
    units = original.encode("utf-16-le")
    for h in sorted(hunks, key=lambda h: h["originalStart"], reverse=True):
        units = units[: 2 * h["originalStart"]] + h["replacement"].encode("utf-16-le") + units[2 * h["originalEnd"]:]
    return units.decode("utf-16-le")


def check_variation(v: Dict[str, Any], original: str) -> None:
    assert v["text"].strip(), "a variation's text is empty"
    assert apply_diff(original, v["diff"]["hunks"]) == v["text"], "applying the diff's hunks to the selection must give the variation text"
    for h in v["diff"]["hunks"]:
        seg = original.encode("utf-16-le")[2 * h["originalStart"]: 2 * h["originalEnd"]].decode("utf-16-le")
        assert seg == h["original"], f"hunk.original {h['original']!r} != selection[{h['originalStart']}:{h['originalEnd']}] {seg!r}"
        rep = v["text"].encode("utf-16-le")[2 * h["replacementStart"]: 2 * h["replacementEnd"]].decode("utf-16-le")
        assert rep == h["replacement"], f"hunk.replacement {h['replacement']!r} != variation[{h['replacementStart']}:{h['replacementEnd']}] {rep!r}"


# == Lifecycle ========================================================================

@case("initialize", daemon="uninitialized")
def _(ctx: CaseContext) -> Params:
    return {"processId": 4242, "clientInfo": {"name": "conformance", "version": "1"},
            "capabilities": {"window": {"workDoneProgress": True}}}


@check("initialize")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["serverInfo"]["name"] == "parlance"
    caps = r["capabilities"]
    for m in ("initialize", "shutdown", "rpc.discover", "model/status"):
        assert m in caps["methods"], m
    assert len(set(caps["methods"])) == len(caps["methods"]), "capabilities.methods has duplicates"
    assert set(caps["framings"]) >= {"lsp", "ndjson"}
    assert caps["workDoneProgress"] is True
    for n in ("$/progress", "$/cancelRequest", "initialized", "exit"):
        assert n in caps["notifications"], n
    assert r["model"]["availability"] == "available", r["model"]


@case("shutdown", daemon="fresh")
def _(ctx: CaseContext) -> Params:
    return {}


@check("shutdown")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r == {}
    ctx.client.exit()
    assert ctx.client.wait(30) == 0, "exit after shutdown must exit with code 0"


@case("rpc.discover")
def _(ctx: CaseContext) -> Params:
    return {}


@check("rpc.discover")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r == ctx.spec, "rpc.discover must answer the same document as parlance --print-spec"


@case("ping")
def _(ctx: CaseContext) -> Params:
    return {}


@check("ping")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r == {}, r


@case("mcp/list")
def _(ctx: CaseContext) -> Params:
    return {"start": True}


@check("mcp/list")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    # The conformance daemon configures no MCP server: the list is empty, and starting none is no error.
    assert r == {"servers": []}, r


# == Model ============================================================================

@case("model/status")
def _(ctx: CaseContext) -> Params:
    ctx.client.request("model/load", {})
    return {}


@check("model/status")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["availability"] == "available" and r["state"] == "ready", r
    assert len(r["model"]["sha256"]) == 64
    assert r["engine"]["sequenceSlots"] >= 1
    assert r["languages"]["source"] in ("config", "gguf", "default") and r["languages"]["writesWell"], r["languages"]


@case("model/load")
def _(ctx: CaseContext) -> Params:
    return {}


@check("model/load")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["state"] == "ready" and r["availability"] == "available", r
    assert r["name"] == ctx.client.model["name"], (r["name"], ctx.client.model)  # type: ignore[index]
    assert r["model"]["memory"]["totalBytes"] > 0


@case("model/list")
def _(ctx: CaseContext) -> Params:
    return {}


@check("model/list")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    names = [m["name"] for m in r["models"]]
    assert r["defaultModel"] in names, r
    default = next(m for m in r["models"] if m["isDefault"])
    assert default["state"] in ("unloaded", "loading", "ready"), default
    assert default["estimatedBytes"] > 0 and r["residentBytes"] > 0


class HubServer:
    """tests/hub_server.py (a loopback Hugging Face hub and OCI registry) serving one small
    GGUF as the repository `tiny`; it ends when this process does (its stdin closes)."""

    def __init__(self) -> None:
        import os
        import subprocess
        import sys
        import tempfile
        root = tempfile.mkdtemp(prefix="parlance-conformance-hub-")
        os.makedirs(os.path.join(root, "tiny"))
        # A small valid GGUF: its header and a few tensors' worth of the default model.
        with open(support.model_path(), "rb") as src, open(os.path.join(root, "tiny", "tiny-Q4_1.gguf"), "wb") as dst:
            dst.write(src.read(4 << 20))
        script = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "hub_server.py")
        self.proc = subprocess.Popen([sys.executable, script, root, "--exit-on-eof"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline().strip())  # type: ignore[union-attr]


@case("model/pull")
def _(ctx: CaseContext) -> Params:
    if "hub" not in ctx.cache:
        ctx.cache["hub"] = HubServer()
    return {"model": f"ollama:127.0.0.1:{ctx.cache['hub'].port}/conformance/tiny:latest"}


@check("model/pull")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    import os
    assert r["downloaded"] is True and r["bytes"] == 4 << 20 and len(r["sha256"]) == 64, r
    assert os.path.isfile(r["path"]) and os.path.getsize(r["path"]) == r["bytes"], r
    # Pulled into the daemon's own data folder, and listed there at once.
    listed = ctx.client.request("model/list")
    names = {m["name"]: m for m in listed.get("available", [])}
    assert r["name"] in names and names[r["name"]]["source"] == "parlance", (r["name"], sorted(names))


# == Sessions =========================================================================

@case("session/create")
def _(ctx: CaseContext) -> Params:
    return {"instructions": "You are terse.", "options": {"temperature": 0, "maxTokens": 16, "seed": 3}, "trimming": "dropOldest"}


@check("session/create")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["sessionId"]
    t = ctx.client.request("session/transcript", {"sessionId": r["sessionId"]})
    assert t["instructions"] == p["instructions"] and t["turns"] == []


@case("session/respond")
def _(ctx: CaseContext) -> Params:
    return {"sessionId": ctx.session(), "prompt": "Name one primary colour.", "options": {"maxTokens": 12, "temperature": 0}}


@check("session/respond")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert isinstance(r["text"], str) and r["text"].strip()
    assert "content" not in r or r["content"] is None
    assert r["usage"]["generatedTokens"] <= 12
    assert r["provenance"]["sampler"]["maxTokens"] == 12
    t = ctx.client.request("session/transcript", {"sessionId": p["sessionId"]})
    assert [x["role"] for x in t["turns"]] == ["user", "assistant"]
    assert t["turns"][0]["content"] == p["prompt"] and t["turns"][1]["content"] == r["text"]


@case("session/prewarm")
def _(ctx: CaseContext) -> Params:
    return {"sessionId": ctx.session(), "promptPrefix": "Tell me about"}


@check("session/prewarm")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["usage"]["generatedTokens"] == 0


@case("session/transcript")
def _(ctx: CaseContext) -> Params:
    return {"sessionId": ctx.session(instructions="Be brief.")}


@check("session/transcript")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r == {"instructions": "Be brief.", "turns": [], "tokens": 0}


@case("session/reset")
def _(ctx: CaseContext) -> Params:
    sid = ctx.session()
    ctx.client.request("session/respond", {"sessionId": sid, "prompt": "Hi.", "options": {"maxTokens": 4}})
    return {"sessionId": sid}


@check("session/reset")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r == {}
    t = ctx.client.request("session/transcript", p)
    assert t["turns"] == [] and t["instructions"]


@case("session/close")
def _(ctx: CaseContext) -> Params:
    return {"sessionId": ctx.session()}


@check("session/close")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r == {}
    e = support.expect_error(ctx.client, "session/transcript", p)
    support.check_error(ctx.spec, e, -32004, "notFound")


# == Documents ========================================================================

@case("document/open")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.new_uri(), "text": support.SAMPLE_SRT, "format": "srt", "language": "en"}


@check("document/open")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["uri"] == p["uri"] and r["version"] == 1 and r["format"] == "srt"
    assert r["segments"] == 4
    assert r["durationSeconds"] == 17
    assert r["bytes"] == len(p["text"].encode("utf-8"))
    assert len(r["contentHash"]) == 64
    assert r["warnings"] == []
    assert r["speakers"] == ["ALICE", "BOB"], r["speakers"]
    assert r["people"] == [{"name": "ALICE", "aliases": []}, {"name": "BOB", "aliases": []}], r["people"]


@case("document/change")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.document(), "text": support.SAMPLE_VTT}


@check("document/change")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["uri"] == p["uri"] and r["version"] == 2 and r["format"] == "vtt" and r["segments"] == 2


@case("document/close")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.document()}


@check("document/close")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r == {}
    listed = [d["uri"] for d in ctx.client.request("document/list")["documents"]]
    assert p["uri"] not in listed


@case("document/list")
def _(ctx: CaseContext) -> Params:
    ctx.cache["listed"] = ctx.document()
    return {}


@check("document/list")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert ctx.cache["listed"] in [d["uri"] for d in r["documents"]]


@case("document/segments")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.document(), "limit": 3}


@check("document/segments")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["uri"] == p["uri"] and r["version"] == 1 and r["format"] == "srt"
    assert r["total"] == 4 and r["offset"] == 0 and r["nextOffset"] == 3, r
    assert [s["id"] for s in r["segments"]] == [1, 2, 3]
    assert r["segments"][0] == {"id": 1, "start": 1, "end": 4, "speaker": "ALICE",
                                "text": "Welcome back. Today we talk about the product launch."}
    assert r["text"].split("\n")[1] == r["segments"][1]["text"], "the plain text is the segments' texts, one per line"
    assert [s["name"] for s in r["speakers"]] == ["ALICE", "BOB"] and all(s["aliases"] == [] for s in r["speakers"])
    rest = ctx.client.request("document/segments", {"uri": p["uri"], "offset": 3, "includeText": False})
    assert [s["id"] for s in rest["segments"]] == [4] and "nextOffset" not in rest and "text" not in rest, rest
    assert rest["contentHash"] == r["contentHash"]
    inline = ctx.client.request("document/segments", {"text": support.SAMPLE_SRT})
    assert inline["segments"] == r["segments"] + rest["segments"] and "uri" not in inline


# == Analysis =========================================================================

@case("analysis/summarize")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.shared_document(), "temperature": 0, "seed": 1}


@check("analysis/summarize")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["cached"] is False and r["chunks"] == 1
    again = ctx.client.request("analysis/summarize", p)
    assert again["cached"] is True, "a repeated analysis is served from the cache"
    assert again["summary"] == r["summary"]


def _analysis(ctx: CaseContext) -> Params:
    return {"uri": ctx.shared_document(), "temperature": 0, "seed": 1}


def _check_analysis(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["cached"] is False, "the first analysis of a document is not cached"
    assert r["language"].startswith("en"), r["language"]
    assert r["usage"]["generatedTokens"] > 0


for _m in ("analysis/tags", "analysis/entities", "analysis/highlights", "analysis/content"):
    case(_m)(_analysis)
    check(_m)(_check_analysis)


@check("analysis/highlights")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    _check_analysis(r, p, ctx)
    # Key moments carry times of real segments of the document.
    starts = {1.0, 4.5, 9.5, 13.5}
    for km in r["keyMoments"]:
        if km.get("start") is not None:
            assert km["start"] in starts, km


@case("analysis/chapters")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.shared_document(), "temperature": 0, "seed": 1, "instructions": "focus on the launch date"}


@check("analysis/chapters")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    _check_analysis(r, p, ctx)
    chapters = r["chapters"]
    assert chapters and r["chunks"] == 1, r
    # In order, no gap or overlap, from the first segment to the last (the document has 4).
    assert chapters[0]["startSegmentId"] == 1 and chapters[-1]["endSegmentId"] == 4, chapters
    for a, b in zip(chapters, chapters[1:]):
        assert b["startSegmentId"] == a["endSegmentId"] + 1 and b["start"] == a["end"], chapters
    if r["verification"]["passed"]:
        for c in chapters:
            assert c["title"].strip() and len(c["title"].split()) <= 8, c
    # Instructions too long are refused before any model call.
    err = support.expect_error(ctx.client, "analysis/chapters", {"uri": p["uri"], "instructions": "x" * 1001})
    assert err.code == -32602 and err.data["path"] == "instructions" and err.data["keyword"] == "maxLength", err.data


@case("analysis/worthIt")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.shared_document(), "comments": ["Great episode, very clear.", "Too short for me."], "temperature": 0, "seed": 1}


@check("analysis/worthIt")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    _check_analysis(r, p, ctx)
    assert 0 <= r["score"] <= 100


@case("analysis/compare")
def _(ctx: CaseContext) -> Params:
    return {"documents": [{"uri": ctx.shared_document(), "title": "Launch"},
                          {"text": support.SAMPLE_VTT, "title": "Budget"}], "temperature": 0, "seed": 1}


@check("analysis/compare")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["cached"] is False


@case("analysis/cache/list")
def _(ctx: CaseContext) -> Params:
    return {"limit": 50}


@check("analysis/cache/list")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert isinstance(r["checksVersion"], int) and r["total"] >= len(r["entries"]) and len(r["entries"]) <= 50
    times = [e["createdAt"] for e in r["entries"]]
    assert times == sorted(times, reverse=True), "newest first"
    for e in r["entries"]:
        assert all(len(h) == 64 for h in e["contentHashes"]), e
        assert e["current"] == (e["checksVersion"] == r["checksVersion"]), e


@case("analysis/cache/clear")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.document()}


@check("analysis/cache/clear")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    # The shared daemon has analysed the same text under other uris: clearing by uri removes
    # the entries of the document's current text too, so the count is whatever they were.
    assert set(r) == {"removed"} and isinstance(r["removed"], int) and r["removed"] >= 0, r
    assert ctx.client.request("analysis/cache/list", {"uri": p["uri"]})["entries"] == []


# == Ask ==============================================================================

@case("ask/stream")
def _(ctx: CaseContext) -> Params:
    return {"uri": ctx.shared_document(), "question": "Why does the launch move to March?", "maxTokens": 96, "seed": 1}


@check("ask/stream")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["turn"] == 1 and r["sessionId"]
    texts = {1: "Welcome back. Today we talk about the product launch.",
             2: "The launch moves to March because the battery tests failed twice.",
             3: "Then marketing needs the new date by Friday.",
             4: "I will send it today, and QA starts the new battery tests on Monday."}
    for c in r["citations"]:
        assert c["segmentId"] in texts, c
        assert c["text"] == texts[c["segmentId"]], "a citation quotes its segment verbatim"
    assert set(r["retrieval"]["segmentsUsed"]) <= set(texts)
    if r["found"]:
        assert r["answer"].strip()
    # A follow-up continues the conversation.
    f = ctx.client.request("ask/stream", {"uri": p["uri"], "question": "And when do the new battery tests start?",
                                          "sessionId": r["sessionId"], "maxTokens": 64})
    assert f["turn"] == 2 and f["sessionId"] == r["sessionId"]


# == Compose ==========================================================================

@case("compose/variations")
def _(ctx: CaseContext) -> Params:
    return {"text": CaseContext.COMPOSE_TEXT, "tones": ["formal", "casual"], "audience": "team", "count": 2,
            "instructions": "Keep it short.", "maxTokens": 48, "temperature": 0.7, "seed": 5}


@check("compose/variations")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    vs = r["variations"]
    assert [v["tone"] for v in vs] == ["formal", "casual"]
    assert len({v["id"] for v in vs}) == 2
    for v in vs:
        assert v["id"].startswith(r["id"] + "."), f"variation id {v['id']} must start with the entry id {r['id']}"
        assert v["audience"] == "team"
        check_variation(v, p["text"])
    assert r["stored"] is True
    assert 1 <= len(r["analysis"]["keyPoints"]) <= 5


@case("compose/refine")
def _(ctx: CaseContext) -> Params:
    return {"variationId": ctx.composition()["variations"][0]["id"], "instruction": "shorter", "maxTokens": 32, "seed": 2}


@check("compose/refine")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    v = r["variation"]
    assert v["parentId"] == p["variationId"]
    assert v["instruction"] == p["instruction"]
    assert r["id"] == ctx.composition()["id"]
    check_variation(v, CaseContext.COMPOSE_TEXT)


@case("compose/history/list")
def _(ctx: CaseContext) -> Params:
    ctx.composition()
    return {"limit": 10, "offset": 0}


@check("compose/history/list")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["enabled"] is True
    assert ctx.composition()["id"] in [e["id"] for e in r["entries"]]
    assert r["total"] >= len(r["entries"]) >= 1


@case("compose/history/get")
def _(ctx: CaseContext) -> Params:
    return {"id": ctx.composition()["id"]}


@check("compose/history/get")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["id"] == p["id"]
    assert r["text"] == CaseContext.COMPOSE_TEXT
    assert ctx.composition()["variations"][0]["id"] in [v["id"] for v in r["variations"]]


@case("compose/history/delete")
def _(ctx: CaseContext) -> Params:
    return {"id": ctx.compose(seed=99)["id"]}


@check("compose/history/delete")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r == {}
    e = support.expect_error(ctx.client, "compose/history/get", p)
    support.check_error(ctx.spec, e, -32004, "notFound")


@case("compose/history/clear")
def _(ctx: CaseContext) -> Params:
    ctx.composition()
    return {}


@check("compose/history/clear")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["deleted"] >= 1
    ctx.cache.pop("composition", None)
    assert ctx.client.request("compose/history/list", {})["total"] == 0


# == LSP: editor buffers and rewrite code actions ======================================

LSP_TEXT = "# Notes\n\n😀 日本語 hey Sam, the review moved to Friday at 3pm. can u send the slides?\n\nbye\n"
LSP_WORDS = "hey Sam, the review moved to Friday at 3pm. can u send the slides?"


def lsp_range(text: str = LSP_TEXT, words: str = LSP_WORDS) -> Dict[str, Any]:
    """The range of ``words`` (on line 2) in UTF-16 code units, LSP's default encoding."""
    line = text.split("\n")[2]
    start = len(line[: line.index(words)].encode("utf-16-le")) // 2
    return {"start": {"line": 2, "character": start},
            "end": {"line": 2, "character": start + len(words.encode("utf-16-le")) // 2}}


def lsp_buffer(ctx: CaseContext) -> str:
    """A Markdown editor buffer opened with textDocument/didOpen; returns its uri."""
    uri = ctx.new_uri("md")
    ctx.client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": LSP_TEXT}})
    return uri


def lsp_initialize(ctx: CaseContext, capabilities: Dict[str, Any]) -> None:
    """Initializes an uninitialized daemon as an LSP editor would."""
    ctx.client.request("initialize", {"processId": None, "rootUri": None, "capabilities": capabilities,
                                      "initializationOptions": {"tones": ["formal", "casual"], "maxTokens": 48}})
    ctx.client.notify("initialized", {})


@case("textDocument/codeAction")
def _(ctx: CaseContext) -> Params:
    return {"textDocument": {"uri": lsp_buffer(ctx)}, "range": lsp_range(), "context": {"diagnostics": []}}


@check("textDocument/codeAction")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    titles = [a["title"] for a in r]
    assert titles == ["Rewrite: formal", "Rewrite: casual", "Rewrite: diplomatic", "Rewrite: empathetic", "Rewrite: direct",
                      "Shorter", "Clearer"], titles
    for a in r:
        assert a["kind"] == "refactor.rewrite" and "edit" not in a
        assert a["data"]["range"] == p["range"] and a["data"]["version"] == 1
        # This client declared no resolveSupport: each action carries its command.
        assert a["command"]["command"] == "parlance.rewrite" and a["command"]["arguments"] == [a["data"]]


@case("codeAction/resolve")
def _(ctx: CaseContext) -> Params:
    uri = lsp_buffer(ctx)
    actions = ctx.client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": lsp_range()})
    return next(a for a in actions if a["title"] == "Rewrite: casual")


@check("codeAction/resolve")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r["title"] == "Rewrite: casual" and r["data"] == p["data"]
    assert "command" not in r, "a resolved action carries its edit, not the command"
    edits = r["edit"]["changes"][p["data"]["uri"]]
    assert len(edits) == 1 and edits[0]["range"] == lsp_range() and edits[0]["newText"].strip()


@case("workspace/executeCommand", daemon="uninitialized")
def _(ctx: CaseContext) -> Params:
    lsp_initialize(ctx, {"workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}})
    uri = lsp_buffer(ctx)
    actions = ctx.client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": lsp_range()})
    return {"command": actions[0]["command"]["command"], "arguments": actions[0]["command"]["arguments"]}


@check("workspace/executeCommand")
def _(r: Any, p: Params, ctx: CaseContext) -> None:
    assert r is None, "executeCommand is answered at once, before the model runs"
    # The edit follows as a request to the client, whose params the spec describes.
    apply = ctx.client.next_server_request("workspace/applyEdit")
    m = support.client_methods_of(ctx.spec)["workspace/applyEdit"]
    support.validate(apply["params"], support.params_schema(m), "workspace/applyEdit params")
    change = apply["params"]["edit"]["documentChanges"][0]
    assert change["textDocument"] == {"uri": p["arguments"][0]["uri"], "version": 1}
    assert change["edits"][0]["range"] == lsp_range()
    answer = {"applied": True}
    support.validate(answer, support.result_schema(m), "our answer to workspace/applyEdit")
    ctx.client.send({"jsonrpc": "2.0", "id": apply["id"], "result": answer})

"""The peer: llama.cpp's own llama-server, same model file, context and threads, plain
hand-written prompts (not Parlance's), one request at a time (-np 1). Its raw results are
shaped like the daemon's, so the tasks' modules score them with the same functions (the
prompts and settings: the package docstring, column "peer")."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .common import ANALYSES, PEER_PROCS, ROOT, seed, STOPPING, TONES, log
from .formality import DaemonFormality

PEER_TEMPERATURE = {"qa": 0.2, "compose": 0.4, "lists": 0.2}  # the daemon's defaults (the eval sends none)
PEER_MAX_TOKENS = {"qa": 200, "analysis/summarize": 400, "analysis/highlights": 450}  # the daemon's defaults
PEER_TEMPLATE_MARGIN = 48  # tokens of chat template around the one user message
LANGUAGE_NAMES = {"es": "Spanish", "fr": "French", "de": "German", "it": "Italian", "pt": "Portuguese"}
AUDIENCE_WORDS = {"executive": "an executive", "peer": "a peer", "client": "a client", "team": "the team", "public": "the public"}

PEER_QA_SCHEMA = {"type": "object", "properties": {
    "answer": {"type": "string"}, "citations": {"type": "array", "items": {"type": "integer"}}, "found": {"type": "boolean"}},
    "required": ["answer", "citations", "found"]}
PEER_SUMMARY_SCHEMA = {"type": "object", "properties": {
    "summary": {"type": "string"},
    "mainTopics": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 5},
    "keyTakeaways": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 5},
    "targetAudience": {"type": "string"},
    "engagementLevel": {"type": "string", "enum": ["low", "medium", "high"]}},
    "required": ["summary", "mainTopics", "keyTakeaways", "targetAudience", "engagementLevel"]}
PEER_HIGHLIGHTS_SCHEMA = {"type": "object", "properties": {
    "keyMoments": {"type": "array", "items": {"type": "object", "properties": {
        "title": {"type": "string"}, "segmentId": {"type": "integer"}}, "required": ["title", "segmentId"]}},
    "quotes": {"type": "array", "items": {"type": "object", "properties": {
        "text": {"type": "string"}, "segmentIds": {"type": "array", "items": {"type": "integer"}}},
        "required": ["text", "segmentIds"]}},
    "actionItems": {"type": "array", "items": {"type": "string"}}},
    "required": ["keyMoments", "quotes", "actionItems"]}

PEER_QA_INSTRUCTION = ("Answer from the transcript only. Give the answer, the numbers of the segments that support it, "
                       "and say 'not mentioned in the transcript' if it does not say.")
PEER_SUMMARY_INSTRUCTION = ("Summarize this transcript: a 2-3 sentence summary, 3-5 main topics, 3-5 key takeaways "
                            "(each a full sentence), who it is for (the target audience) and how engaging it is "
                            "(low, medium or high).")
PEER_HIGHLIGHTS_INSTRUCTION = ("Pick the highlights of this transcript: the key moments (a short title and the number of "
                               "the segment each), notable quotes (the exact words and the numbers of their segments), "
                               "and the action items (each a full sentence; none if there are none).")


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def store_model_path(args: argparse.Namespace) -> Optional[str]:
    """The file behind --model (a path, or a store name the daemon lists as available)."""
    if not args.model:
        return None
    if os.path.isfile(args.model):
        return args.model
    if args.model.startswith("openai:"):
        raise SystemExit("eval: the peer column runs llama-server on a GGUF file; a remote --model has none (use --columns off,on)")
    listed = json.loads(subprocess.run([args.daemon, "models", "--json"], capture_output=True, text=True, check=True).stdout)
    for m in listed.get("available", []):
        if m["name"] == args.model:
            return m["path"]
    raise SystemExit(f"eval: --model {args.model} is not on this machine (parlance models lists what is; parlance models pull gets it)")


def peer_model_path(args: argparse.Namespace) -> str:
    for p in (args.peer_model, store_model_path(args), os.environ.get("PARLANCE_MODEL"), os.environ.get("PARLANCE_DEFAULT_MODEL")):
        if p and os.path.isfile(p):
            return p
    raise SystemExit("eval: peer column: no model file (--peer-model, $PARLANCE_MODEL or $PARLANCE_DEFAULT_MODEL; "
                     "run under eval \"$(scripts/setup.sh)\")")


def llama_server_path(args: argparse.Namespace) -> str:
    p = args.llama_server or os.environ.get("PARLANCE_LLAMA_SERVER")
    if not p:
        out = subprocess.run([os.path.join(ROOT, "scripts", "setup-llama-server.sh")], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"eval: peer column: scripts/setup-llama-server.sh failed: {out.stderr[-500:]}")
        p = out.stdout.strip().splitlines()[-1]
    if not os.path.isfile(p):
        raise SystemExit(f"eval: peer column: no llama-server at {p}")
    return p


class Peer:
    """One llama-server process."""

    def __init__(self, server: str, model: str, ctx: int, threads: int, logf: Any):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.argv = [server, "-m", model, "--host", "127.0.0.1", "--port", str(self.port), "-c", str(ctx), "-np", "1",
                     "-t", str(threads), "--no-webui", "--seed", str(seed())]
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        PEER_PROCS.append(self.proc)

    def http(self, path: str, body: Optional[Dict[str, Any]] = None, timeout: float = 600.0) -> Any:
        import urllib.request
        req = urllib.request.Request(self.base + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read().decode() or "null")

    def wait_healthy(self, timeout: float = 300.0) -> None:
        import urllib.error
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited {self.proc.returncode} before /health answered")
            if STOPPING:
                raise SystemExit(128 + STOPPING[0])
            try:
                if (self.http("/health", timeout=5) or {}).get("status") == "ok":
                    return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.5)
        raise TimeoutError(f"llama-server: no /health after {timeout:.0f} s")

    def count(self, text: str) -> int:
        return len(self.http("/tokenize", {"content": text})["tokens"])

    def chat(self, prompt: str, temperature: float, max_tokens: int, schema: Optional[Dict[str, Any]] = None,
             timeout: float = 600.0) -> Dict[str, Any]:
        body: Dict[str, Any] = {"messages": [{"role": "user", "content": prompt}], "temperature": temperature,
                                "seed": seed(), "max_tokens": max_tokens}
        if schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        return self.http("/v1/chat/completions", body, timeout=timeout)

    def stop(self) -> Optional[int]:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        if self.proc in PEER_PROCS:
            PEER_PROCS.remove(self.proc)
        return self.proc.returncode


def numbered(segs: Sequence[str], n: int) -> str:
    return "\n".join(f"[{i + 1}] {s}" for i, s in enumerate(segs[:n]))


def fit_segments(peer: Peer, doc: Dict[str, Any], prompt_of: Callable[[str], str], reserve: int, ctx: int) -> int:
    """How many segments, from the first, fit the context with the rest of the prompt and
    `reserve` tokens of answer: all of them when the whole transcript fits; otherwise the first
    N that fit (no retrieval: a user pasting the start of a long transcript)."""
    segs = doc["segments"]
    budget = ctx - reserve - PEER_TEMPLATE_MARGIN
    if peer.count(prompt_of(numbered(segs, len(segs)))) <= budget:
        return len(segs)
    if "peerLineTokens" not in doc:
        doc["peerLineTokens"] = [peer.count(f"[{i + 1}] {s}") + 1 for i, s in enumerate(segs)]
    fixed = peer.count(prompt_of(""))
    n, used = 0, fixed
    while n < len(segs) and used + doc["peerLineTokens"][n] <= budget:
        used += doc["peerLineTokens"][n]
        n += 1
    while n > 0 and peer.count(prompt_of(numbered(segs, n))) > budget:  # tokenizer merges across lines
        n -= 1
    return n


def parse_json_reply(content: str) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """The reply's JSON object; one cut off by max_tokens is closed at the last complete value
    (an unterminated string kept as far as it goes), as a user would salvage it."""
    try:
        v = json.loads(content)
        return (v, None) if isinstance(v, dict) else (None, "not an object")
    except ValueError as e:
        err = f"{type(e).__name__}: {e}"
    for end in range(len(content), 0, -1):
        if end != len(content) and content[end - 1] not in '"]}0123456789el':
            continue
        stack: List[str] = []
        in_str = esc = False
        for ch in content[:end]:
            if in_str:
                esc, in_str = (False, True) if esc else (ch == "\\", ch != '"')
            elif ch == '"':
                in_str = True
            elif ch in "{[":
                stack.append("}" if ch == "{" else "]")
            elif ch in "}]" and stack:
                stack.pop()
        head = content[:end] + ('"' if in_str and not esc else "")
        try:
            v = json.loads(head.rstrip().rstrip(",") + "".join(reversed(stack)))
        except ValueError:
            continue
        if isinstance(v, dict):
            return v, f"truncated JSON closed after {end} of {len(content)} characters ({err})"
    return None, err


def peer_usage(resp: Dict[str, Any], seconds: float) -> Dict[str, Any]:
    u = resp.get("usage") or {}
    return {"promptTokens": u.get("prompt_tokens"), "generatedTokens": u.get("completion_tokens"),
            "totalMs": round(seconds * 1000), "finishReason": ((resp.get("choices") or [{}])[0]).get("finish_reason")}


def peer_qa(peer: Peer, q: Dict[str, Any], doc: Dict[str, Any], ctx: int) -> Dict[str, Any]:
    def prompt_of(lines: str) -> str:
        return f"Transcript:\n{lines}\n\nQuestion: {q['question']}\n\n{PEER_QA_INSTRUCTION}"
    n = fit_segments(peer, doc, prompt_of, PEER_MAX_TOKENS["qa"], ctx)
    t0 = time.monotonic()
    resp = peer.chat(prompt_of(numbered(doc["segments"], n)), PEER_TEMPERATURE["qa"], PEER_MAX_TOKENS["qa"], PEER_QA_SCHEMA)
    content = resp["choices"][0]["message"].get("content") or ""
    obj, err = parse_json_reply(content)
    segs = doc["segments"]
    res: Dict[str, Any] = {"usage": peer_usage(resp, time.monotonic() - t0),
                           "retrieval": {"wholeDocument": n == len(segs), "segmentsShown": n, "segmentsTotal": len(segs)},
                           "raw": content}
    if obj is None:
        res.update(answer=content, found=True, citations=[], jsonError=err)
    else:
        ids = [c for c in obj.get("citations") or [] if isinstance(c, int) and not isinstance(c, bool)]
        res.update(answer=str(obj.get("answer", "")), found=obj.get("found") if isinstance(obj.get("found"), bool) else True,
                   citations=[{"segmentId": c, "text": segs[c - 1] if 0 < c <= len(segs) else ""} for c in ids])
    return res


def peer_compose(peer: Peer, c: Dict[str, Any], tone: str, formality: DaemonFormality) -> Dict[str, Any]:
    aud = c.get("audience")
    prompt = f"Rewrite the following text in a {tone} tone" + (f" for {AUDIENCE_WORDS.get(aud, aud)}" if aud else "") + \
             ". Keep every fact, name and number. Reply with the rewrite only."
    lang = LANGUAGE_NAMES.get(c.get("language") or "")
    if lang:
        prompt += f" Write it in {lang}."
    prompt += "\n\n" + c["text"]
    max_tokens = min(1024, max(64, peer.count(c["text"]) * 3 // 2 + 32))  # the daemon's compose budget
    t0 = time.monotonic()
    resp = peer.chat(prompt, PEER_TEMPERATURE["compose"], max_tokens)
    text = (resp["choices"][0]["message"].get("content") or "").strip()
    return {"tone": tone, "audience": aud, "text": text, "formalityScore": formality(text, c.get("language") or "en"),
            "usage": peer_usage(resp, time.monotonic() - t0)}


def peer_list(peer: Peer, method: str, doc: Dict[str, Any], ctx: int) -> Dict[str, Any]:
    instruction = PEER_SUMMARY_INSTRUCTION if method == "analysis/summarize" else PEER_HIGHLIGHTS_INSTRUCTION
    schema = PEER_SUMMARY_SCHEMA if method == "analysis/summarize" else PEER_HIGHLIGHTS_SCHEMA

    def prompt_of(lines: str) -> str:
        return f"{instruction}\n\nTranscript:\n{lines}"
    n = fit_segments(peer, doc, prompt_of, PEER_MAX_TOKENS[method], ctx)
    t0 = time.monotonic()
    resp = peer.chat(prompt_of(numbered(doc["segments"], n)), PEER_TEMPERATURE["lists"], PEER_MAX_TOKENS[method], schema)
    content = resp["choices"][0]["message"].get("content") or ""
    obj, err = parse_json_reply(content)
    res: Dict[str, Any] = dict(obj or {})
    res.update(usage=peer_usage(resp, time.monotonic() - t0), raw=content,
               retrieval={"wholeDocument": n == len(doc["segments"]), "segmentsShown": n, "segmentsTotal": len(doc["segments"])})
    if err:
        res["jsonError"] = err
    strs = lambda xs: [x for x in xs if isinstance(x, str)] if isinstance(xs, list) else []  # noqa: E731
    objs = lambda xs: [x for x in xs if isinstance(x, dict)] if isinstance(xs, list) else []  # noqa: E731
    if method == "analysis/summarize":
        res["mainTopics"], res["keyTakeaways"] = strs(res.get("mainTopics")), strs(res.get("keyTakeaways"))
        res["targetAudience"] = res.get("targetAudience") if isinstance(res.get("targetAudience"), str) else ""
    else:
        res["keyMoments"], res["quotes"] = objs(res.get("keyMoments")), objs(res.get("quotes"))
        res["actionItems"] = strs(res.get("actionItems"))
    return res


def peer_settings(server: str, model: str, ctx: int, threads: int) -> Dict[str, Any]:
    """The peer's settings and prompts, as the details record them."""
    return {"server": server, "model": model, "contextSize": ctx, "threads": threads, "parallel": 1,
            "requestsInFlight": 1, "temperature": PEER_TEMPERATURE, "seed": seed(),
            "maxTokens": {**PEER_MAX_TOKENS, "compose": "min(1024, max(64, 1.5 x selection tokens + 32))"},
            "prompts": {"qa": PEER_QA_INSTRUCTION, "summarize": PEER_SUMMARY_INSTRUCTION,
                        "highlights": PEER_HIGHLIGHTS_INSTRUCTION,
                        "compose": "Rewrite the following text in a <tone> tone for <audience>. Keep every "
                                   "fact, name and number. Reply with the rewrite only. [Write it in "
                                   "<language>.]"}}


def send_all(peer: Peer, data: Dict[str, Any], ctx: int, call: Callable[..., Dict[str, Any]],
             out: Dict[str, Any], formality: DaemonFormality) -> None:
    """Every item through the peer, one request at a time, in the data set's order."""
    for q in data["qa"]:
        doc = data["docs"][q["docKey"]]
        out["qa"].append({"item": q, **call("qa", "ask/stream", q["id"], lambda q=q, doc=doc: peer_qa(peer, q, doc, ctx))})
    for c in data["compose"]:
        rec = call("compose", "compose/variations", c["id"],
                   lambda c=c: {"variations": [peer_compose(peer, c, t, formality) for t in TONES]})
        out["compose"].append({"item": c, **rec})
    for key in data["lists"]:
        for m in ANALYSES:
            rec = call("lists", m, f"{m.split('/')[1]} {key}",
                       lambda key=key, m=m: peer_list(peer, m, data["docs"][key], ctx))
            out["lists"].append({"doc": key, "method": m, **rec})


def run_peer(args: argparse.Namespace, data: Dict[str, Any], defaults: Dict[str, int]) -> Dict[str, Any]:
    """The peer column: the same labeled set through llama-server, raw results shaped like the
    daemon's (answer/found/citations; variations with formalityScore; the list fields) so the
    same scoring functions apply."""
    name = "peer"
    ctx, threads = defaults["contextSize"], defaults["threads"]
    server, model = llama_server_path(args), peer_model_path(args)
    tmp = tempfile.mkdtemp(prefix="parlance-eval-peer-")
    logpath = os.path.join(tmp, "llama-server.log")
    logf = open(logpath, "w")
    out: Dict[str, Any] = {"column": name, "verify": None, "qa": [], "compose": [], "lists": [],
                           "peer": peer_settings(server, model, ctx, threads)}
    errors: List[Dict[str, Any]] = []
    fatal: List[str] = []
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    peer = Peer(server, model, ctx, threads, logf)
    formality = DaemonFormality(args.daemon)
    out["peer"]["argv"] = peer.argv
    total = len(data["qa"]) + len(data["compose"]) + 2 * len(data["lists"])
    done = [0]
    fam_t: Dict[str, List[float]] = {}

    def call(family: str, method: str, label: str, fn: Callable[[], Any]) -> Dict[str, Any]:
        s = time.monotonic()
        rec: Dict[str, Any] = {}
        if fatal:
            rec["error"] = {"code": None, "name": "skipped", "message": "llama-server failed earlier in this column"}
        else:
            try:
                rec["result"] = fn()
            except Exception as e:  # noqa: BLE001 - report, never hide
                if STOPPING:
                    raise SystemExit(128 + STOPPING[0])
                rec["error"] = {"code": getattr(e, "code", None), "name": type(e).__name__, "message": str(e)[:500]}
                fatal.append(f"{method} {label}: {type(e).__name__}: {e}")
        if "error" in rec:
            errors.append({"family": family, "method": method, "item": label, "fatal": True, **rec["error"]})
        e = time.monotonic()
        rec["seconds"] = round(e - s, 3)
        span = fam_t.setdefault(family, [s, e])
        span[0], span[1] = min(span[0], s), max(span[1], e)
        done[0] += 1
        status = "ok" if "result" in rec else f"error {rec['error']['name']}"
        log(f"[{name}] {done[0]}/{total} {family} {label}: {status} ({rec['seconds']:.1f} s)")
        return rec

    try:
        peer.wait_healthy()
        out["serverVersion"] = "llama-server " + str((peer.http("/props") or {}).get("build_info", "?"))
        send_all(peer, data, ctx, call, out, formality)
        out["familySpanSeconds"] = {k: round(v[1] - v[0], 1) for k, v in fam_t.items()}
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fatal.append(f"{type(e).__name__}: {e}")
    finally:
        code = peer.stop()
        formality.close()
        logf.close()
        if STOPPING:
            shutil.rmtree(tmp, ignore_errors=True)
    if STOPPING:
        raise SystemExit(128 + STOPPING[0])
    out["wallSeconds"] = round(time.monotonic() - t0, 1)
    out["loadAverage"] = {"start": round(load0, 2), "end": round(os.getloadavg()[0], 2)}
    out["exitCode"] = code
    if fatal:
        with open(logpath, errors="replace") as f:
            out["daemonLogTail"] = f.read()[-3000:]
        log(f"[{name}] llama-server log, last lines:\n{out['daemonLogTail']}")
    shutil.rmtree(tmp, ignore_errors=True)
    out["errors"], out["fatal"], out["warnings"] = errors, fatal, []
    return out

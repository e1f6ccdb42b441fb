#!/usr/bin/env python3
"""The three real transcripts of ../shared/realworld/ through the daemon, as a user reads them.

    python3 eval/realworld.py                          # the default model, every file
    python3 eval/realworld.py --model qwen-1.5b        # make eval's short names, or a GGUF path
    python3 eval/realworld.py --model qwen-0.5b --files w3c-we-count.vtt --json out.json

For each file, one daemon (its own cache, one thread: another llama process may share the
machine): document/open (segments, tokens, people), analysis/summarize, analysis/chapters, three
questions on ask/stream, and a formal and a casual rewrite of a passage the file says. It
prints what a person reads, with timings and each verification's verdict, so a person can judge
the results; nothing here scores them. The files are read where they are and never copied.
The questions and passages are this script's own, chosen for what each file says.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "protocol", "clients", "python"))
sys.path.insert(0, os.path.join(ROOT, "eval"))
from parlance_client import ParlanceClient  # noqa: E402
from parlance_eval.cli import MODEL_NAMES, model_path  # noqa: E402

REALWORLD = os.path.normpath(os.path.join(ROOT, "..", "shared", "realworld"))

# file: (questions, a passage to rewrite: the speaker's words, as a user would select them)
JOBS = {
    "w3c-we-count.vtt": (
        ["What are the three main sources of discrimination against minority groups that Jutta lists?",
         "What did Pareto observe?", "What happened when Jutta retested the more mature models?"],
        "I tested them with an anomalous scenario, a friend of mine that propels her wheelchair backwards through an "
        "intersection, effectively but very erratically. All the models chose to proceed through the intersection and "
        "effectively run my friend over."),
    "virtual-coffee-s8e5.srt": (
        ["Where is Reda from?", "What did Reda do before he switched to web development?", "What is Bekah's third space?"],
        "He actually started his career in marine mechanics, which is pretty interesting. And during the pandemic, "
        "decided to switch tracks into, you know, web development and front-end development in general."),
    "kalanick-autocaption.vtt": (
        ["What was Scour?", "Why was Scour sued?", "How much were the copyright holders suing for?"],
        "we forced the copyright guys to go after our customers, and then they had to go sue everybody, and that made "
        "the whole thing a mess for them"),
}


def clock(seconds) -> str:
    if seconds is None:
        return "--:--"
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"


def timed(client: ParlanceClient, method: str, params: dict):
    t0 = time.monotonic()
    result = client.start(method, params).result(7200)
    return result, round(time.monotonic() - t0, 1)


def verdict(v: dict) -> str:
    return f"passed {v['passed']}, attempts {v.get('attempts')}, fallback {v.get('fallback')}"


def issues(result_or_variation: dict, out) -> None:
    for i in result_or_variation["verification"]["issues"]:
        print(f"      issue: {i['message']}", file=out)


def run_file(c: ParlanceClient, name: str, out) -> dict:
    questions, passage = JOBS[name]
    with open(os.path.join(REALWORLD, name), encoding="utf-8") as f:
        text = f.read()
    uri = "file:///realworld/" + name
    r: dict = {}
    t0 = time.monotonic()
    d = c.request("document/open", {"uri": uri, "text": text})
    r["open"] = {k: d.get(k) for k in ("format", "segments", "tokens", "speakers", "people", "durationSeconds")}
    r["openSeconds"] = round(time.monotonic() - t0, 1)
    print(f"== {name}\n  open ({r['openSeconds']} s): {json.dumps(r['open'], ensure_ascii=False)}", file=out)
    s, r["summarySeconds"] = timed(c, "analysis/summarize", {"uri": uri})
    r["summary"] = s
    print(f"  summary ({r['summarySeconds']} s; {verdict(s['verification'])}):\n    {s['summary']}", file=out)
    print(f"    topics: {s['mainTopics']}\n    takeaways: {s['keyTakeaways']}\n    audience: {s['targetAudience']}", file=out)
    issues(s, out)
    ch, r["chaptersSeconds"] = timed(c, "analysis/chapters", {"uri": uri})
    r["chapters"] = ch
    print(f"  chapters ({r['chaptersSeconds']} s; {verdict(ch['verification'])}):", file=out)
    for x in ch["chapters"]:
        print(f"    {clock(x.get('start'))} {x['title']}", file=out)
    issues(ch, out)
    r["answers"] = []
    for q in questions:
        a, secs = timed(c, "ask/stream", {"uri": uri, "question": q})
        r["answers"].append({"question": q, "seconds": secs, "result": a})
        cites = [x["segmentId"] for x in a["citations"]]
        print(f"  Q: {q} ({secs} s)\n  A: {a['answer']}\n     [found {a['found']}, cites {cites}, {verdict(a['verification'])}]", file=out)
    v, r["rewriteSeconds"] = timed(c, "compose/variations", {"text": passage, "tones": ["formal", "casual"]})
    r["rewrite"] = v
    print(f"  rewrite of: {passage}", file=out)
    for var in v["variations"]:
        print(f"  {var['tone']} ({r['rewriteSeconds']} s for both; {verdict(var['verification'])}): {var['text']}", file=out)
        issues(var, out)
    out.flush()
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="a short name (" + ", ".join(MODEL_NAMES) + ") or anything --model takes; default: the daemon's")
    ap.add_argument("--files", default=",".join(JOBS), help="comma-separated names in " + REALWORLD)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", help="also write every result to this file")
    args = ap.parse_args()
    if not os.path.isdir(REALWORLD):
        print(f"realworld: {REALWORLD} is missing (the real transcripts live beside the repository, never in it)", file=sys.stderr)
        return 2
    files = [f.strip() for f in args.files.split(",") if f.strip()]
    unknown = [f for f in files if f not in JOBS]
    if unknown:
        print(f"realworld: no questions for {unknown}; known: {list(JOBS)}", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="parlance-realworld-")
    daemon = ["--threads", str(args.threads), "--cache-dir", os.path.join(tmp, "c"), "--data-dir", os.path.join(tmp, "d"), "--no-history"]
    if args.model:
        daemon = ["--model", model_path(args.model) if args.model in MODEL_NAMES else args.model] + daemon
    results = {"model": args.model or "default", "files": {}}
    with ParlanceClient(os.path.join(ROOT, ".build", "release", "parlance"), daemon,
                        stderr=open(os.path.join(tmp, "daemon.log"), "w"), default_timeout=7200) as c:
        c.initialize(client_name="eval/realworld.py")
        status = c.request("model/status", {})
        print(f"model: {status.get('name') or args.model or 'default'} (daemon log: {tmp}/daemon.log)")
        for name in files:
            results["files"][name] = run_file(c, name, sys.stdout)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The trade between models on this machine: what a newcomer waits for with each.

    python3 eval/model_trade.py                      # the three eval models (make eval's short names)
    python3 eval/model_trade.py --models qwen-0.5b   # one

For each model, one fresh daemon (its own cache), one model at a time:
- the demo: analysis/summarize of Samples/podcast-sample.srt, streamed: first token, total,
  and whether verification kept the model's summary;
- a rewrite's first token: compose/variations, one tone, of a 60-word selection (what an
  editor's rewrite action asks for);
- an ask session: document/open, then four questions one after another on one session:
  the wall time of each, and whether it found an answer that cites a segment.
Prints a table (and --json the figures). The quality figures are make eval's.
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

SAMPLE = os.path.join(ROOT, "Samples", "podcast-sample.srt")
SELECTION = ("hey all, quick update on the migration. we moved the orders table last night and it took about four hours, "
             "which is longer than planned because the index rebuild stalled twice. nothing was lost. Dana is checking the "
             "reports this morning and we'll switch traffic over on Thursday if they look right.")
QUESTIONS = ["Where does Priya work?", "How many tokens per second does a three-billion-parameter model give on a MacBook Air?",
             "What did Fernhill change to improve battery life?", "What is the name of the podcast?"]


def first_delta(pending, t0: float) -> float:
    for v in list(pending.progress):
        if v.get("delta"):
            return v["_t"] - t0
    return float("nan")


def timed(client: ParlanceClient, method: str, params: dict, timeout: float = 1200):
    t0 = time.monotonic()
    p = client.start(method, params, on_progress=lambda v: v.__setitem__("_t", time.monotonic()))
    result = p.result(timeout)
    return result, time.monotonic() - t0, first_delta(p, t0)


def measure(name: str, threads: int) -> dict:
    path = model_path(name) if name in MODEL_NAMES else name
    tmp = tempfile.mkdtemp(prefix="parlance-trade-")
    args = ["--model", path, "--cache-dir", os.path.join(tmp, "c"), "--data-dir", os.path.join(tmp, "d"), "--no-history"]
    if threads:
        args += ["--threads", str(threads)]
    out: dict = {"model": name}
    with ParlanceClient(os.path.join(ROOT, ".build", "release", "parlance"), args, stderr=open(os.path.join(tmp, "log"), "w")) as c:
        c.initialize(client_name="eval/model_trade.py")
        t0 = time.monotonic()
        c.request("model/load", {})
        out["loadSeconds"] = round(time.monotonic() - t0, 1)
        text = open(SAMPLE, encoding="utf-8").read()
        s, total, first = timed(c, "analysis/summarize", {"text": text})
        v = s["verification"]
        out["demo"] = {"firstTokenSeconds": round(first, 1), "totalSeconds": round(total, 1), "passed": v["passed"],
                       "attempts": v["attempts"], "fallback": v.get("fallback"), "summary": s["summary"]}
        r, total, first = timed(c, "compose/variations", {"text": SELECTION, "tones": ["formal"]})
        out["rewrite"] = {"firstTokenSeconds": round(first, 1), "totalSeconds": round(total, 1),
                          "text": r["variations"][0]["text"], "passed": r["variations"][0]["verification"]["passed"]}
        c.request("document/open", {"uri": "file:///trade/podcast-sample.srt", "text": text})
        session = None
        answers = []
        t0 = time.monotonic()
        for q in QUESTIONS:
            params = {"uri": "file:///trade/podcast-sample.srt", "question": q}
            if session:
                params["sessionId"] = session
            a, total, first = timed(c, "ask/stream", params)
            session = a["sessionId"]
            answers.append({"question": q, "seconds": round(total, 1), "firstTokenSeconds": round(first, 1), "found": a["found"],
                            "cites": bool(a["citations"]), "answer": a["answer"]})
        out["ask"] = {"totalSeconds": round(time.monotonic() - t0, 1), "answers": answers}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="smollm2-135m,qwen-0.5b,qwen-1.5b")
    ap.add_argument("--threads", type=int, default=0, help="--threads for the daemon (default: its own)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [measure(m.strip(), args.threads) for m in args.models.split(",") if m.strip()]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    print(f"{'model':<14}{'load s':>7}{'demo 1st':>9}{'demo all':>9}{'kept':>6}{'rewrite 1st':>12}{'ask 4 q s':>10}{'found+cited':>12}")
    for r in rows:
        d, w, a = r["demo"], r["rewrite"], r["ask"]
        kept = "yes" if d["passed"] and d["fallback"] != "extractive" else "no"
        cited = sum(1 for x in a["answers"] if x["found"] and x["cites"])
        print(f"{r['model']:<14}{r['loadSeconds']:>7}{d['firstTokenSeconds']:>9}{d['totalSeconds']:>9}{kept:>6}{w['firstTokenSeconds']:>12}"
              f"{a['totalSeconds']:>10}{cited:>9}/{len(a['answers'])}")
    for r in rows:
        print(f"\n{r['model']}: summary: {r['demo']['summary']}\n  rewrite: {r['rewrite']['text']}")
        for x in r["ask"]["answers"]:
            print(f"  Q: {x['question']}\n  A: {x['answer']} ({x['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

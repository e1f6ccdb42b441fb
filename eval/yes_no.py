#!/usr/bin/env python3
"""The model's own judgement of answerability: P(yes) from its logits, and its AUC per model.

    python3 eval/yes_no.py --model qwen-0.5b          # make eval's short names, or a GGUF path
    python3 eval/yes_no.py --model smollm2-135m --part all --json out.json

For every question of eval/data/qa.json (the tuning part by default: what a fit may use), the
model reads the transcript (all of it when it fits the context, else the first segments that
fit, as the peer column does), the question, and "Does the transcript answer this question?
Answer yes or no." Its first reply token's log-probabilities (llama-server's n_probs, same
model file, one thread) give P(yes) = p(yes) / (p(yes) + p(no)), any casing. The transcript
comes first, so llama-server's prompt cache evaluates each document once for all its
questions. Prints the AUC of P(yes) against the labels (answerable or not), the rates at 0.5,
and the questions it judged worst; a feature worth adding to the answerability model
(Sources/ParlanceFeatures/Verify/Answerability.swift) has an AUC well above 0.5.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "eval"))
from parlance_eval.cli import MODEL_NAMES, model_path  # noqa: E402
from parlance_eval.data import load_data  # noqa: E402
from parlance_eval.peer import Peer, fit_segments, llama_server_path, numbered  # noqa: E402

QUESTION = "Does the transcript answer this question? Answer yes or no."
YES, NO = {"yes"}, {"no"}


def auc(ps, ys) -> float:
    pos = [p for p, y in zip(ps, ys) if y]
    neg = [p for p, y in zip(ps, ys) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def p_yes(peer: Peer, prompt: str) -> float:
    """P(yes) among yes and no, from the first reply token's top log-probabilities."""
    body = {"messages": [{"role": "user", "content": prompt}], "max_tokens": 1, "temperature": 0,
            "logprobs": True, "top_logprobs": 20, "cache_prompt": True}
    resp = peer.http("/v1/chat/completions", body)
    top = resp["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    yes = sum(math.exp(t["logprob"]) for t in top if t["token"].strip().lower().strip(".") in YES)
    no = sum(math.exp(t["logprob"]) for t in top if t["token"].strip().lower().strip(".") in NO)
    return 0.5 if yes + no == 0 else yes / (yes + no)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m", help="a short name (" + ", ".join(MODEL_NAMES) + ") or a GGUF path")
    ap.add_argument("--part", choices=["tuning", "heldOut", "all"], default="tuning")
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--llama-server", default=None)
    ap.add_argument("--json", help="write every question's P(yes) here")
    args = ap.parse_args()
    model = model_path(args.model) if args.model in MODEL_NAMES else args.model
    data = load_data(argparse.Namespace(data=os.path.join(ROOT, "eval", "data"), limit=None, ids=None, all=True, only=None))
    qa = [q for q in data["qa"] if args.part == "all" or bool(q.get("heldOut")) == (args.part == "heldOut")]
    log = open(os.path.join(tempfile.mkdtemp(prefix="parlance-yes-no-"), "llama-server.log"), "w")
    peer = Peer(llama_server_path(args), model, args.ctx, args.threads, log)
    rows = []
    t0 = time.monotonic()
    try:
        peer.wait_healthy()
        for q in qa:
            doc = data["docs"][q["docKey"]]

            def prompt_of(transcript: str, q=q) -> str:
                return f"Transcript:\n{transcript}\n\nQuestion: {q['question']}\n\n{QUESTION}"

            n = fit_segments(peer, doc, prompt_of, 8, args.ctx)
            p = p_yes(peer, prompt_of(numbered(doc["segments"], n)))
            rows.append({"id": q["id"], "answerable": q["answerable"], "pYes": round(p, 4), "segmentsShown": n,
                         "segments": len(doc["segments"]), "question": q["question"]})
            print(f"{len(rows)}/{len(qa)} {q['id']}: P(yes) {p:.3f} ({'answerable' if q['answerable'] else 'unanswerable'})",
                  file=sys.stderr)
    finally:
        peer.stop()
    ps, ys = [r["pYes"] for r in rows], [r["answerable"] for r in rows]
    a = auc(ps, ys)
    unans = [r for r in rows if not r["answerable"]]
    ans = [r for r in rows if r["answerable"]]
    print(f"model: {os.path.basename(model)}; part: {args.part}; {len(rows)} questions "
          f"({len(ans)} answerable, {len(unans)} not); {time.monotonic() - t0:.0f} s")
    print(f"AUC of P(yes): {a:.3f}")
    if unans and ans:
        print(f"at P(yes) < 0.5: unanswerable judged no {sum(r['pYes'] < 0.5 for r in unans) / len(unans):.3f}, "
              f"answerable judged no {sum(r['pYes'] < 0.5 for r in ans) / len(ans):.3f}")
    worst = sorted(rows, key=lambda r: r["pYes"] if r["answerable"] else 1 - r["pYes"])[:5]
    for r in worst:
        print(f"  worst: {r['id']} ({'answerable' if r['answerable'] else 'unanswerable'}) P(yes) {r['pYes']:.3f}: {r['question']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"model": os.path.basename(model), "part": args.part, "auc": round(a, 3), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Fit the answerability model of ask/stream (Sources/ParlanceFeatures/Verify/Answerability.swift).

    python3 eval/fit_abstention.py            # collect features through the daemon, fit, print
    python3 eval/fit_abstention.py --write    # ... and write the profile into eval/fitted/answerability.json
    python3 eval/fit_abstention.py --embed    # only embed eval/fitted/answerability.json in the Swift source
    python3 eval/fit_abstention.py --reuse    # fit again from the last collection (eval/last-abstention.json)

Every question of eval/data/qa.json that is NOT held out (`heldOut`) is asked through the real
daemon (verify on); the result's `answerability` object holds the features the daemon reads.
A logistic regression (L2, Newton's method, no packages) is fitted to "the document answers the
question" (the label `answerable`), on the features chosen forward by cross-validated log loss
(the others get weight 0). The threshold is the one that declares the most unanswerable
questions "not found" while declaring at most 5% of answerable ones so, issue 41's target (ties:
nearest 0.5), judged on 10-fold cross-validated probabilities (each question scored by a fit
that did not see it), not on the fit's own.
Prints the weights (in the order of the Swift Answerability.Weights), the threshold, and on the tuning data the AUC,
the expected calibration error (10 bins) and the Brier score. The held-out part is never read.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "protocol", "clients", "python"))
from parlance_client import ParlanceClient, RPCError  # noqa: E402

FITTED = os.path.join(ROOT, "eval", "fitted", "answerability.json")
SWIFT = os.path.join(ROOT, "Sources", "ParlanceFeatures", "Verify", "AnswerabilityFitted.swift")
OUT = os.path.join(ROOT, "eval", "last-abstention.json")
# The fields of Answerability.Weights after its bias, in order (Swift writes them in this order too).
FEATURES = ["questionCoverage", "focusCoverage", "typedCoverage", "typeMissing", "modelPassed", "modelSaysNotFound", "answerSupport",
            "relationMissing", "sentenceCoverage"]
MAX_WRONG_NOT_FOUND = 0.05


def collect(args) -> list:
    data = os.path.join(ROOT, "eval", "data")
    items = [q for q in json.load(open(os.path.join(data, "qa.json"))) if not q.get("heldOut")]
    tmp = tempfile.mkdtemp(prefix="parlance-fit-")
    model = ["--model", args.model] if args.model else []
    client = ParlanceClient(args.binary, ["--cache-dir", os.path.join(tmp, "c"), "--data-dir", os.path.join(tmp, "d"), "--no-history", *model],
                            stderr=open(os.path.join(tmp, "daemon.log"), "w"), default_timeout=600,
                            # The model is asked every question and its answer read, whatever the
                            # current profile would decide: the fit needs the model's features too.
                            env=dict(os.environ, PARLANCE_DISABLE_CHECKS="answer.answerability"))
    client.initialize(client_name="eval/fit_abstention.py")
    texts = {}

    def one(q):
        if q["doc"] not in texts:
            texts[q["doc"]] = open(os.path.join(data, "transcripts", q["doc"]), encoding="utf-8").read()
        try:
            r = client.start("ask/stream", {"text": texts[q["doc"]], "question": q["question"], "verify": True, "seed": 42}).result(600)
        except (RPCError, TimeoutError) as e:
            return {"id": q["id"], "answerable": q["answerable"], "error": str(e)}
        return {"id": q["id"], "answerable": q["answerable"], "found": r["found"], "answer": r["answer"],
                "answerability": r.get("answerability")}

    rows = []
    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
        for i, row in enumerate(pool.map(one, items)):
            rows.append(row)
            sys.stderr.write(f"\r{i + 1}/{len(items)}")
    sys.stderr.write("\n")
    client.shutdown()
    client.exit()
    json.dump(rows, open(OUT, "w"), indent=1)
    return rows


def vec(a: dict) -> list:
    return [1.0] + [float(a.get(k) or 0) for k in FEATURES]


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-30, min(30, z))))


def fit(X, y, l2=0.01, steps=30):
    """Weights minimising the mean log loss plus l2/2 times the squared weights (not the bias),
    by Newton's method (the loss is convex: a few steps converge)."""
    k, n = len(X[0]), len(X)
    w = [0.0] * k
    for _ in range(steps):
        p = [sigmoid(sum(a * b for a, b in zip(w, x))) for x in X]
        g = [sum((pi - t) * x[j] for pi, t, x in zip(p, y, X)) / n + (l2 * w[j] if j else 0) for j in range(k)]
        h = [[sum(pi * (1 - pi) * x[i] * x[j] for pi, x in zip(p, X)) / n + (l2 if i == j and i else 0) for j in range(k)] for i in range(k)]
        step = solve(h, g)
        w = [a - b for a, b in zip(w, step)]
        if max(abs(v) for v in step) < 1e-9:
            break
    return w


def solve(a, b):
    """x with a x = b (Gaussian elimination, partial pivoting; a is positive definite here)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        r = max(range(c, n), key=lambda i: abs(m[i][c]))
        m[c], m[r] = m[r], m[c]
        for i in range(c + 1, n):
            f = m[i][c] / m[c][c]
            for j in range(c, n + 1):
                m[i][j] -= f * m[c][j]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


def log_loss(ps, ys) -> float:
    return -sum(math.log(max(1e-12, p if t else 1 - p)) for p, t in zip(ps, ys)) / len(ys)


def select_features(X, y) -> list:
    """The features kept, chosen forward: from none, add the one that lowers the cross-validated
    log loss most, until none lowers it. With ten collinear features on 80 questions the fit of
    all of them scored its own tuning questions far better than questions it had not seen."""
    kept: list = []
    best = log_loss(cross_validated([[x[0]] for x in X], y), y)
    while True:
        scores = []
        for f in range(1, len(X[0])):
            if f not in kept:
                cols = [0] + sorted(kept + [f])
                scores.append((log_loss(cross_validated([[x[c] for c in cols] for x in X], y), y), f))
        if not scores or min(scores)[0] >= best:
            return sorted(kept)
        best, f = min(scores)
        kept.append(f)


def auc(ps, ys):
    pos = [p for p, t in zip(ps, ys) if t]
    neg = [p for p, t in zip(ps, ys) if not t]
    if not pos or not neg:
        return None
    return sum(1 if a > b else 0.5 if a == b else 0 for a in pos for b in neg) / (len(pos) * len(neg))


def ece(ps, ys, bins=10):
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        idx = [i for i, p in enumerate(ps) if lo <= p < hi or (b == bins - 1 and p == 1.0)]
        if idx:
            total += len(idx) / len(ps) * abs(sum(ps[i] for i in idx) / len(idx) - sum(ys[i] for i in idx) / len(idx))
    return total


FOLDS = 10


def cross_validated(X, y) -> list:
    """Each row's probability from a fit on the other folds (row i is in fold i % FOLDS)."""
    out = [0.0] * len(X)
    for f in range(FOLDS):
        train = [i for i in range(len(X)) if i % FOLDS != f]
        w = fit([X[i] for i in train], [y[i] for i in train])
        for i in range(f, len(X), FOLDS):
            out[i] = sigmoid(sum(a * b for a, b in zip(w, X[i])))
    return out


def rates(ps, y, t):
    """(unanswerable declared not found, answerable declared not found) at threshold t."""
    wrong = sum(1 for p, a in zip(ps, y) if a and p < t) / max(1, sum(y))
    caught = sum(1 for p, a in zip(ps, y) if not a and p < t) / max(1, len(y) - sum(y))
    return caught, wrong


def choose_threshold(ps, y):
    """The threshold that declares most unanswerable questions "not found" while declaring at
    most MAX_WRONG_NOT_FOUND of the answerable ones so (ties: nearest 0.5)."""
    best = None
    for k in range(5, 96):
        t = k / 100
        caught, wrong = rates(ps, y, t)
        if wrong <= MAX_WRONG_NOT_FOUND:
            key = (caught, -abs(t - 0.5))
            if best is None or key > best[0]:
                best = (key, t, caught, wrong)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true",
                    help="write the profile of --binary's model (by its SHA-256) into eval/fitted/answerability.json and embed it")
    ap.add_argument("--embed", action="store_true", help="only embed eval/fitted/answerability.json in AnswerabilityFitted.swift")
    ap.add_argument("--model", help="the model to fit for (a GGUF path; default: the daemon's default model)")
    ap.add_argument("--name", help="the profile's name (default: the model file's name)")
    ap.add_argument("--reuse", action="store_true", help=f"fit from {os.path.relpath(OUT, ROOT)} instead of asking the daemon")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--binary", default=os.environ.get("PARLANCE_BIN") or os.path.join(ROOT, ".build", "release", "parlance"))
    args = ap.parse_args()
    if args.embed:
        embed()
        return 0
    rows = json.load(open(OUT)) if args.reuse else collect(args)
    rows = [r for r in rows if r.get("answerability")]
    full = [vec(r["answerability"]) for r in rows]
    y = [1.0 if r["answerable"] else 0.0 for r in rows]
    every = cross_validated(full, y)
    cols = [0] + select_features(full, y)
    X = [[x[c] for c in cols] for x in full]
    w = [0.0] * len(full[0])
    for c, v in zip(cols, fit(X, y)):
        w[c] = v
    ps = [sigmoid(sum(a * b for a, b in zip(w, x))) for x in full]
    # The threshold is chosen on out-of-sample probabilities: each question's from a fit
    # without its fold. Chosen on the fit's own probabilities it sat where few answerable
    # questions of the tuning part happened to fall, and missed the bound on questions the
    # fit had not seen.
    held = cross_validated(X, y)
    _, threshold, caught, wrong = choose_threshold(held, y)
    in_sample = rates(ps, y, threshold)
    print(json.dumps({
        "questions": len(rows), "answerable": int(sum(y)), "unanswerable": int(len(y) - sum(y)),
        "weights": [round(v, 3) for v in w], "order": ["bias"] + FEATURES, "threshold": threshold,
        "selected": [FEATURES[c - 1] for c in cols[1:]],
        "crossValidated": {"folds": FOLDS, "unanswerableNotFound": round(caught, 3), "answerableWronglyNotFound": round(wrong, 3),
                           "auc": round(auc(held, y), 3), "ece": round(ece(held, y), 3), "logLoss": round(log_loss(held, y), 3),
                           "everyFeatureLogLoss": round(log_loss(every, y), 3), "everyFeatureAuc": round(auc(every, y), 3)},
        "tuning": {"unanswerableNotFound": round(in_sample[0], 3), "answerableWronglyNotFound": round(in_sample[1], 3),
                   "auc": round(auc(ps, y), 3), "ece": round(ece(ps, y), 3),
                   "brier": round(sum((p - t) ** 2 for p, t in zip(ps, y)) / len(y), 3)},
    }, indent=1))
    if args.write:
        write_profile(args, w, threshold, len(rows), {
            "logLoss": round(log_loss(held, y), 3), "auc": round(auc(held, y), 3),
            "unanswerableNotFound": round(caught, 3), "answerableWronglyNotFound": round(wrong, 3)})
    return 0


def model_file(args) -> str:
    if args.model:
        return args.model
    path = os.environ.get("PARLANCE_DEFAULT_MODEL")
    if not path:
        raise SystemExit("fit_abstention.py --write: give --model or run under eval \"$(scripts/setup.sh)\"")
    return path


def write_profile(args, w, threshold, questions, cross) -> None:
    """The fitted profile into eval/fitted/answerability.json (replacing the one for the same
    model file), then embedded in the Swift source."""
    import datetime
    import hashlib
    path = model_file(args)
    with open(path, "rb") as f:
        sha = hashlib.file_digest(f, "sha256").hexdigest()
    data = json.load(open(FITTED))
    name = args.name or os.path.basename(path).rsplit(".gguf", 1)[0].lower()
    profile = {"name": name, "modelSha256": [sha], "bias": round(w[0], 3),
               "weights": {n: round(v, 3) for n, v in zip(FEATURES, w[1:])}, "threshold": threshold,
               "provenance": {"model": os.path.basename(path), "dataset": "eval/data/qa.json, the tuning part (not heldOut)",
                              "questions": questions,
                              "fitted": f"{datetime.date.today().isoformat()}, eval/fit_abstention.py: features chosen forward by "
                                        f"{FOLDS}-fold cross-validated log loss, threshold on cross-validated probabilities",
                              "crossValidated": cross}}
    data["profiles"] = [p for p in data["profiles"] if sha not in p["modelSha256"] and p["name"] != name] + [profile]
    with open(FITTED, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {os.path.relpath(FITTED, ROOT)} (profile {name})", file=sys.stderr)
    embed()


def embed() -> None:
    """AnswerabilityFitted.swift: eval/fitted/answerability.json as a string the daemon decodes."""
    text = open(FITTED, encoding="utf-8").read()
    src = ("// Generated by eval/fit_abstention.py from eval/fitted/answerability.json: do not edit; edit or refit the JSON.\n"
           "extension Answerability {\n"
           "    /// eval/fitted/answerability.json, byte for byte (`AnswerabilityProfile` decodes it).\n"
           "    static let fittedJSON = #\"\"\"\n" + text + "\"\"\"#\n}\n")
    open(SWIFT, "w", encoding="utf-8").write(src)
    print(f"wrote {os.path.relpath(SWIFT, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

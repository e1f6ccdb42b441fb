"""Q&A (ask/stream): its figures, the request each question sends the daemon, and the scoring
of the answers (the daemon's and the peer's alike, against the labels in qa.json). A new Q&A
figure: its row in FIGURES and its value in score_qa's metrics.

Calibration: expected calibration error (10 equal-width bins) and Brier score of the answers'
`confidenceScore` (n/a when results have none) against correctness: answerable, found, a gold
citation and not degenerate; or unanswerable and found false."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

from .common import seed, rate, verification_of
from .judges import NOT_FOUND, degenerate_reasons
from .text import fold, numbers_in, plain, strip_cue_times

# (name, family, metric, printed label, which way is better, comparison, target); summary.FIGURES
# gathers every family's rows, in the order of the printed tables.
FIGURES = [
    ("citationHitRate", "qa", "citationHitRate", "Q&A: a gold segment among the citations", "higher", ">=", 0.90),
    ("degenerateRate", "qa", "degenerateRate", "Q&A: answers that are not language", "lower", "==", 0),
    ("unsupportedNumberRate", "qa", "unsupportedNumberRate", "Q&A: answers with a number not in the document", "lower",
     None, None),
    ("notFoundCorrectRate", "qa", "notFoundCorrectRate", "Q&A: unanswerable answered 'not found'", "higher", ">=", 0.60),
    ("wrongNotFoundRate", "qa", "wrongNotFoundRate", "Q&A: answerable wrongly declared not found", "lower", "<=", 0.05),
    ("calibrationECE", "qa", "calibrationECE", "Q&A: confidenceScore ECE (10 bins)", "lower", None, None),
    ("brierScore", "qa", "brierScore", "Q&A: confidenceScore Brier score", "lower", None, None),
]


def daemon_params(q: Dict[str, Any], data: Dict[str, Any]) -> Dict[str, Any]:
    """The ask/stream params of one question (the column keeps those the daemon knows and adds verify)."""
    return {"uri": data["docs"][q["docKey"]]["uri"], "question": q["question"], "seed": seed()}


def citation_text_mismatch(res: Dict[str, Any], doc: Dict[str, Any]) -> List[Any]:
    """citations: do their texts match our segmentation (are the gold ids comparable)? The ids
    whose text is not in our segment of that number."""
    mis = []
    for c in res.get("citations", []):
        sid = c.get("segmentId")
        ours = doc["segments"][sid - 1] if isinstance(sid, int) and 0 < sid <= len(doc["segments"]) else ""
        if plain(c.get("text", "")) and plain(c.get("text", ""))[:40] not in plain(ours):
            mis.append(sid)
    return mis


def score_qa(runs: List[Dict[str, Any]], data: Dict[str, Any]) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    details = []
    n_ans = n_un = hits = degenerate = with_num = unsupported = nf_ok = declared_nf = said_nf = answered = 0
    calib: List[Tuple[float, bool]] = []
    for r in runs:
        q = r["item"]
        doc = data["docs"][q["docKey"]]
        d: Dict[str, Any] = {"id": q["id"], "doc": q["doc"], "question": q["question"], "answerable": q["answerable"],
                             "gold": q.get("gold") or [], "seconds": r["seconds"]}
        if q["answerable"]:
            n_ans += 1
        else:
            n_un += 1
        if "error" in r:
            d["error"] = r["error"]
            details.append(d)
            continue
        res = r["result"]
        answered += 1
        answer = res.get("answer", "")
        cited = [c.get("segmentId") for c in res.get("citations", [])]
        found = res.get("found", True)
        gen = (res.get("usage") or {}).get("generatedTokens")
        conf = res.get("confidenceScore")
        d.update({"answer": answer, "found": found, "citations": cited, "confidence": res.get("confidence"),
                  **({"confidenceScore": conf} if conf is not None else {}),
                  "generatedTokens": gen, "expected": q.get("answer"), "usage": res.get("usage"),
                  "wholeDocument": (res.get("retrieval") or {}).get("wholeDocument")})
        if res.get("answerability") is not None:  # the features the daemon's abstention read
            d["answerability"] = res["answerability"]
        v = verification_of(res)
        if v is not None:
            d["verification"] = v
        for k in ("raw", "jsonError"):  # the peer's reply as it came
            if k in res:
                d["peer" + k[0].upper() + k[1:]] = res[k]
        mis = citation_text_mismatch(res, doc)
        if mis:
            d["citationTextMismatch"] = mis
        why = degenerate_reasons(answer, doc["segments"][0] if doc["segments"] else "")
        if why:
            degenerate += 1
            d["degenerate"] = why
        # not "1." list markers, not the document's own cue times
        nums = numbers_in(strip_cue_times(re.sub(r"(?m)^\s*\d{1,2}[.)]\s+", " ", answer), doc["times"]))
        if nums:
            with_num += 1
            bad = sorted(n for n in nums if n not in doc["numbers"])
            if bad:
                unsupported += 1
                d["unsupportedNumbers"] = bad
        if q["answerable"]:
            d["hit"] = bool(set(cited) & set(q.get("gold") or []))
            hits += d["hit"]
            if found is False and gen == 0:
                declared_nf += 1
                d["declaredNotFound"] = True
            if found is False or NOT_FOUND.search(fold(answer)):
                said_nf += 1
                d["saysNotFound"] = True
        else:
            d["notFoundCorrect"] = found is False or bool(NOT_FOUND.search(fold(answer)))
            nf_ok += d["notFoundCorrect"]
        # correct (for calibration): answerable, found, a gold citation and not degenerate; or
        # unanswerable and found == false
        d["correct"] = (found is not False and d["hit"] and not why) if q["answerable"] else found is False
        if isinstance(conf, (int, float)) and not isinstance(conf, bool):
            calib.append((float(conf), d["correct"]))
        details.append(d)
    m = {
        "questions": len(runs), "answerable": n_ans, "unanswerable": n_un, "answered": answered,
        "citationHitRate": rate(hits, n_ans), "citationHits": hits,
        "degenerateRate": rate(degenerate, answered), "degenerate": degenerate,
        "unsupportedNumberRate": rate(unsupported, answered), "unsupportedNumber": unsupported,
        "answersWithNumbers": with_num,
        "notFoundCorrectRate": rate(nf_ok, n_un), "notFoundCorrect": nf_ok,
        "answerableDeclaredNotFound": declared_nf,
        "answerableSaidNotFound": said_nf,
        "wrongNotFoundRate": rate(said_nf, n_ans),
        **calibration(calib),
        "errors": len(runs) - answered,
    }
    return m, details


def calibration(pairs: List[Tuple[float, bool]], bins: int = 10) -> Dict[str, Any]:
    """Expected calibration error (equal-width bins over 0..1, weighted by their share of the
    answers) and Brier score of confidenceScore against correctness; None without scores."""
    if not pairs:
        return {"calibrationECE": None, "brierScore": None, "withConfidenceScore": 0}
    groups: Dict[int, List[Tuple[float, bool]]] = {}
    for c, ok in pairs:
        groups.setdefault(min(bins - 1, max(0, int(c * bins))), []).append((c, ok))
    ece = sum(len(g) / len(pairs) * abs(sum(ok for _, ok in g) / len(g) - sum(c for c, _ in g) / len(g))
              for g in groups.values())
    brier = sum((c - ok) ** 2 for c, ok in pairs) / len(pairs)
    return {"calibrationECE": round(ece, 3), "brierScore": round(brier, 3), "withConfidenceScore": len(pairs),
            "meanConfidenceScore": round(sum(c for c, _ in pairs) / len(pairs), 3),
            "correctRate": round(sum(ok for _, ok in pairs) / len(pairs), 3)}

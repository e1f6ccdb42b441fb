"""Compose (compose/variations): its figures, the request each item sends the daemon (every
tone at once; the peer asks one tone per request), and the scoring of the variations against
the labeled facts in compose.json. A new compose figure: its row in FIGURES and its value in
score_compose's metrics."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .common import seed, TONES, mean, rate, verification_of
from .judges import compose_flags, invented

# (name, family, metric, printed label, which way is better, comparison, target); summary.FIGURES
# gathers every family's rows, in the order of the printed tables.
FIGURES = [
    ("keyFactsKeptMean", "compose", "keyFactsKeptMean", "compose: labeled key facts kept (mean)", "higher", ">=", 0.95),
    ("toneSeparation", "compose", "toneSeparation", "compose: formal scores above casual", "higher", ">=", 0.90),
    ("badButPassed", "compose", "badButPassed", "compose: refusal/echo/unchanged returned as passed", "lower", "==", 0),
    ("badOutputs", "compose", "badOutputs", "compose: refusal/echo/unchanged variations", "lower", None, None),
    ("withInventedNumbersOrNames", "compose", "withInventedNumbersOrNames", "compose: variations with invented numbers/names",
     "lower", None, None),
]


def daemon_params(c: Dict[str, Any], spec: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The compose/variations params of one item: every tone, its audience when the daemon's
    spec lists it, its language."""
    p = {"text": c["text"], "tones": TONES, "seed": seed(), "ephemeral": True}
    aud = c.get("audience")
    if aud and aud in (spec.get("compose/variations", {}).get("audience", {}).get("enum") or [aud]):
        p["audience"] = aud
    if c.get("language"):
        p["language"] = c["language"]
    return p


def score_compose(runs: List[Dict[str, Any]], unflagged: bool = False) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """unflagged: outputs nothing checks (the peer): every refusal, echo or unchanged copy is
    returned as if it had passed, so badButPassed counts them all."""
    details = []
    cats = {"refusal": 0, "instructionEcho": 0, "unchanged": 0, "factsMissing": 0, "error": 0}
    failing = variations = bad_passed = separated = inv_n = bad_n = 0
    shares: List[float] = []
    with_verification = 0
    for r in runs:
        c = r["item"]
        facts = c.get("facts") or []
        if "error" in r:
            cats["error"] += len(TONES)
            failing += len(TONES)
            variations += len(TONES)
            if facts:
                shares.extend([0.0] * len(TONES))
            details.append({"id": c["id"], "kind": c.get("kind"), "error": r["error"], "seconds": r["seconds"]})
            continue
        scores: Dict[str, float] = {}
        for v in r["result"].get("variations", []):
            variations += 1
            text = v.get("text", "")
            fl, kept, missing = compose_flags(text, c["text"], facts)
            ver = verification_of(v)
            d: Dict[str, Any] = {"id": c["id"], "kind": c.get("kind"), "tone": v.get("tone"), "audience": v.get("audience"),
                                 "text": text, "formalityScore": v.get("formalityScore"), "failing": fl}
            inv = invented(text, c["text"])
            if inv:
                d["invented"] = inv
                inv_n += 1
            if facts:
                share = len(kept) / len(facts)
                shares.append(share)
                d["factsKept"] = round(share, 3)
                if missing:
                    d["factsMissing"] = missing
            for k in fl:
                cats[k] += 1
            if fl:
                failing += 1
            bad = bool({"refusal", "instructionEcho", "unchanged"} & set(fl))
            bad_n += bad
            if ver is not None:
                with_verification += 1
                d["verification"] = ver
                if ver.get("passed") and bad:
                    bad_passed += 1
                    d["badButPassed"] = True
            elif unflagged and bad:
                bad_passed += 1
                d["badButPassed"] = True
            if v.get("tone") in ("formal", "casual") and v.get("formalityScore") is not None:
                scores.setdefault(v["tone"], v["formalityScore"])
            details.append(d)
        ok = "formal" in scores and "casual" in scores and scores["formal"] > scores["casual"]
        separated += ok
        details.append({"id": c["id"], "toneSeparated": ok, "formal": scores.get("formal"), "casual": scores.get("casual"),
                        "seconds": r["seconds"]})
    m = {
        "items": len(runs), "variations": variations,
        "variationsFailing": {"total": failing, **cats},
        "keyFactsKeptMean": mean(shares),
        "toneSeparation": rate(separated, len(runs)),
        "badButPassed": bad_passed if with_verification or unflagged else None,
        "badOutputs": bad_n,
        "withInventedNumbersOrNames": inv_n,
        "errors": sum(1 for r in runs if "error" in r),
    }
    return m, details

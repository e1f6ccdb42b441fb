"""The JSON summary: every column scored on the whole run and on its held-out and tuning
parts, the cost per method, what the daemon's own checks said, and the targets.

Items with `"heldOut": true` in the data are scored apart from the rest (the tuning part);
the targets are judged on the held-out part of the verify-on column (on the tuning part for a
family without held-out items, e.g. the list documents), and every figure also has the target
"better than peer"."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Dict, Optional, Set, Tuple

from . import compose, lists, qa
from .common import METHODS, ROOT, seed, mean, verification_of
from .compose import score_compose
from .lists import score_lists
from .qa import score_qa

# (name, family, metric, printed label, which way is better, comparison, target): every
# family's rows (a new figure is a row in its task's module), in the order of the tables.
FIGURES = qa.FIGURES + compose.FIGURES + lists.FIGURES
# (name, family, metric path, comparison, target): judged on the verify-on column, on the
# held-out part when the family has held-out items; besides these, every figure has the
# target "better than peer", and the on/off wall-time ratio (overall and per method) <= 1.3.
TARGETS = [(n, fam, (fam, key), op, t) for n, fam, key, _, _, op, t in FIGURES if op is not None]
WALL_RATIO_TARGET = 1.3


def summarize(raw: Dict[str, Dict[str, Any]], data: Dict[str, Any], args: argparse.Namespace, defaults: Dict[str, int],
              supported: bool, binary_sha: str, started: str,
              t0: float) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, bool]]:
    """(the summary, the full record written to --out: the summary, the data's warnings and the
    details of every column, which families have held-out items)."""
    held_ids = {x["id"] for x in data["qa"] + data["compose"] if x.get("heldOut")}
    has_held = {"qa": any(q["id"] in held_ids for q in data["qa"]),
                "compose": any(c["id"] in held_ids for c in data["compose"]), "lists": False}
    summary_cols, parts, details = score_columns(raw, data, held_ids)

    # Targets are judged on the verify-on column; a run of the peer alone judges the peer.
    main_col = "on" if "on" in summary_cols else next((c for c in summary_cols if c != "peer"), "peer")
    peer_on = "peer" in summary_cols
    targets = judge_targets(summary_cols, parts, has_held, main_col, peer_on)

    fatal = [f"{n}: {f}" for n, c in raw.items() for f in c["fatal"]]
    summary = {
        "started": started,
        "binary": os.path.relpath(args.binary, ROOT) if args.binary.startswith(ROOT) else args.binary,
        "binarySha256": binary_sha[:16],
        "serverVersion": next((c.get("serverVersion") for n, c in raw.items() if n != "peer"), None),
        "peerVersion": raw["peer"].get("serverVersion") if peer_on else None,
        "verifySupported": supported,
        "columns": list(raw),
        "targetsColumn": main_col,
        "targetsPart": {fam: judged_part(fam, has_held) for fam in ("qa", "compose", "lists")},
        "heldOutItems": len(held_ids),
        "heldOutItemsInData": data["heldOutInData"],
        "concurrency": args.concurrency,
        "contextSize": defaults["contextSize"],
        "threads": defaults["threads"],
        "seed": seed(),
        "data": {"questions": len(data["qa"]), "unanswerable": sum(1 for q in data["qa"] if not q["answerable"]),
                 "composeItems": len(data["compose"]), "listDocuments": data["lists"],
                 "heldOut": {"questions": sum(1 for q in data["qa"] if q["id"] in held_ids),
                             "composeItems": sum(1 for c in data["compose"] if c["id"] in held_ids)},
                 "warnings": len(data["warnings"]), **({"limit": args.limit} if args.limit else {}),
                 **({"ids": args.ids} if args.ids else {})},
        "results": summary_cols,
        "parts": parts,
        "targets": targets,
        "targetsMet": sum(1 for t in targets.values() if t["met"]),
        "targetsMeasured": sum(1 for t in targets.values() if t["met"] is not None),
        "wallSeconds": round(time.monotonic() - t0, 1),
        "ok": not fatal,
    }
    if fatal:
        summary["failures"] = fatal
    full = dict(summary)
    full["dataWarnings"] = data["warnings"]
    full["details"] = details
    return summary, full, has_held


def part_of(col: Dict[str, Any], part: str, held_ids: Set[str]) -> Dict[str, Any]:
    keep = (lambda r: True) if part == "all" else (lambda r: (r["item"]["id"] in held_ids) == (part == "heldOut"))
    return {"qa": [r for r in col["qa"] if keep(r)], "compose": [r for r in col["compose"] if keep(r)],
            "lists": col["lists"] if part != "heldOut" else []}


def score_part(col: Dict[str, Any], name: str, part: str, data: Dict[str, Any],
               held_ids: Set[str]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """One column's figures (and details) on one part: "all", "tuning" or "heldOut"."""
    sub = part_of(col, part, held_ids)
    s: Dict[str, Any] = {}
    det: Dict[str, Any] = {}
    if sub["qa"]:
        s["qa"], det["qa"] = score_qa(sub["qa"], data)
    if sub["compose"]:
        s["compose"], det["compose"] = score_compose(sub["compose"], unflagged=name == "peer")
    if sub["lists"]:
        s["lists"], det["lists"] = score_lists(sub["lists"], data)
    return s, det


def score_columns(raw: Dict[str, Dict[str, Any]], data: Dict[str, Any],
                  held_ids: Set[str]) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]], Dict[str, Any]]:
    """(every column's figures on the whole run with cost, errors and load; its figures per part;
    its details)."""
    summary_cols: Dict[str, Any] = {}
    parts: Dict[str, Dict[str, Any]] = {"tuning": {}, "heldOut": {}}
    details: Dict[str, Any] = {}
    for name, col in raw.items():
        s, det = score_part(col, name, "all", data, held_ids)
        for part in parts:
            parts[part][name] = score_part(col, name, part, data, held_ids)[0]
        s["cost"] = cost(col)
        ver = verification_summary(col)
        if ver:
            s["daemonVerification"] = ver
        s["errors"] = {fam: sum(1 for e in col["errors"] if e["family"] == fam) for fam in ("qa", "compose", "lists")}
        if col["fatal"]:
            s["fatal"] = col["fatal"]
        if col["warnings"]:
            s["warnings"] = col["warnings"]
        s["loadAverage"] = col["loadAverage"]
        summary_cols[name] = s
        det["errors"] = col["errors"]
        det["documents"] = col.get("documents")
        if "daemonLogTail" in col:
            det["daemonLogTail" if name != "peer" else "llamaServerLogTail"] = col["daemonLogTail"]
        if name == "peer":
            det["settings"] = col["peer"]
        details[name] = det
    return summary_cols, parts, details


def judged_part(fam: str, has_held: Dict[str, bool]) -> str:
    return "heldOut" if has_held[fam] else "tuning"


def judge_targets(summary_cols: Dict[str, Any], parts: Dict[str, Dict[str, Any]], has_held: Dict[str, bool],
                  main_col: str, peer_on: bool) -> Dict[str, Any]:
    """Every target on `main_col`, "better than peer" when the peer ran, and the on/off wall-time ratios."""
    def value(part: str, col: Optional[str], fam: str, key: str) -> Any:
        if col is None:
            return None
        src = summary_cols if part == "all" else parts[part]
        return ((src.get(col) or {}).get(fam) or {}).get(key)

    targets: Dict[str, Any] = {}
    for fname, fam, key, label, better, op, target in FIGURES:
        part = judged_part(fam, has_held)
        v = value(part, main_col, fam, key)
        in_run = any(fam in (parts[part].get(c) or {}) for c in summary_cols)
        if not in_run:
            continue
        if op is not None:
            targets[fname] = {"value": v, "target": f"{op} {target}", "met": check(v, op, target), "part": part,
                              "column": main_col}
        if main_col == "peer" or not peer_on:
            continue
        pv = value(part, "peer", fam, key)
        targets[f"{fname} betterThanPeer"] = {"value": v, "peer": pv, "target": f"{'>' if better == 'higher' else '<'} peer",
                                              "met": better_than(v, pv, better), "part": part, "column": main_col}
    ratios = wall_ratios(summary_cols)
    for k, r in ratios.items():
        targets["onOffWallTimeRatio" + ("" if k == "overall" else f"[{k}]")] = {
            "value": r, "target": f"<= {WALL_RATIO_TARGET}", "met": check(r, "<=", WALL_RATIO_TARGET)}
    return targets


def check(value: Any, op: str, target: float) -> Optional[bool]:
    if value is None:
        return None
    return value >= target if op == ">=" else value <= target if op == "<=" else value == target


def better_than(v: Any, peer: Any, better: str) -> Optional[bool]:
    """Strictly better than the peer; a tie counts only at the best possible value (0 for a
    figure where lower is better, 1 for a rate where higher is better)."""
    if v is None or peer is None:
        return None
    if better == "higher":
        return v > peer or v == peer == 1
    return v < peer or v == peer == 0


def wall_ratios(cols: Dict[str, Any]) -> Dict[str, Optional[float]]:
    """on/off wall time: the columns' whole wall time, and per method the mean wall seconds of
    a request."""
    if "on" not in cols or "off" not in cols:
        return {"overall": None}
    on, off = cols["on"]["cost"], cols["off"]["cost"]
    out = {"overall": round(on["columnWallSeconds"] / off["columnWallSeconds"], 3) if off["columnWallSeconds"] else None}
    for m in METHODS:
        a, b = (on.get(m) or {}).get("wallSecondsMean"), (off.get(m) or {}).get("wallSecondsMean")
        if a is not None and b:
            out[m] = round(a / b, 3)
    return out


def cost(col: Dict[str, Any]) -> Dict[str, Any]:
    """Per method: requests, mean verification.attempts (None when results carry none: the
    peer makes one generation per request, per tone for compose), wall seconds per request
    (send to answer, so with requests in flight it includes waiting for the others) and in
    all, and the engine's own time."""
    out: Dict[str, Any] = {}
    for fam, method in (("qa", "ask/stream"), ("compose", "compose/variations"), ("lists", "analysis/summarize"),
                        ("lists", "analysis/highlights")):
        runs = [r for r in col[fam] if fam != "lists" or r["method"] == method]
        if not runs:
            continue
        attempts = []
        for r in runs:
            res = r.get("result") or {}
            objs = res.get("variations", []) if fam == "compose" else [res]
            attempts += [v["attempts"] for o in objs for v in [verification_of(o)] if v and "attempts" in v]
        engine = []
        for r in runs:
            res = r.get("result") or {}
            objs = [res] + (res.get("variations", []) if col.get("column") == "peer" and fam == "compose" else [])
            ms = sum((o.get("usage") or {}).get("totalMs", 0) or 0 for o in objs)
            engine.append(ms / 1000 if "result" in r else None)
        out[method] = {
            "requests": len(runs),
            "attemptsMean": 1.0 if col.get("column") == "peer" else mean(attempts),  # the peer never retries
            "wallSecondsMean": mean([r["seconds"] for r in runs], 2),
            "wallSecondsTotal": round(sum(r["seconds"] for r in runs), 1),
            "engineSecondsMean": mean(engine, 2),
        }
    out["familySpanSeconds"] = col.get("familySpanSeconds", {})
    out["columnWallSeconds"] = col["wallSeconds"]
    return out


def verification_summary(col: Dict[str, Any]) -> Dict[str, Any]:
    """What the daemon's own checks said, per family (only when results carry `verification`)."""
    out: Dict[str, Any] = {}
    for fam in ("qa", "compose", "lists"):
        vs = []
        for r in col[fam]:
            res = r.get("result") or {}
            objs = res.get("variations", []) if fam == "compose" else [res]
            vs += [v for o in objs for v in [verification_of(o)] if v]
        if not vs:
            continue
        codes: Dict[str, int] = {}
        fallbacks: Dict[str, int] = {}
        for v in vs:
            for i in v.get("issues") or []:
                key = i.get("code", "?") + (" (repaired)" if i.get("repaired") else "")
                codes[key] = codes.get(key, 0) + 1
            if v.get("fallback"):
                fallbacks[v["fallback"]] = fallbacks.get(v["fallback"], 0) + 1
        out[{"qa": "ask"}.get(fam, fam)] = {
            "checked": len(vs), "passed": sum(1 for v in vs if v.get("passed")),
            "fallbacks": dict(sorted(fallbacks.items())), "issueCodes": dict(sorted(codes.items(), key=lambda kv: -kv[1])),
        }
    return out

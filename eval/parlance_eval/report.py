"""The printed tables (stdout, unless --json): every figure per column for the held-out and the
tuning part with its target and "better than peer", the cost per method, the calibration of
confidenceScore, every figure against the peer, and the targets met."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from .common import METHODS
from .summary import FIGURES, WALL_RATIO_TARGET, better_than, check

W0, WC = 54, 9  # the width of a row's label, of each column's cell


def fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))
    return str(v)


def row(label: str, cells: Sequence[str], tail: Sequence[str] = ()) -> str:
    return (label.ljust(W0) + "".join(c.rjust(WC) for c in cells) + "  "
            + "".join(t.ljust(w) for t, w in zip(tail, (10, 15, 0)))).rstrip()


def report(summary: Dict[str, Any], has_held: Dict[str, bool]) -> str:
    """The printed tables: every figure per column for the held-out and the tuning part, the
    targets (judged on the `targetsColumn`) and "better than peer"; then the cost per method."""
    main_col = summary["targetsColumn"]
    lines = (figure_tables(summary, has_held) + cost_table(summary) + calibration_lines(summary)
             + better_than_peer_lines(summary))
    lines.append(f"{summary['targetsMet']}/{summary['targetsMeasured']} targets met (column {main_col}); "
                 f"{summary['wallSeconds']} s" + ("" if summary["ok"] else "; FAILED: " + "; ".join(summary["failures"])))
    return "\n".join(lines)


def figure_tables(summary: Dict[str, Any], has_held: Dict[str, bool]) -> List[str]:
    """Every figure per column, for the held-out part and for the tuning part."""
    cols = summary["columns"]
    main_col = summary["targetsColumn"]
    lines: List[str] = []
    any_held = any(has_held.values())
    part_names = [("heldOut", "held-out part"), ("tuning", "tuning part")] if any_held else [("tuning", "tuning part")]
    for part, title in part_names:
        src = summary["parts"][part]
        if not any(src.get(c) for c in cols):
            continue
        head = f"== {title}"
        if not any_held:
            head += (" (no item has \"heldOut\": true yet: every item counts as tuning; targets judged on it)"
                     if not summary["heldOutItemsInData"] else
                     " (no held-out item in this selection: every item run counts as tuning; targets judged on it)")
        else:
            judged = [f for f in ("qa", "compose", "lists") if summary["targetsPart"][f] == part]
            head += f" (targets judged here for: {', '.join(judged) or 'none'})"
        lines += [head, row("figure", cols, ["target", f"holds ({main_col})", "better than peer"])]
        for fname, fam, key, label, better, op, target in FIGURES:
            if not any(fam in (src.get(c) or {}) for c in cols):
                continue
            vals = [((src.get(c) or {}).get(fam) or {}).get(key) for c in cols]
            judged = summary["targetsPart"][fam] == part
            t = summary["targets"].get(fname) if judged else None
            b = summary["targets"].get(f"{fname} betterThanPeer") if judged else None
            if b is None and "peer" in cols and main_col != "peer":
                bv = better_than(vals[cols.index(main_col)], vals[cols.index("peer")], better)
            else:
                bv = b["met"] if b else None
            lines.append(row(label, [fmt(v) for v in vals],
                             [f"{op} {fmt(target)}" if op else "—",
                              (fmt(t["met"]) if t else ("(" + fmt(check(vals[cols.index(main_col)], op, target)) + ")"
                                                        if op and main_col in cols else "—")),
                              fmt(bv) if "peer" in cols and main_col != "peer" else "—"]))
        lines.append("")
    return lines


def cost_table(summary: Dict[str, Any]) -> List[str]:
    """Per method: attempts and wall seconds per request in each column, and the on/off ratio."""
    cols = summary["columns"]
    lines: List[str] = []
    lines.append("== cost per method (whole run)")
    lines.append(row("method", [f"{c}" for c in cols], ["on/off", f"target <= {WALL_RATIO_TARGET}"]))
    for m in METHODS:
        per = [(summary["results"][c]["cost"].get(m) or {}) for c in cols]
        if not any(per):
            continue
        r = summary["targets"].get(f"onOffWallTimeRatio[{m}]")
        lines.append(row(f"{m}: attempts (mean)", [fmt(p.get("attemptsMean")) for p in per]))
        lines.append(row(f"{m}: wall s per request (mean)", [fmt(p.get("wallSecondsMean")) for p in per],
                         [fmt(r["value"]) if r else "n/a", fmt(r["met"]) if r else "—"]))
    r = summary["targets"].get("onOffWallTimeRatio")
    lines.append(row("column wall s", [fmt(summary["results"][c]["cost"]["columnWallSeconds"]) for c in cols],
                     [fmt(r["value"]) if r else "n/a", fmt(r["met"]) if r else "—"]))
    lines.append("")
    return lines


def calibration_lines(summary: Dict[str, Any]) -> List[str]:
    cols = summary["columns"]
    lines: List[str] = []
    qa = {c: (summary["results"][c].get("qa") or {}) for c in cols}
    if any(qa.values()):
        lines.append("== calibration of confidenceScore (whole run; correct = answerable, found, a gold citation, "
                     "not degenerate; or unanswerable and found false)")
        for c in cols:
            q = qa[c]
            lines.append(f"  {c}: ECE (10 bins) {fmt(q.get('calibrationECE'))}, Brier {fmt(q.get('brierScore'))}, "
                         f"over {q.get('withConfidenceScore', 0)} answers; wrongly not found on answerable "
                         f"{fmt(q.get('wrongNotFoundRate'))} (target <= 0.05), not found on unanswerable "
                         f"{fmt(q.get('notFoundCorrectRate'))} (target >= 0.60)")
        lines.append("")
    return lines


def better_than_peer_lines(summary: Dict[str, Any]) -> List[str]:
    main_col = summary["targetsColumn"]
    lines: List[str] = []
    bt = [k for k in summary["targets"] if k.endswith(" betterThanPeer")]
    if bt:
        lines.append("== every figure better than peer (" + main_col + " vs peer)")
        for k in bt:
            t = summary["targets"][k]
            lines.append(f"  {k[:-len(' betterThanPeer')]:<28} {fmt(t['value']):>8} vs {fmt(t['peer']):>8}: {fmt(t['met'])}")
        met = [summary["targets"][k]["met"] for k in bt]
        measured = [m for m in met if m is not None]
        lines.append(f"  every figure better than peer: {fmt(bool(measured) and all(measured))} "
                     f"({sum(measured)} of {len(measured)} measured figures better"
                     + (f"; {len(met) - len(measured)} not measured in both columns" if len(measured) < len(met) else "")
                     + ")")
        lines.append("")
    return lines


def ablation_lines(summary: Dict[str, Any]) -> List[str]:
    """The ablation table: per part, each figure of the verify-on column and its change with one
    check switched off ("on-ID" columns), then the column's wall time. A change in the figure's
    good direction means the check costs that figure; read it against the run's noise
    (--repeat)."""
    cols = [c for c in summary["columns"] if c.startswith("on-")]
    if "on" not in summary["columns"] or not cols:
        return []
    lines: List[str] = []
    for part, title in (("heldOut", "held-out part"), ("tuning", "tuning part")):
        src = summary["parts"][part]
        if not src.get("on"):
            continue
        lines.append(f"== ablation, {title}: each check switched off, the change against on (+ better, - worse)")
        lines.append("figure".ljust(W0) + "on".rjust(WC) + "  " + "  ".join(c[3:] for c in cols))
        for fname, fam, key, label, better, op, target in FIGURES:
            on = ((src.get("on") or {}).get(fam) or {}).get(key)
            if on is None:
                continue
            cells = []
            for c in cols:
                v = ((src.get(c) or {}).get(fam) or {}).get(key)
                if v is None or not isinstance(v, (int, float)) or not isinstance(on, (int, float)):
                    cells.append("n/a".rjust(len(c) - 3))
                    continue
                d = v - on
                sign = (1 if better == "higher" else -1 if better == "lower" else 0) * d
                mark = "+" if sign > 1e-9 else "-" if sign < -1e-9 else "="
                cells.append(f"{mark}{abs(d):.3f}".rjust(len(c) - 3))
            lines.append(label.ljust(W0) + fmt(on).rjust(WC) + "  " + "  ".join(cells))
        lines.append("")
    walls = [summary["results"][c]["cost"]["columnWallSeconds"] for c in ["on"] + cols]
    lines.append("column wall s".ljust(W0) + fmt(walls[0]).rjust(WC) + "  "
                 + "  ".join(fmt(w).rjust(len(c) - 3) for w, c in zip(walls[1:], cols)))
    return lines

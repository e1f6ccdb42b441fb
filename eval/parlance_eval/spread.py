"""Several runs of one binary (--repeat N, run k with seed + k): every figure's mean and range
over the runs, per part and column, and the on/off wall-time ratios. One run of the small
model moves by more than most changes do (formal above casual went from 0.47 to 0.87 with
the same prompts), so a before and after is read from means and ranges, not one run each.
With --against, a baseline binary's runs interleaved with them, side by side: a batch of runs
an hour apart moves too (the machine's speed sets the attempts' time budgets)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .report import W0, fmt
from .summary import FIGURES


def figure_values(summaries: List[Dict[str, Any]], part: str, col: str, fam: str, key: str) -> List[float]:
    out = []
    for s in summaries:
        v = (((s["parts"].get(part) or {}).get(col) or {}).get(fam) or {}).get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(float(v))
    return out


def stats(values: List[float]) -> Optional[Dict[str, Any]]:
    if not values:
        return None
    return {"mean": round(sum(values) / len(values), 3), "min": round(min(values), 3), "max": round(max(values), 3),
            "runs": [round(v, 3) for v in values]}


def spread(summaries: List[Dict[str, Any]]) -> Dict[str, Any]:
    """{part: {column: {figure: {mean, min, max, runs}}}, "ratios": {target: {...}}}."""
    out: Dict[str, Any] = {}
    cols = summaries[0]["columns"]
    for part in ("heldOut", "tuning"):
        per_col: Dict[str, Any] = {}
        for col in cols:
            figs = {name: st for name, fam, key, *_ in FIGURES
                    if (st := stats(figure_values(summaries, part, col, fam, key))) is not None}
            if figs:
                per_col[col] = figs
        if per_col:
            out[part] = per_col
    ratios: Dict[str, Any] = {}
    for name in summaries[0]["targets"]:
        if name.startswith("onOffWallTimeRatio"):
            vals = [s["targets"][name]["value"] for s in summaries
                    if isinstance((s["targets"].get(name) or {}).get("value"), (int, float))]
            if (st := stats(vals)) is not None:
                ratios[name] = st
    out["ratios"] = ratios
    return out


def cell(x: Optional[Dict[str, Any]]) -> str:
    return f"{fmt(x['mean'])} [{fmt(x['min'])}-{fmt(x['max'])}]" if x else "n/a"


def cells_row(label: str, cells: List[str]) -> str:
    return (label.ljust(W0) + "".join(c.rjust(22) for c in cells)).rstrip()


def spread_lines(sp: Dict[str, Any], runs: int, seeds: List[int]) -> List[str]:
    """The table printed after the last run's: mean [min–max] per figure and column."""
    lines = [f"== over {runs} runs (seeds {', '.join(map(str, seeds))}): mean [min-max]"]
    for part, title in (("heldOut", "held-out part"), ("tuning", "tuning part")):
        per_col = sp.get(part)
        if not per_col:
            continue
        cols = list(per_col)
        lines.append(f"-- {title}")
        lines.append(cells_row("figure", cols))
        for name, _fam, _key, label, *_ in FIGURES:
            cells = [per_col[c].get(name) for c in cols]
            if not any(cells):
                continue
            lines.append(cells_row(label, [cell(x) for x in cells]))
    for name, x in sp["ratios"].items():
        lines.append(cells_row(f"on/off wall time {name[len('onOffWallTimeRatio'):] or '(whole run)'}", [cell(x)]))
    lines.append("")
    return lines


def compare_lines(this: Dict[str, Any], base: Dict[str, Any], seeds: List[int], against: str) -> List[str]:
    """The table printed with --against: per part and daemon column, each figure's mean [min-max]
    for this binary and the baseline, run interleaved on the same seeds."""
    lines = [f"== this binary and {against}, interleaved over seeds {', '.join(map(str, seeds))}: mean [min-max]"]
    for part, title in (("heldOut", "held-out part"), ("tuning", "tuning part")):
        mine, theirs = this.get(part) or {}, base.get(part) or {}
        for col in [c for c in mine if c in theirs]:
            lines.append(f"-- {title}, column {col}")
            lines.append(cells_row("figure", ["this", "against"]))
            for name, _fam, _key, label, *_ in FIGURES:
                a, b = mine[col].get(name), theirs[col].get(name)
                if a or b:
                    lines.append(cells_row(label, [cell(a), cell(b)]))
    lines.append("")
    return lines

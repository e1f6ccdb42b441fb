"""Lists (analysis/summarize and analysis/highlights on the list documents, common.LIST_DOCS):
their figures, the request each document sends the daemon, and the scoring of the lists
(topics, takeaways, key moments, quotes, action items, the target audience). A new list
figure: its row in FIGURES and its value in score_lists' metrics."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .common import seed, verification_of
from .judges import audience_is_name, duplicates, label_or_name_only

# (name, family, metric, printed label, which way is better, comparison, target); summary.FIGURES
# gathers every family's rows, in the order of the printed tables.
FIGURES = [
    ("duplicateItems", "lists", "duplicateItems", "lists: duplicate items", "lower", "==", 0),
    ("labelOrNameOnlyItems", "lists", "labelOrNameOnlyItems", "lists: label or bare-name items", "lower", None, None),
    ("targetAudienceIsName", "lists", "targetAudienceIsName", "lists: targetAudience names someone", "lower", None, None),
    ("emptyLists", "lists", "emptyLists", "lists: topics/takeaways/key moments left empty", "lower", None, None),
]


def daemon_params(key: str, data: Dict[str, Any]) -> Dict[str, Any]:
    """The params of one list document (the same for both analyses)."""
    return {"uri": data["docs"][key]["uri"], "seed": seed()}


def score_lists(runs: List[Dict[str, Any]], data: Dict[str, Any]) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    details = []
    dup_n = label_n = aud_n = empty_n = 0
    for r in runs:
        d: Dict[str, Any] = {"doc": r["doc"], "method": r["method"], "seconds": r["seconds"]}
        if "error" in r:
            d["error"] = r["error"]
            details.append(d)
            continue
        res = r["result"]
        v = verification_of(res)
        if v is not None:
            d["verification"] = v
        for k in ("raw", "jsonError", "retrieval"):  # the peer's reply as it came
            if k in res:
                d["peer" + k[0].upper() + k[1:]] = res[k]
        if r["method"] == "analysis/summarize":
            lists = {"mainTopics": res.get("mainTopics", []), "keyTakeaways": res.get("keyTakeaways", [])}
            d["summary"] = res.get("summary")
            d["targetAudience"] = res.get("targetAudience")
            if audience_is_name(res.get("targetAudience", ""), data["docs"][r["doc"]]["text"]):
                aud_n += 1
                d["targetAudienceIsName"] = True
        else:
            lists = {"keyMoments": [m.get("title", "") for m in res.get("keyMoments", [])],
                     "quotes": [q.get("text", "") for q in res.get("quotes", [])],
                     "actionItems": res.get("actionItems", [])}
        d["lists"] = lists
        empty = [n for n in ("mainTopics", "keyTakeaways", "keyMoments") if n in lists and not lists[n]]
        if empty:
            d["emptyLists"] = empty
            empty_n += len(empty)
        for name, items in lists.items():
            dups = duplicates(items)
            if dups:
                d.setdefault("duplicates", {})[name] = dups
                dup_n += len(dups)
            if name in ("keyTakeaways", "actionItems"):
                lab = [{"item": it, "why": w} for it in items for w in [label_or_name_only(it)] if w]
                if lab:
                    d.setdefault("labelOrNameOnly", {})[name] = lab
                    label_n += len(lab)
        details.append(d)
    m = {"requests": len(runs), "duplicateItems": dup_n, "labelOrNameOnlyItems": label_n,
         "targetAudienceIsName": aud_n, "emptyLists": empty_n, "errors": sum(1 for r in runs if "error" in r)}
    return m, details

"""The labeled set (eval/data, or --data DIR; its files: the package docstring, "Data"): the
transcripts segmented as the labels number them, the items checked, and the selection of
this run (--ids, the core set unless --all, --limit, --only)."""

from __future__ import annotations

import argparse
import json
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from .common import LIST_DOCS, ROOT
from .text import cue_times, doc_numbers, parse_segments

def load_data(args: argparse.Namespace) -> Dict[str, Any]:
    """Transcripts are keyed by their path relative to the repository; a qa item's `doc` may
    name a file under transcripts/, under the data dir or from the repository root."""
    ddir = os.path.abspath(args.data)
    tdir = os.path.join(ddir, "transcripts")
    docs: Dict[str, Dict[str, Any]] = {}
    alias: Dict[str, str] = {}

    def add(path: str) -> str:
        key = os.path.relpath(os.path.realpath(path), ROOT)
        if key not in docs:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            segs = parse_segments(path, text)
            docs[key] = {"path": key, "uri": "file://" + os.path.realpath(path), "text": text,
                         "segments": segs, "numbers": doc_numbers("\n".join(segs)), "times": cue_times(text)}
        return key

    def resolve(name: str) -> Optional[str]:
        if name in alias:
            return alias[name]
        for cand in (os.path.join(tdir, name), os.path.join(ddir, name), os.path.join(ROOT, name),
                     os.path.join(tdir, os.path.basename(name)), os.path.join(ROOT, "Samples", os.path.basename(name))):
            if os.path.isfile(cand):
                alias[name] = add(cand)
                return alias[name]
        return None

    with open(os.path.join(ddir, "qa.json"), encoding="utf-8") as f:
        qa = json.load(f)
    with open(os.path.join(ddir, "compose.json"), encoding="utf-8") as f:
        compose = json.load(f)
    warnings = []
    for q in qa:
        key = resolve(q["doc"])
        if key is None:
            raise SystemExit(f"eval: qa item {q['id']}: no transcript {q['doc']!r}")
        q["docKey"] = key
        n = len(docs[key]["segments"])
        bad = [g for g in q.get("gold") or [] if not (isinstance(g, int) and 0 < g <= n)]
        if bad:
            warnings.append(f"qa {q['id']}: gold ids {bad} outside 1..{n}")
        if q["answerable"] and not q.get("gold"):
            warnings.append(f"qa {q['id']}: answerable without gold ids")
    ids = [q["id"] for q in qa] + [c["id"] for c in compose]
    if len(set(ids)) != len(ids):
        warnings.append("duplicate item ids")
    for c in compose:
        miss = [x for x in c.get("facts") or [] if x not in c["text"]]
        if miss:
            warnings.append(f"compose {c['id']}: facts not in text: {miss}")
    lists = []
    for rel in LIST_DOCS:
        key = resolve(rel)
        if key is None:
            warnings.append(f"lists: {rel} missing, skipped")
        else:
            lists.append(key)
    held_in_data = sum(1 for x in qa + compose if x.get("heldOut"))
    qa, compose, lists = select_items(args, qa, compose, lists)
    needed = {q["docKey"] for q in qa} | set(lists)
    return {"docs": docs, "qa": qa, "compose": compose, "lists": lists, "needed": needed, "warnings": warnings,
            "heldOutInData": held_in_data}


def stratified(items: List[Dict[str, Any]], n: int, group: Any) -> List[Dict[str, Any]]:
    """N items taken in turn from each group (a document, the held-out or tuning part, answerable
    or not), in the data's order: a subset that has every kind of item, where the first N would
    be one document's tuning questions. Kept in the data's order."""
    groups: Dict[Any, List[Dict[str, Any]]] = {}
    for x in items:
        groups.setdefault(group(x), []).append(x)
    chosen: List[int] = []
    queues = [list(g) for g in groups.values()]
    while len(chosen) < min(n, len(items)):
        for q in queues:
            if q and len(chosen) < n:
                chosen.append(id(q.pop(0)))
    keep = set(chosen)
    return [x for x in items if id(x) in keep]


def select_items(args: argparse.Namespace, qa: List[Dict[str, Any]], compose: List[Dict[str, Any]],
                 lists: List[str]) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], List[str]]:
    """The items of this run, the questions grouped by document."""
    if args.ids:
        rx = re.compile(args.ids)
        qa = [q for q in qa if rx.search(q["id"])]
        compose = [c for c in compose if rx.search(c["id"])]
        lists = [k for k in lists if rx.search(k)]
    if not args.all:
        # The core set (the default, under 15 minutes); `--all` adds the items marked extra.
        qa = [q for q in qa if not q.get("extra")]
        compose = [c for c in compose if not c.get("extra")]
    if args.limit is not None:
        qa = stratified(qa, args.limit, lambda q: (q.get("doc"), bool(q.get("heldOut")), q.get("answerable")))
        compose = stratified(compose, args.limit, lambda c: (bool(c.get("heldOut")), c.get("kind")))
        lists = lists[:args.limit]
    only = set(args.only or ["qa", "compose", "lists"])
    qa = qa if "qa" in only else []
    compose = compose if "compose" in only else []
    lists = lists if "lists" in only else []
    # Questions grouped by document (stable): questions sent together on one document share
    # its evaluated prefix.
    order = {k: i for i, k in enumerate(dict.fromkeys(q["docKey"] for q in qa))}
    qa = sorted(qa, key=lambda q: order[q["docKey"]])
    return qa, compose, lists

#!/usr/bin/env python3
"""Reproduces the held-out draw of the evaluation data (stdlib only).

    python3 eval/data/split.py          # print the draw and compare it with the heldOut marks
    python3 eval/data/split.py --write  # set "heldOut": true on the drawn items (and drop "extra")

The draw (see README.md, "Held-out part"): one `random.Random(SEED)` per family (qa: SEED,
compose: SEED + 1). Every item, in file order, gets a key `rng.random()`; the items are sorted
by (stratum, key), where the stratum is (doc, answerable) for questions and kind for compose
items; then `offset = rng.randrange(3)` and every item at a sorted position p with
p % 3 == offset is held out. This is systematic sampling over the stratified order, so each
stratum gives floor or ceil of a third of its items and the family total is a third, rounded.

The draw was made once, over the 123 questions and 44 compose items present when the
held-out part was introduced, and the marks are frozen: never rerun --write over a grown set
(that would move items between the held-out and tuning parts). Draw items added later as a
separate batch (same procedure over the new items only, a new seed) and record it in
README.md; from then on this script's comparison no longer applies to the whole file.
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20240611


def draw(items, stratum, seed):
    rng = random.Random(seed)
    keyed = [(stratum(it), rng.random(), it["id"]) for it in items]
    keyed.sort()
    offset = rng.randrange(3)
    return {iid for p, (_, _, iid) in enumerate(keyed) if p % 3 == offset}


def qa_stratum(q):
    return (q["doc"], bool(q["answerable"]))


def compose_stratum(c):
    return c["kind"]


def main():
    paths = {f: os.path.join(HERE, f + ".json") for f in ("qa", "compose")}
    data = {f: json.load(open(p, encoding="utf-8")) for f, p in paths.items()}
    drawn = {
        "qa": draw(data["qa"], qa_stratum, SEED),
        "compose": draw(data["compose"], compose_stratum, SEED + 1),
    }
    status = 0
    for fam, items in data.items():
        marked = {it["id"] for it in items if it.get("heldOut")}
        n = len(drawn[fam])
        print(f"{fam}: {n} of {len(items)} drawn: {', '.join(sorted(drawn[fam]))}")
        if marked != drawn[fam]:
            print(f"{fam}: marks differ; only marked {sorted(marked - drawn[fam])}, "
                  f"only drawn {sorted(drawn[fam] - marked)}")
            status = 1
        if "--write" in sys.argv:
            for it in items:
                if it["id"] in drawn[fam]:
                    it["heldOut"] = True
                    it.pop("extra", None)
                else:
                    it.pop("heldOut", None)
            with open(paths[fam], "w", encoding="utf-8") as f:
                json.dump(items, f, indent=2, ensure_ascii=False)
                f.write("\n")
    return 0 if "--write" in sys.argv else status


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Validates the Parlance evaluation data set (stdlib only).

    python3 eval/data/check_data.py            # check everything, one-line summary
    python3 eval/data/check_data.py --dump DOC # print DOC's segments with their ids

Transcripts are parsed the way the daemon numbers segments: SRT/WebVTT one segment per
cue in document order (ids 1, 2, 3...; the cue number in the file is ignored), plain text
one segment per blank-line-separated paragraph. Items may carry `"extra": true` (left out of
`make eval`) or `"heldOut": true` (the held-out part; never tuned on, never extra). `<v Name>` tags, other inline tags,
entities and a leading `Name:` speaker label are stripped; a cue's lines are joined
with single spaces. Exits 1 on any failure.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSCRIPTS = os.path.join(HERE, "transcripts")
AUDIENCES = {"executive", "peer", "client", "team", "public"}
REQUIRED_DOCS = ["beekeeping.srt", "standup.vtt", "cocina.txt", "clinic.txt", "lecture-fr.vtt", "council.srt",
                 "product.txt", "support.srt"]
LONG_DOC, LONG_MIN_CHARS = "council.srt", 24000
PLAIN_MAX = 350
# Minimum sizes of the whole set and of its held-out part (README.md, "Held-out part").
MIN_QA, MIN_UNANSWERABLE, MIN_COMPOSE = 110, 40, 42
MIN_HELD_UNANSWERABLE, MIN_HELD_COMPOSE = 12, 14
HELD_SHARE = (0.28, 0.38)  # "about one third" of each family

errors = []


def fail(msg):
    errors.append(msg)


def check_marks(family, item_id, item):
    """`extra` and `heldOut` are optional, `true` when present, and never together."""
    for key in ("extra", "heldOut"):
        if key in item and item[key] is not True:
            fail(f"{family} {item_id}: {key} must be true when present, got {item[key]!r}")
    if item.get("extra") and item.get("heldOut"):
        fail(f"{family} {item_id}: a held-out item cannot be extra (make eval must run it)")


# --- text cleaning (mirrors Sources/ParlanceDocuments/CueText.swift and Markup.swift) ---

NOT_NAMES = set("""note notes nb warning caution important tip hint example question answer update edit
step result reason remember so and but well yes no okay ok now then here this that first second third
fourth fifth finally one two three four five six seven eight nine ten source summary ps re fyi todo fact
translation chorus verse bonus spoiler disclaimer goal problem solution conclusion definition quote title
subject date time location total also plus why what how who when where lesson rule""".split())
ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "nbsp": " "}
TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9._-]*|\d[\d:.]*)(\s[^<>]*)?>")


def is_name(name):
    words = name.split(" ")
    if not 1 <= len(words) <= 4 or any(not w for w in words):
        return False
    for k, w in enumerate(words):
        if not (w[0].isupper() or (k > 0 and w.isdigit())):
            return False
        if not all(c.isalnum() or c in ".'\u2019-" for c in w):
            return False
        if w[0].isdigit() and not w.isdigit():
            return False
    return name.lower() not in NOT_NAMES


def speaker_label(s):
    """(name, rest) when s starts with a `Name:` label, else None."""
    colon = s[:80].find(":")
    if colon <= 0:
        return None
    if colon + 1 < len(s) and not s[colon + 1].isspace():
        return None
    name = s[:colon]
    if not is_name(name):
        return None
    return name, s[colon + 1:].lstrip()


def clean_line(raw):
    """(speaker, text, dashed) for one raw cue/paragraph line."""
    voice = None

    def tag(m):
        nonlocal voice
        base = m.group(2).split(".")[0].lower()
        if m.group(1) == "" and base == "v" and m.group(3) and voice is None:
            voice = m.group(3).strip()
        return " " if base == "br" else ""

    text = TAG.sub(tag, raw)
    text = re.sub(r"\{\\[^}]*\}", "", text)
    text = re.sub(r"&(amp|lt|gt|quot|apos|nbsp);", lambda m: ENTITIES[m.group(1)], text)
    text = text.lstrip()
    dashed = False
    if re.match(r"^-\s", text) or re.match(r"^[\u2013\u2014]", text):
        dashed = True
        text = text[1:].lstrip()
    label = speaker_label(text)
    if label:
        return label[0], label[1], dashed
    return voice, text, dashed


def collapse(parts):
    return " ".join(" ".join(parts).split())


# --- parsers ---

TIMING = re.compile(r"^(\d{2}):(\d{2}):(\d{2})([,.])(\d{3}) --> (\d{2}):(\d{2}):(\d{2})([,.])(\d{3})(\s.*)?$")


def seconds(h, m, s, ms):
    return int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000


def parse_cues(path, vtt):
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    if vtt:
        if not lines or lines[0].strip() != "WEBVTT":
            fail(f"{name}: first line must be WEBVTT")
        while i < len(lines) and lines[i].strip():
            i += 1
    blocks, cur = [], []
    for k in range(i, len(lines)):
        if lines[k].strip():
            cur.append((k + 1, lines[k]))
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    segments, last_end, carried = [], -1.0, None
    for block in blocks:
        t = next((j for j, (_, l) in enumerate(block) if "-->" in l), None)
        if t is None:
            fail(f"{name}:{block[0][0]}: block without a timing line")
            continue
        lineno, timing = block[t]
        m = TIMING.match(timing.strip())
        sep = "." if vtt else ","
        if not m or m.group(4) != sep or m.group(9) != sep:
            fail(f"{name}:{lineno}: bad timing line {timing!r}")
            continue
        start, end = seconds(*m.group(1, 2, 3, 5)), seconds(*m.group(6, 7, 8, 10))
        if not end > start or start < last_end:
            fail(f"{name}:{lineno}: times must increase ({timing.strip()})")
        last_end = end
        before = block[:t]
        if vtt and before:
            fail(f"{name}:{lineno}: keep VTT cues without identifiers")
        if not vtt and [l.strip() for _, l in before] != [str(len(segments) + 1)]:
            fail(f"{name}:{lineno}: SRT cue number should be {len(segments) + 1}")
        text_lines = [l for _, l in block[t + 1:]]
        if not 1 <= len(text_lines) <= 2:
            fail(f"{name}:{lineno}: cue must have 1-2 text lines, has {len(text_lines)}")
        cleaned = [clean_line(l) for l in text_lines]
        for j, (spk, _, dashed) in enumerate(cleaned):
            if dashed:
                fail(f"{name}:{lineno}: dialogue dash at line start")
            if j > 0 and spk is not None and spk != cleaned[0][0] and speaker_label(text_lines[j].lstrip()):
                fail(f"{name}:{lineno}: second line reads as a new speaker label {text_lines[j]!r}")
        speaker = cleaned[0][0] or carried if cleaned else carried
        carried = speaker
        text = collapse([c[1] for c in cleaned])
        if not text:
            fail(f"{name}:{lineno}: empty cue text")
        segments.append({"id": len(segments) + 1, "speaker": speaker, "text": text})
    return segments


def parse_plain(path):
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    if re.search(r"^\d.*-->", raw, re.M):
        fail(f"{name}: contains a timing line; it would be detected as SRT")
    segments, carried = [], None
    for para in re.split(r"\n[ \t]*\n", raw.strip("\n")):
        lines = [l for l in para.split("\n") if l.strip()]
        if not lines:
            continue
        if len(lines) != 1:
            fail(f"{name}: paragraph must be a single line: {lines[0][:50]!r}")
        spk, text, _ = clean_line(" ".join(lines))
        if spk is None:
            fail(f"{name}: paragraph lacks a `Name:` label: {text[:50]!r}")
        if len(para) >= PLAIN_MAX:
            fail(f"{name}: paragraph has {len(para)} characters (limit {PLAIN_MAX}): {text[:50]!r}")
        carried = spk or carried
        segments.append({"id": len(segments) + 1, "speaker": carried, "text": collapse([text])})
    return segments


def parse(doc):
    path = os.path.join(TRANSCRIPTS, doc)
    if doc.endswith(".srt"):
        return parse_cues(path, vtt=False)
    if doc.endswith(".vtt"):
        return parse_cues(path, vtt=True)
    return parse_plain(path)


# --- checks ---


def load(name):
    try:
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{name}: {e}")
        return []


def check_qa(qa, docs):
    seen, per_doc = set(), {}
    for q in qa:
        qid = q.get("id", "?")
        if qid in seen:
            fail(f"qa {qid}: duplicate id")
        seen.add(qid)
        keys = {"id", "doc", "question", "answerable", "gold", "evidence", "answer"}
        if set(q) - {"extra", "heldOut"} != keys:
            fail(f"qa {qid}: keys must be exactly {sorted(keys)} (plus extra, heldOut), got {sorted(q)}")
            continue
        check_marks("qa", qid, q)
        if not isinstance(q["question"], str) or not q["question"].strip():
            fail(f"qa {qid}: empty question")
        doc = q["doc"]
        if doc not in docs:
            fail(f"qa {qid}: doc {doc!r} does not exist")
            continue
        per_doc.setdefault(doc, []).append(q)
        segs = docs[doc]
        if q["answerable"] is False:
            if q["gold"] != [] or q["evidence"] is not None or q["answer"] is not None:
                fail(f"qa {qid}: unanswerable items need gold [], evidence null, answer null")
            continue
        if q["answerable"] is not True:
            fail(f"qa {qid}: answerable must be true or false")
            continue
        gold = q["gold"]
        if not isinstance(gold, list) or not 1 <= len(gold) <= 3 or len(set(gold)) != len(gold):
            fail(f"qa {qid}: gold must list 1-3 distinct segment ids")
            continue
        if any(not isinstance(g, int) or not 1 <= g <= len(segs) for g in gold):
            fail(f"qa {qid}: gold {gold} out of range 1..{len(segs)} for {doc}")
            continue
        if gold == [1]:
            fail(f"qa {qid}: answer only in segment 1; pick another question")
        ev, ans = q["evidence"], q["answer"]
        if not isinstance(ev, str) or not ev or not isinstance(ans, str) or not ans.strip():
            fail(f"qa {qid}: answerable items need evidence and answer strings")
            continue
        if ev not in segs[gold[0] - 1]["text"]:
            fail(f"qa {qid}: evidence {ev!r} not in {doc} segment {gold[0]}: {segs[gold[0] - 1]['text']!r}")
        elsewhere = [s["id"] for s in segs if s["id"] not in gold and ev in s["text"]]
        if elsewhere:
            fail(f"qa {qid}: evidence {ev!r} also occurs in non-gold segments {elsewhere}")
    for doc in REQUIRED_DOCS:
        n = len(per_doc.get(doc, []))
        if n < 4:
            fail(f"qa: {doc} has {n} questions, need at least 4")
    long_gold = sorted(g for q in per_doc.get(LONG_DOC, []) for g in q["gold"])
    if len(per_doc.get(LONG_DOC, [])) < 8:
        fail(f"qa: {LONG_DOC} needs at least 8 questions")
    elif LONG_DOC in docs and long_gold:
        n = len(docs[LONG_DOC])
        if long_gold[0] > n // 5 or long_gold[-1] < n - n // 5:
            fail(f"qa: {LONG_DOC} gold ids {long_gold[0]}..{long_gold[-1]} do not span its {n} segments")
    return per_doc


def check_compose(items):
    seen, langs = set(), 0
    for c in items:
        cid = c.get("id", "?")
        if cid in seen:
            fail(f"compose {cid}: duplicate id")
        seen.add(cid)
        for k in ("id", "kind", "text", "facts", "audience"):
            if k not in c:
                fail(f"compose {cid}: missing {k}")
        extra = set(c) - {"id", "kind", "text", "facts", "audience", "language", "extra", "heldOut"}
        if extra:
            fail(f"compose {cid}: unexpected keys {sorted(extra)}")
        check_marks("compose", cid, c)
        text, facts = c.get("text", ""), c.get("facts", [])
        if c.get("audience") not in AUDIENCES:
            fail(f"compose {cid}: audience {c.get('audience')!r} not in {sorted(AUDIENCES)}")
        if not isinstance(facts, list) or not 2 <= len(facts) <= 5:
            fail(f"compose {cid}: facts must list 2-5 strings")
            facts = []
        for fact in facts:
            if not isinstance(fact, str) or not fact or fact not in text:
                fail(f"compose {cid}: fact {fact!r} is not a substring of the text")
        sentences = len(re.findall(r"[.!?](\s|$)", text.strip()))
        if not 2 <= sentences <= 5:
            fail(f"compose {cid}: text has {sentences} sentences, want 2-5")
        if c.get("language", "en") != "en":
            langs += 1
    if langs < 2:
        fail(f"compose: need at least 2 non-English items, have {langs}")


def main():
    docs = {}
    for doc in REQUIRED_DOCS:
        if not os.path.exists(os.path.join(TRANSCRIPTS, doc)):
            fail(f"missing transcript {doc}")
    for doc in sorted(os.listdir(TRANSCRIPTS)) if os.path.isdir(TRANSCRIPTS) else []:
        docs[doc] = parse(doc)

    if len(sys.argv) == 3 and sys.argv[1] == "--dump":
        for s in docs.get(sys.argv[2], []):
            print(f"{s['id']:4d} [{s['speaker']}] {s['text']}")
        for e in errors:
            print("FAIL", e, file=sys.stderr)
        return 1 if errors else 0

    if LONG_DOC in docs:
        chars = sum(len(s["text"]) for s in docs[LONG_DOC])
        if chars < LONG_MIN_CHARS:
            fail(f"{LONG_DOC}: {chars} characters of cue text, need {LONG_MIN_CHARS}")
    qa = load("qa.json")
    compose = load("compose.json")
    if not isinstance(qa, list) or not isinstance(compose, list):
        fail("qa.json and compose.json must be JSON arrays")
        qa, compose = [], []
    check_qa([q for q in qa if isinstance(q, dict)], docs)
    check_compose([c for c in compose if isinstance(c, dict)])
    qa = [q for q in qa if isinstance(q, dict)]
    compose = [c for c in compose if isinstance(c, dict)]
    answerable = sum(1 for q in qa if q.get("answerable") is True)
    unanswerable = sum(1 for q in qa if q.get("answerable") is False)
    if len(qa) < MIN_QA:
        fail(f"qa: {len(qa)} questions, need at least {MIN_QA}")
    if unanswerable < MIN_UNANSWERABLE:
        fail(f"qa: {unanswerable} unanswerable questions, need at least {MIN_UNANSWERABLE}")
    if len(compose) < MIN_COMPOSE:
        fail(f"compose: {len(compose)} items, need at least {MIN_COMPOSE}")
    held_qa = [q for q in qa if q.get("heldOut") is True]
    held_unanswerable = sum(1 for q in held_qa if q.get("answerable") is False)
    held_compose = [c for c in compose if c.get("heldOut") is True]
    if held_unanswerable < MIN_HELD_UNANSWERABLE:
        fail(f"qa: {held_unanswerable} held-out unanswerable questions, need at least {MIN_HELD_UNANSWERABLE}")
    if len(held_compose) < MIN_HELD_COMPOSE:
        fail(f"compose: {len(held_compose)} held-out items, need at least {MIN_HELD_COMPOSE}")
    for family, items, held in (("qa", qa, held_qa), ("compose", compose, held_compose)):
        if items and not HELD_SHARE[0] <= len(held) / len(items) <= HELD_SHARE[1]:
            fail(f"{family}: {len(held)} of {len(items)} items held out, want about a third")
    core_qa = sum(1 for q in qa if not q.get("extra"))
    core_compose = sum(1 for c in compose if not c.get("extra"))

    for e in errors:
        print("FAIL", e, file=sys.stderr)
    cues = ", ".join(f"{d} {len(s)}" for d, s in docs.items())
    long_chars = sum(len(s["text"]) for s in docs.get(LONG_DOC, []))
    status = "FAILED" if errors else "ok"
    print(f"eval data {status}: {len(qa)} questions ({answerable} answerable, {unanswerable} unanswerable; "
          f"{len(held_qa)} held out, {held_unanswerable} of them unanswerable; {core_qa} run by make eval), "
          f"{len(compose)} compose items ({len(held_compose)} held out; {core_compose} run by make eval); "
          f"segments {cues}; {LONG_DOC} {long_chars} chars"
          + (f"; {len(errors)} errors" if errors else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

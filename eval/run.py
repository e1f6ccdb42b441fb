#!/usr/bin/env python3
"""Parlance quality eval: run the labeled set in eval/data through the real daemon and model,
and through llama.cpp's own llama-server as the peer to beat.

    make eval                                      # off, on and peer, the core set
    python3 eval/run.py --only qa --limit 5        # a quick look at one family
    python3 eval/run.py --columns on,peer --concurrency 2

Columns run one after another (never two model processes at once):
  off, on   one daemon each (`--stdio --no-history`, a fresh temporary `--cache-dir` and
            `--data-dir`): "off" sends `verify: false` (the daemon's checks are only
            reported), "on" sends `verify: true`. A daemon whose spec (`parlance --print-spec`)
            has no `verify` param gets one daemon column, "default", with the params it knows.
  peer      llama-server from scripts/setup-llama-server.sh (or --llama-server) on a free
            port: the same model file, the daemon's default context and threads (from
            `parlance --help`), `-np 1`, requests one at a time, the daemon's default
            temperature per task and the same seed. Plain hand-written prompts, not
            Parlance's: Q&A gets the transcript's segments numbered "[1] ..." (the whole
            transcript when it fits the context, else the first N segments that fit: no
            retrieval), the question and an instruction, with JSON-schema output {answer,
            citations:[int], found}; compose asks for one tone per request; summarize and
            highlights ask for the daemon's result fields as JSON. Its text is scored by the
            same functions; formality by a Python port of the daemon's Formality.score, and
            badButPassed counts every bad output (nothing checks them).
Every metric is computed here from the answers and the labels, independently of the daemon's
own `verification`.

Items with `"heldOut": true` in the data are scored apart from the rest (the tuning part);
the targets are judged on the held-out part of the verify-on column (on the tuning part for a
family without held-out items, e.g. the list documents), and every figure also has the target
"better than peer". Q&A calibration: expected calibration error (10 equal-width bins) and
Brier score of the answers' `confidenceScore` (n/a when results have none) against
correctness: answerable, found, a gold citation and not degenerate; or unanswerable and
found false.

Prints the tables (every figure per column for the held-out and the tuning part, targets,
better than peer, cost per method: attempts, wall time, on/off ratio) on stdout, or with
--json the JSON summary; writes the summary with the per-question, per-variation and per-list
details of every column (the peer's prompts, settings and raw replies included) to
eval/last-run.json. Exit code 0 even when targets are missed (this is a measurement); 1 when
the run itself failed: the daemon or llama-server crashed or exited badly, a request timed
out, or answered a JSON-RPC error other than a documented generation refusal (-32010).

Data (eval/data, or --data DIR):
  transcripts/*.srt|*.vtt|*.txt   segments numbered 1, 2, 3... in document order
  qa.json        [{"id","doc","question","answerable","gold":[ids],"evidence","answer","heldOut"?}]
  compose.json   [{"id","kind","text","facts":[substrings of text],"audience","language"?,"heldOut"?}]
Lists (analysis/summarize + analysis/highlights) run on Samples/podcast-sample.srt and
transcripts/clinic.txt.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "protocol", "clients", "python"))

from parlance_client import ConnectionClosed, ParlanceClient, RPCError  # noqa: E402

SEED = 42
TONES = ["formal", "casual", "diplomatic", "empathetic"]
LIST_DOCS = ["Samples/podcast-sample.srt", "transcripts/clinic.txt"]  # from the repository root / the data dir
ANALYSES = ["analysis/summarize", "analysis/highlights"]
REFUSAL_CODES = {-32010}  # generationFailed: documented refusals, counted, not fatal

FIGURES = [  # (name, family, metric, printed label, which way is better, comparison, target)
    ("citationHitRate", "qa", "citationHitRate", "Q&A: a gold segment among the citations", "higher", ">=", 0.90),
    ("degenerateRate", "qa", "degenerateRate", "Q&A: answers that are not language", "lower", "==", 0),
    ("unsupportedNumberRate", "qa", "unsupportedNumberRate", "Q&A: answers with a number not in the document", "lower",
     None, None),
    ("notFoundCorrectRate", "qa", "notFoundCorrectRate", "Q&A: unanswerable answered 'not found'", "higher", ">=", 0.75),
    ("wrongNotFoundRate", "qa", "wrongNotFoundRate", "Q&A: answerable wrongly declared not found", "lower", "<=", 0.10),
    ("calibrationECE", "qa", "calibrationECE", "Q&A: confidenceScore ECE (10 bins)", "lower", None, None),
    ("brierScore", "qa", "brierScore", "Q&A: confidenceScore Brier score", "lower", None, None),
    ("keyFactsKeptMean", "compose", "keyFactsKeptMean", "compose: labeled key facts kept (mean)", "higher", ">=", 0.90),
    ("toneSeparation", "compose", "toneSeparation", "compose: formal scores above casual", "higher", ">=", 0.90),
    ("badButPassed", "compose", "badButPassed", "compose: refusal/echo/unchanged returned as passed", "lower", "==", 0),
    ("badOutputs", "compose", "badOutputs", "compose: refusal/echo/unchanged variations", "lower", None, None),
    ("withInventedNumbersOrNames", "compose", "withInventedNumbersOrNames", "compose: variations with invented numbers/names",
     "lower", None, None),
    ("duplicateItems", "lists", "duplicateItems", "lists: duplicate items", "lower", "==", 0),
    ("labelOrNameOnlyItems", "lists", "labelOrNameOnlyItems", "lists: label or bare-name items", "lower", None, None),
    ("targetAudienceIsName", "lists", "targetAudienceIsName", "lists: targetAudience names someone", "lower", None, None),
    ("emptyLists", "lists", "emptyLists", "lists: topics/takeaways/key moments left empty", "lower", None, None),
]
# (name, family, metric path, comparison, target): judged on the verify-on column, on the
# held-out part when the family has held-out items; besides these, every figure has the
# target "better than peer", and the on/off wall-time ratio (overall and per method) <= 1.3.
TARGETS = [(n, fam, (fam, key), op, t) for n, fam, key, _, _, op, t in FIGURES if op is not None]
WALL_RATIO_TARGET = 1.3


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------------------

def fold(s: str) -> str:
    """Lower case, no accents, straight quotes, NFKC (so "é" = "e", "’" = "'")."""
    s = unicodedata.normalize("NFKC", s or "")
    s = s.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    s = "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")
    return s.lower()


def plain(s: str) -> str:
    """Folded, punctuation dropped, whitespace collapsed: for equality of texts."""
    return " ".join(re.findall(r"[^\W_]+", fold(s)))


def tokens(s: str) -> List[str]:
    return re.findall(r"[^\W_]+", fold(s))


def letter_words(s: str) -> List[str]:
    """Words of at least two letters."""
    return [w for w in re.findall(r"[^\W\d_]+", s or "") if len(w) >= 2]


def jaccard(a: str, b: str) -> float:
    x, y = set(tokens(a)), set(tokens(b))
    if not x and not y:
        return 1.0
    return len(x & y) / len(x | y)


_SEP = r"[,.\s\u00a0\u202f']"


def fact_norm(s: str) -> str:
    """For labeled facts: case-insensitive, whitespace and thousands-separator tolerant."""
    s = fold(s)
    s = re.sub(r"(?<=\d)" + _SEP + r"(?=\d{3}(?!\d))", "", s)  # 40,000 / 40 000 / 40.000 -> 40000
    s = re.sub(r"\s+", " ", s).strip()
    return s


# ---------------------------------------------------------------------------------------
# Transcripts: our own segmentation (the labels' numbering), to check the daemon's
# ---------------------------------------------------------------------------------------

TIMING = re.compile(r"^\s*(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}\s*-->\s*(?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}")
TAG = re.compile(r"<[^>]*>")


def parse_segments(path: str, text: str) -> List[str]:
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    ext = os.path.splitext(path)[1].lower()
    blocks = [b for b in re.split(r"\n[ \t]*\n", text) if b.strip()]
    if ext in (".srt", ".vtt"):
        segs = []
        for b in blocks:
            lines = b.split("\n")
            idx = next((i for i, l in enumerate(lines) if TIMING.match(l)), None)
            if idx is None:
                continue  # WEBVTT header, NOTE, STYLE, stray text
            body = " ".join(TAG.sub(lambda m: "", l).strip() for l in lines[idx + 1:] if l.strip())
            segs.append(body)
        return segs
    return [" ".join(b.split()) for b in blocks]


def cue_times(text: str) -> Set[str]:
    """Every cue start/end as an answer may write it: MM:SS (minutes may pass 59), H:MM:SS,
    HH:MM:SS, seconds rounded down."""
    out: Set[str] = set()
    for m in re.finditer(r"(?:(\d+):)?(\d{1,2}):(\d{2})[.,]\d{1,3}", text):
        t = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
        mm, ss = divmod(t, 60)
        hh, m2 = divmod(mm, 60)
        out |= {f"{mm:02d}:{ss:02d}", f"{mm}:{ss:02d}", f"{hh}:{m2:02d}:{ss:02d}", f"{hh:02d}:{m2:02d}:{ss:02d}"}
    return out


TIMESTAMP = re.compile(r"(?<![\d:])\d{1,2}(?::\d{2}){1,2}(?![\d:])")


def strip_cue_times(answer: str, times: Set[str]) -> str:
    """The answer without timestamps that are cue times of the document (an extractive
    answer cites "(Name, 01:38)"); other times stay and their numbers are checked."""
    return TIMESTAMP.sub(lambda m: " " if m.group(0) in times else m.group(0), answer)


def strip_speaker(s: str) -> str:
    return re.sub(r"^[^\W\d_][\w .'-]{0,30}:\s+", "", s)


# ---------------------------------------------------------------------------------------
# Numbers (unsupportedNumberRate)
# ---------------------------------------------------------------------------------------

UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
# Spanish and French number words (answers may follow the document's language), accents folded.
UNITS.update({"dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "diez": 10,
              "once": 11, "doce": 12, "quince": 15, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7,
              "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "quinze": 15})
TENS.update({"veinte": 20, "treinta": 30, "cuarenta": 40, "cincuenta": 50, "sesenta": 60, "setenta": 70, "ochenta": 80,
             "noventa": 90, "vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50, "soixante": 60})
HUNDRED = {"hundred", "cien", "cent", "cents"}
SCALES = {"thousand": 1000, "mil": 1000, "mille": 1000, "million": 10 ** 6, "millon": 10 ** 6, "millones": 10 ** 6,
          "billion": 10 ** 9}
NUMBER_WORD = set(UNITS) | set(TENS) | HUNDRED | set(SCALES) | {"dozen"}
# A lone "one"/"once" is left out: as a pronoun ("one of them") or Spanish "eleven"/English
# "once" it is far more often not a number at all.
LONE_SKIP = {"one", "once"}
DIGITS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def _canon(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.6f}".rstrip("0").rstrip(".")


def word_numbers(s: str, parts: bool = False) -> Set[str]:
    """Numbers written in words, each run read as one value ("one hundred and eighty-seven
    thousand" = 187000, "two point nine" = 2.9); with parts, every word's own value too."""
    ws = re.findall(r"[^\W\d_]+", fold(s))
    out: Set[str] = set()
    i = 0
    while i < len(ws):
        if ws[i] not in NUMBER_WORD:
            i += 1
            continue
        total = cur = 0.0
        j = i
        while j < len(ws):
            w = ws[j]
            if w in UNITS or w in TENS:
                cur += UNITS.get(w, TENS.get(w, 0))
                if parts:
                    out.add(_canon(UNITS.get(w, TENS.get(w, 0))))
            elif w in HUNDRED:
                cur = max(cur, 1) * 100
            elif w in SCALES:
                total += max(cur, 1) * SCALES[w]
                cur = 0
            elif w == "dozen":
                cur = max(cur, 1) * 12
            elif w in ("and", "y", "et") and j + 1 < len(ws) and ws[j + 1] in NUMBER_WORD and j > i:
                pass
            elif w in ("point", "coma", "virgule") and j > i and j + 1 < len(ws) and ws[j + 1] in UNITS:
                k, digits = j + 1, ""
                while k < len(ws) and ws[k] in UNITS and UNITS[ws[k]] < 10:
                    digits += str(UNITS[ws[k]])
                    k += 1
                cur += float("0." + digits) if digits else 0
                j = k
                break
            else:
                break
            j += 1
        if not (j - i == 1 and ws[i] in LONE_SKIP):
            out.add(_canon(total + cur))
        i = max(j, i + 1)
    return out


def numbers_in(s: str) -> Set[str]:
    """Every number in s as a canonical string: digits (40,000 -> 40000; 3.50 -> 3.5) and
    runs of number words (twenty-five -> 25)."""
    out: Set[str] = set()
    for m in DIGITS.finditer(s or ""):
        out.add(_canon(float(m.group(0).replace(",", ""))))
    return out | word_numbers(s or "")


def doc_numbers(s: str) -> Set[str]:
    nums = numbers_in(s) | word_numbers(s, parts=True)
    nums |= {_canon(int(d)) for d in re.findall(r"\d+", s)}  # every digit run alone, too
    return nums


# ---------------------------------------------------------------------------------------
# QA checks
# ---------------------------------------------------------------------------------------

PROMPT_ECHO = ["[id]", "ids of the lines", "the lines that support it", "citations", "relatedtopics",
               "related topics", "up to 4 short topics", "short topics", "confidence (low", "low, medium or high",
               "a few sentences", "answer the question from the transcript"]
JSON_PUNCT = re.compile(r'\[\s*"|"\s*\]|\]\s*\[|\{\s*"|"\s*\}|"\s*:\s*["\[{\d]|\]\s*,\s*"|",\s*"')
MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
          "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
BARE = re.compile(
    r"(?:\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:\s*(?:-|–|—|-->|to)\s*\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?)?"
    r"|[-+]?\$?\d[\d,.\s]*%?"
    r"|\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?"
    r"|(?:" + MONTHS + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:" + MONTHS + r")(?:,?\s+\d{4})?"
    r"|(?:" + MONTHS + r")\s+\d{4})", re.I)

NOT_FOUND = re.compile("|".join([
    # English
    r"\bnot (?:\w+ ){0,2}(?:mentioned|found|discussed|stated|specified|covered|provided|given|said|included|addressed|available|clear)\b",
    r"\bnot in the (?:transcript|document|text|conversation|episode)",
    r"\b(?:no|any) (?:information|mention|details?|reference|indication)\b",
    r"\b(?:doesn't|does not|didn't|did not|don't|do not) (?:\w+ ){0,2}(?:mention|say|specify|state|discuss|cover|include|tell|reveal)",
    r"\b(?:isn't|is not|wasn't|was not|aren't|are not) (?:\w+ ){0,2}(?:mentioned|discussed|stated|specified|covered|said)",
    r"\bnever (?:mentioned|discussed|stated|said)", r"\bnowhere in\b", r"\bunknown\b", r"\bcannot be determined\b",
    r"\bcan't be determined\b", r"\bno answer\b", r"\bnot known\b",
    # Spanish (accents folded)
    r"\bno se (?:menciona|encuentra|dice|especifica|indica|habla|discute|aborda)", r"\bno (?:aparece|figura|esta en)",
    r"\bno (?:hay|se da|se proporciona) (?:\w+ )?(?:informacion|mencion|datos)", r"\bno (?:lo )?menciona",
    r"\bno (?:se )?(?:ha )?(?:encontrado|encontro)", r"\bsin (?:informacion|mencion)", r"\bno dice\b", r"\bno especifica\b",
    # French (accents folded)
    r"\bn'est pas (?:\w+ )?(?:mentionne|indique|precise|dit|aborde|evoque|dans)", r"\bpas mentionne",
    r"\bne (?:le |l')?(?:mentionne|precise|dit|indique|parle) (?:pas|rien)", r"\baucune (?:information|mention|indication)",
    r"\bintrouvable\b", r"\bne figure pas\b", r"\bn'apparait pas\b", r"\bnon mentionne", r"\bn'en parle pas\b",
]))


def degenerate_reasons(answer: str, first_segment: str) -> List[str]:
    a = (answer or "").strip()
    why = []
    if len(letter_words(a)) < 2:
        why.append("fewerThan2Words")
    visible = [c for c in a if not c.isspace()]
    if visible and sum(c.isalpha() for c in visible) / len(visible) < 0.5:
        why.append("mostlyNonLetters")
    if a and BARE.fullmatch(a.strip(" .,;:!?\"'()[]")):
        why.append("bareTimestampNumberDate")
    if JSON_PUNCT.search(a):
        why.append("jsonPunctuation")
    fa = fold(a)
    echo = [p for p in PROMPT_ECHO if p in fa]
    if echo:
        why.append("promptEcho:" + ",".join(echo))
    for seg in {first_segment, strip_speaker(first_segment)}:
        ps = plain(seg)
        if len(ps.split()) >= 4 and ps in plain(a):
            why.append("copiesFirstSegment")
            break
    return why


# ---------------------------------------------------------------------------------------
# Compose checks
# ---------------------------------------------------------------------------------------

REFUSAL = re.compile("|".join([
    r"\bas an ai\b", r"\ban ai (?:language )?model\b", r"\b(?:a|an) (?:large )?language model\b", r"\bi(?: am|'m) an ai\b",
    r"\bi(?: am|'m)? (?:not able|unable) to (?:help|assist|comply|do|provide|rewrite|fulfil|fulfill|complete)",
    r"\bi (?:cannot|can't|can not|won't) (?:help|assist|comply|do that|provide|rewrite|fulfil|fulfill|complete|write)",
    r"\bsorry,? (?:but )?i (?:cannot|can't|can not|am unable|'m unable)", r"\bi apologi[sz]e,? but\b",
    r"\bcomo (?:un )?(?:modelo de lenguaje|ia|inteligencia artificial)", r"\blo siento,? (?:pero )?no puedo",
    r"\ben tant qu'(?:ia|intelligence artificielle|modele de langage)", r"\bdesole,? (?:mais )?je ne peux pas",
    r"\bje ne peux pas (?:vous )?aider",
]))
ECHO = ["rewrite the text", "rewrite the following", "here is the rewritten", "rewritten version", "tone:", "in the tone", "keep every fact", "add nothing",
        "rewritten text", "reply with the rewritten", "text below", "polite and professional, complete sentences",
        "contractions are fine", "acknowledge how the reader may feel", "soften bad news, stay positive",
        "no contractions or slang", "courteous, no internal jargon", "outcomes and decisions first",
        "plain language, no internal details", "the main point first, no filler"]


NOT_NAMES = set("""i i'm i'll i've i'd dear hi hello hey best regards kind thanks thank please sincerely warm warmly
yours cheers team all everyone monday tuesday wednesday thursday friday saturday sunday january february march april
may june july august september october november december the a an we our you your this that it if as at on in for
and but so just also unfortunately however""".split())


def invented(text: str, original: str) -> Dict[str, List[str]]:
    """Numbers, and capitalised words inside a sentence, that the variation has and the
    selection has not (informational: a copied prompt example, an invented date or name)."""
    nums = sorted(numbers_in(text) - doc_numbers(original))
    src = set(tokens(original))
    names = []
    for m in re.finditer(r"\b[A-Z][\w'\u2019-]*", text):
        w = m.group(0)
        before = text[:m.start()]
        prev = before.rstrip(" \t")
        if not prev or prev[-1] in "!?:\n" or (prev[-1] == "." and not re.search(r"\b(?:Dr|Mr|Mrs|Ms|St|Prof)\.$", prev)):
            continue  # a sentence's (or line's) first word
        t = tokens(w)
        if t and t[0] not in src and t[0] not in NOT_NAMES and w not in names:
            names.append(w)
    return {k: v for k, v in (("numbers", nums), ("names", names)) if v}


def compose_flags(text: str, original: str, facts: Sequence[str]) -> Tuple[List[str], List[str], List[str]]:
    """(failure categories, facts kept, facts missing) of one variation."""
    cats = []
    ft = fold(text)
    if REFUSAL.search(ft):
        cats.append("refusal")
    if any(p in ft for p in ECHO):
        cats.append("instructionEcho")
    if plain(text) == plain(original):
        cats.append("unchanged")
    nt = fact_norm(text)
    kept = [f for f in facts if fact_norm(f) in nt]
    missing = [f for f in facts if fact_norm(f) not in nt]
    if missing:
        cats.append("factsMissing")
    return cats, kept, missing


# ---------------------------------------------------------------------------------------
# Formality: a faithful port of Sources/ParlanceFeatures/Compose/Formality.swift (the daemon
# does not expose its scorer), so the peer's text is scored exactly as the daemon's
# `formalityScore`. Swift Characters are grapheme clusters, Python's code points: the text is
# NFC-normalised first so the two agree for everything but emoji sequences.
# ---------------------------------------------------------------------------------------

_F_CASUAL = set("""hey hi hiya yeah yep yup nope gonna wanna gotta kinda sorta cool awesome stuff guys ok okay lol btw thx
tbh fyi asap hmm oops wow folks chill cheers super totally basically anyway anyways literally pretty bunch grab heads-up
no-brainer sure dude buddy yay ugh oh alright bummer crazy huge tons lots stoked ping""".split())
_F_FORMAL = set("""therefore furthermore moreover however regarding accordingly consequently hereby kindly sincerely
respectfully would shall ensure request requested require requires required appreciate additionally subsequently
nevertheless thus hence pursuant inform notify approximately commence regards dear assist provide facilitate prior sincere
apologize apologise acknowledge regret advise please whereas concerning receipt anticipate endeavour endeavor further
accommodate obtain purchase indicate significant substantial sufficient objective objectives proceed rescheduled postponed
enclosed attached aforementioned""".split())
_F_STRUCTURE = set("""a an the of in on for with to by from at about into through during before after above below between
under over within without upon among regarding concerning toward towards per via despite following""".split())
_F_PERSONAL = {"i", "me", "my", "you", "your", "u", "ya"}
_F_ABBREV = {"e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "approx."}
# Unicode's Emoji_Presentation ranges (emoji-data.txt), for `isEmojiPresentation`.
_EMOJI_PRESENTATION = [
    (0x231A, 0x231B), (0x23E9, 0x23EC), (0x23F0, 0x23F0), (0x23F3, 0x23F3), (0x25FD, 0x25FE), (0x2614, 0x2615),
    (0x2648, 0x2653), (0x267F, 0x267F), (0x2693, 0x2693), (0x26A1, 0x26A1), (0x26AA, 0x26AB), (0x26BD, 0x26BE),
    (0x26C4, 0x26C5), (0x26CE, 0x26CE), (0x26D4, 0x26D4), (0x26EA, 0x26EA), (0x26F2, 0x26F3), (0x26F5, 0x26F5),
    (0x26FA, 0x26FA), (0x26FD, 0x26FD), (0x2705, 0x2705), (0x270A, 0x270B), (0x2728, 0x2728), (0x274C, 0x274C),
    (0x274E, 0x274E), (0x2753, 0x2755), (0x2757, 0x2757), (0x2795, 0x2797), (0x27B0, 0x27B0), (0x27BF, 0x27BF),
    (0x2B1B, 0x2B1C), (0x2B50, 0x2B50), (0x2B55, 0x2B55), (0x1F004, 0x1F004), (0x1F0CF, 0x1F0CF), (0x1F18E, 0x1F18E),
    (0x1F191, 0x1F19A), (0x1F1E6, 0x1F1FF), (0x1F201, 0x1F201), (0x1F21A, 0x1F21A), (0x1F22F, 0x1F22F),
    (0x1F232, 0x1F236), (0x1F238, 0x1F23A), (0x1F250, 0x1F251), (0x1F300, 0x1F320), (0x1F32D, 0x1F335),
    (0x1F337, 0x1F37C), (0x1F37E, 0x1F393), (0x1F3A0, 0x1F3CA), (0x1F3CF, 0x1F3D3), (0x1F3E0, 0x1F3F0),
    (0x1F3F4, 0x1F3F4), (0x1F3F8, 0x1F43E), (0x1F440, 0x1F440), (0x1F442, 0x1F4FC), (0x1F4FF, 0x1F53D),
    (0x1F54B, 0x1F54E), (0x1F550, 0x1F567), (0x1F57A, 0x1F57A), (0x1F595, 0x1F596), (0x1F5A4, 0x1F5A4),
    (0x1F5FB, 0x1F64F), (0x1F680, 0x1F6C5), (0x1F6CC, 0x1F6CC), (0x1F6D0, 0x1F6D2), (0x1F6D5, 0x1F6D7),
    (0x1F6DC, 0x1F6DF), (0x1F6EB, 0x1F6EC), (0x1F6F4, 0x1F6FC), (0x1F7E0, 0x1F7EB), (0x1F7F0, 0x1F7F0),
    (0x1F90C, 0x1F93A), (0x1F93C, 0x1F945), (0x1F947, 0x1F9FF), (0x1FA70, 0x1FA7C), (0x1FA80, 0x1FA89),
    (0x1FA8F, 0x1FAC6), (0x1FACE, 0x1FADC), (0x1FADF, 0x1FAE9), (0x1FAF0, 0x1FAF8),
]


def _is_emoji_presentation(c: str) -> bool:
    o = ord(c)
    return o >= 0x231A and any(a <= o <= b for a, b in _EMOJI_PRESENTATION)


def _word_char(c: str) -> bool:
    return c.isalpha() or c.isnumeric()


def formality_words(text: str) -> List[str]:
    """WordDiff.tokens(text).filter(\\.isWord): runs of letters and digits, with inner
    apostrophes (' and ’) and hyphens."""
    out, i, n = [], 0, len(text)
    while i < n:
        if not _word_char(text[i]):
            i += 1
            continue
        j = i + 1
        while j < n and (_word_char(text[j]) or (text[j] in "'\u2019-" and j + 1 < n and _word_char(text[j + 1]))):
            j += 1
        out.append(text[i:j])
        i = j
    return out


def formality_sentences(text: str) -> List[str]:
    """Lexicon.sentences: split after . ! ? before whitespace (not after an initial or a
    common abbreviation) and at line breaks; trimmed of spaces and tabs, non-empty."""
    out, cur = [], ""
    for i, c in enumerate(text):
        if c == "\n":
            out.append(cur)
            cur = ""
            continue
        cur += c
        if c in ".!?" and (i + 1 == len(text) or text[i + 1].isspace()):
            parts = [p for p in cur.split(" ") if p]
            last = parts[-1] if parts else ""
            if last.lower() not in _F_ABBREV and not (len(last) == 2 and last[0].isupper()):
                out.append(cur)
                cur = ""
    out.append(cur)
    out = [s.strip(" \t") for s in out]
    return [s for s in out if any(_word_char(c) for c in s)]


def _is_contraction(w: str) -> bool:
    w = w.replace("\u2019", "'")
    if "'" not in w:
        return w in ("gonna", "wanna", "gotta", "dunno", "lemme", "gimme", "ain't")
    k = w.index("'")
    suffix = w[k:]
    if any(suffix.endswith(s) for s in ("n't", "'re", "'ll", "'ve", "'m", "'d")):
        return True
    return suffix == "'s" and w[:k] in ("it", "that", "there", "here", "what", "let", "he", "she", "who", "where", "how")


def formality(text: str) -> float:
    """Formality.score(text): 0 very casual .. 1 very formal, rounded to 2 decimals."""
    import math
    text = unicodedata.normalize("NFC", text or "")
    words = formality_words(text)
    if not words:
        return 0.5
    n = float(len(words))
    lower = [w.lower() for w in words]
    sentences = formality_sentences(text)
    s = float(max(1, len(sentences)))
    contractions = sum(1 for w in lower if _is_contraction(w))
    casual = sum(1 for w in lower if w in _F_CASUAL)
    formal = sum(1 for w in lower if w in _F_FORMAL)
    personal = sum(1 for w in lower if w in _F_PERSONAL)
    structure = sum(1 for w in lower if w in _F_STRUCTURE)
    exclaims = text.count("!") + sum(1 for c in text if _is_emoji_presentation(c))
    lower_starts = sum(1 for x in sentences if x[0].isalpha() and x[0].islower())
    letters = sum(1 for w in words for c in w if c.isalpha())
    mean_word = letters / n
    mean_sentence = n / s
    z = 0.0
    z -= 18 * contractions / n
    z -= 14 * casual / n
    z -= 0.8 * exclaims / s
    z -= 2 * personal / n
    z += 14 * formal / n
    z += 5 * (structure / n - 0.18)
    z += 1.1 * (mean_word - 4.4)
    z += min(1.2, max(-1.2, 0.06 * (mean_sentence - 14)))
    z -= 1 * lower_starts / s
    p = 1 / (1 + math.exp(-z))
    return math.floor(p * 100 + 0.5) / 100  # Swift's rounded(): half away from zero


# ---------------------------------------------------------------------------------------
# List checks
# ---------------------------------------------------------------------------------------

MARKER = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*\u2022])\s+")  # a leading "1." or "-" list marker
LABEL = re.compile(
    r"(?:transcript|summary|key ?takeaways?|takeaways?|action ?items?|main ?topics?|topics?|segment|line|quote|quotes|"
    r"title|speaker|audience|target ?audience|key ?moments?|none|n/?a|item|point|example|text|answer)"
    r"\s*[:#-]?\s*(?:\[?\d+\]?)?\s*[.:]?", re.I)
PEOPLE = re.compile(
    r"\b(?:people|persons?|listeners?|viewers?|readers?|audiences?|users?|developers?|engineers?|programmers?|"
    r"anyone|everyone|those|who|fans|professionals?|students?|beginners?|experts?|enthusiasts?|teams?|managers?|"
    r"patients?|parents?|families|adults?|children|clinicians?|doctors?|nurses?|staff|workers?|employees?|owners?|"
    r"leaders?|researchers?|practitioners?|hobbyists?|individuals?|members?|community|public|caregivers?|"
    r"makers?|builders?|newcomers?|learners?|curious|interested|general|technical|non-technical)\b", re.I)


def label_or_name_only(item: str) -> Optional[str]:
    s = MARKER.sub("", (item or "").strip()).strip(" .-*•\"'")
    if not s or LABEL.fullmatch(s):
        return "label"
    words = s.split()
    if len(words) <= 3 and all(w[:1].isupper() or not any(c.isalpha() for c in w) for w in words):
        return "nameOnly"
    return None


def audience_is_name(audience: str, doc_text: str) -> bool:
    a = (audience or "").strip().strip(".")
    a2 = re.sub(r"^(?:the|los|las|el|la|les|le)\s+", "", a, flags=re.I)
    if not a2 or PEOPLE.search(a2):
        return False
    words = a2.split()
    if len(words) > 5 or not all(w[:1].isupper() or w.lower() in ("of", "de", "and", "&", "y", "et") for w in words):
        return False
    return a2 in doc_text or a2.lower() in doc_text.lower()


def duplicates(items: Sequence[str]) -> List[Dict[str, Any]]:
    """Items equal to an earlier one after normalising (case, punctuation, a leading "1." or
    "-" list marker) or with token Jaccard >= 0.8; one entry per extra copy."""
    out = []
    bare = [MARKER.sub("", it or "") for it in items]
    for i, it in enumerate(items):
        for j in range(i):
            if plain(bare[i]) == plain(bare[j]) or jaccard(bare[i], bare[j]) >= 0.8:
                out.append({"item": it, "duplicates": items[j], "index": i})
                break
    return out


# ---------------------------------------------------------------------------------------
# The daemon
# ---------------------------------------------------------------------------------------

def method_params(binary: str) -> Dict[str, Dict[str, Any]]:
    out = subprocess.run([binary, "--print-spec"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"{binary} --print-spec exited {out.returncode}: {out.stderr[-500:]}")
    spec = json.loads(out.stdout)
    return {m["name"]: {p["name"]: p.get("schema", {}) for p in m.get("params", [])} for m in spec.get("methods", [])}


class Column:
    """One daemon process and the requests of one column."""

    def __init__(self, name: str, verify: Optional[bool], args: argparse.Namespace, spec: Dict[str, Dict[str, Any]]):
        self.name = name
        self.verify = verify
        self.args = args
        self.spec = spec
        self.errors: List[Dict[str, Any]] = []
        self.fatal: List[str] = []
        self.warnings: List[str] = []
        self.lock = threading.Lock()
        self.done = 0
        self.total = 0
        self.broken = False

    def params(self, method: str, p: Dict[str, Any]) -> Dict[str, Any]:
        known = self.spec.get(method, {})
        p = {k: v for k, v in p.items() if k in known}
        if self.verify is not None and "verify" in known:
            p["verify"] = self.verify
            if self.args.max_attempts is not None and "maxAttempts" in known:
                p["maxAttempts"] = self.args.max_attempts
        return p

    def call(self, client: ParlanceClient, family: str, method: str, params: Dict[str, Any], label: str) -> Dict[str, Any]:
        """{"result"} or {"error"}, with "seconds" (send to response)."""
        t0 = time.monotonic()
        rec: Dict[str, Any] = {}
        if self.broken:  # the daemon died or stopped answering: do not wait on it again
            rec.update(error={"code": None, "name": "skipped", "message": "the daemon failed earlier in this column"}, seconds=0.0)
            with self.lock:
                self.errors.append({"family": family, "method": method, "item": label, "fatal": True, **rec["error"]})
                self.done += 1
            return rec
        try:
            rec["result"] = client.start(method, self.params(method, params)).result(self.args.timeout)
        except RPCError as e:
            rec["error"] = {"code": e.code, "name": e.name, "kind": e.kind, "message": e.message}
            fatal = e.code not in REFUSAL_CODES
            with self.lock:
                self.errors.append({"family": family, "method": method, "item": label, "fatal": fatal, **rec["error"]})
                if fatal:
                    self.fatal.append(f"{method} {label}: {e}")
        except (ConnectionClosed, TimeoutError, OSError) as e:
            rec["error"] = {"code": None, "name": type(e).__name__, "message": str(e)}
            with self.lock:
                self.errors.append({"family": family, "method": method, "item": label, "fatal": True, **rec["error"]})
                self.fatal.append(f"{method} {label}: {type(e).__name__}: {e}")
                self.broken = True
        rec["seconds"] = round(time.monotonic() - t0, 3)
        with self.lock:
            self.done += 1
            n = self.done
        status = "ok" if "result" in rec else f"error {rec['error'].get('code')} {rec['error'].get('kind') or rec['error']['name']}"
        log(f"[{self.name}] {n}/{self.total} {family} {label}: {status} ({rec['seconds']:.1f} s)")
        return rec


ACTIVE: List[ParlanceClient] = []  # daemons running now
STOPPING: List[int] = []  # the signal that stops the run


def on_signal(signum: int, frame: Any) -> None:
    """SIGTERM/SIGINT: close every daemon's input (it cancels its work and exits, so every
    request in flight answers at once), then let the run unwind and remove its files."""
    if not STOPPING:
        log(f"eval: signal {signum}: stopping")
    STOPPING.append(signum)
    for c in list(ACTIVE):
        c.close_input()
    for p in list(PEER_PROCS):
        if p.poll() is None:
            p.terminate()


def run_column(name: str, verify: Optional[bool], args: argparse.Namespace, spec, data: Dict[str, Any]) -> Dict[str, Any]:
    col = Column(name, verify, args, spec)
    tmp = tempfile.mkdtemp(prefix=f"parlance-eval-{name}-")
    cache, datadir = os.path.join(tmp, "cache"), os.path.join(tmp, "data")
    os.makedirs(cache)
    os.makedirs(datadir)
    logpath = os.path.join(tmp, "daemon.log")
    logf = open(logpath, "w")
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    model = ["--model", args.model] if args.model else []
    client = ParlanceClient(args.daemon, ["--cache-dir", cache, "--data-dir", datadir, "--no-history", *model],
                            stderr=logf, default_timeout=args.timeout)
    ACTIVE.append(client)
    out: Dict[str, Any] = {"column": name, "verify": verify, "qa": [], "compose": [], "lists": []}
    try:
        init = client.initialize(client_name="eval/run.py")
        if init["model"].get("availability") != "available":
            raise RuntimeError(f"model unavailable: {init['model']}")
        out["serverVersion"] = init.get("serverInfo", {}).get("version")
        docs: Dict[str, Dict[str, Any]] = {}
        for key, d in data["docs"].items():
            if key in data["needed"]:
                info = client.request("document/open", {"uri": d["uri"], "text": d["text"]})
                docs[key] = info
                if info["segments"] != len(d["segments"]):
                    col.warnings.append(f"{key}: the daemon has {info['segments']} segments, the labels' numbering "
                                        f"{len(d['segments'])}: gold ids may not line up")
        out["documents"] = {k: {"segments": v["segments"], "tokens": v.get("tokens"), "format": v["format"],
                                "language": v.get("language")} for k, v in docs.items()}

        tasks: List[Tuple[str, Callable[[], Any]]] = []
        for q in data["qa"]:
            p = {"uri": data["docs"][q["docKey"]]["uri"], "question": q["question"], "seed": SEED}
            tasks.append(("qa", lambda q=q, p=p: out["qa"].append({"item": q, **col.call(client, "qa", "ask/stream", p, q["id"])})))
        for c in data["compose"]:
            p = {"text": c["text"], "tones": TONES, "seed": SEED, "ephemeral": True}
            aud = c.get("audience")
            if aud and aud in (spec.get("compose/variations", {}).get("audience", {}).get("enum") or [aud]):
                p["audience"] = aud
            if c.get("language"):
                p["language"] = c["language"]
            tasks.append(("compose", lambda c=c, p=p: out["compose"].append(
                {"item": c, **col.call(client, "compose", "compose/variations", p, c["id"])})))
        for key in data["lists"]:
            for m in ANALYSES:
                p = {"uri": data["docs"][key]["uri"], "seed": SEED}
                tasks.append(("lists", lambda key=key, m=m, p=p: out["lists"].append(
                    {"doc": key, "method": m, **col.call(client, "lists", m, p, f"{m.split('/')[1]} {key}")})))
        col.total = len(tasks)
        fam_t: Dict[str, List[float]] = {}

        def execute(task: Tuple[str, Callable[[], Any]]) -> None:
            fam, fn = task
            s = time.monotonic()
            fn()
            e = time.monotonic()
            with col.lock:
                span = fam_t.setdefault(fam, [s, e])
                span[0], span[1] = min(span[0], s), max(span[1], e)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.concurrency)) as pool:
            for f in [pool.submit(execute, t) for t in tasks]:
                f.result()
        out["familySpanSeconds"] = {k: round(v[1] - v[0], 1) for k, v in fam_t.items()}
    except Exception as e:  # noqa: BLE001 - report, never hide
        col.fatal.append(f"{type(e).__name__}: {e}")
    finally:
        try:
            code = client.close(timeout=30)
        except Exception as e:  # noqa: BLE001
            code = f"close failed: {e}"
        logf.close()
        ACTIVE.remove(client)
        if STOPPING:
            shutil.rmtree(tmp, ignore_errors=True)
    if STOPPING:
        raise SystemExit(128 + STOPPING[0])
    out["wallSeconds"] = round(time.monotonic() - t0, 1)
    out["loadAverage"] = {"start": round(load0, 2), "end": round(os.getloadavg()[0], 2)}
    out["exitCode"] = code
    if code != 0:
        col.fatal.append(f"daemon exit code {code}")
    if col.fatal:
        with open(logpath, errors="replace") as f:
            tail = f.read()[-3000:]
        out["daemonLogTail"] = tail
        log(f"[{name}] daemon log, last lines:\n{tail}")
    shutil.rmtree(tmp, ignore_errors=True)  # caches and KV states of this column only
    out["errors"] = col.errors
    out["fatal"] = col.fatal
    out["warnings"] = col.warnings
    for w in col.warnings:
        log(f"[{name}] warning: {w}")
    # keep the order of the data set in the details
    qi = {q["id"]: i for i, q in enumerate(data["qa"])}
    ci = {c["id"]: i for i, c in enumerate(data["compose"])}
    out["qa"].sort(key=lambda r: qi[r["item"]["id"]])
    out["compose"].sort(key=lambda r: ci[r["item"]["id"]])
    out["lists"].sort(key=lambda r: (data["lists"].index(r["doc"]), ANALYSES.index(r["method"])))
    return out


# ---------------------------------------------------------------------------------------
# The peer: llama.cpp's own llama-server, same model file, context and threads, plain
# hand-written prompts (not Parlance's), one request at a time (-np 1)
# ---------------------------------------------------------------------------------------

PEER_TEMPERATURE = {"qa": 0.2, "compose": 0.4, "lists": 0.2}  # the daemon's defaults (the eval sends none)
PEER_MAX_TOKENS = {"qa": 200, "analysis/summarize": 400, "analysis/highlights": 450}  # the daemon's defaults
PEER_TEMPLATE_MARGIN = 48  # tokens of chat template around the one user message
LANGUAGE_NAMES = {"es": "Spanish", "fr": "French", "de": "German", "it": "Italian", "pt": "Portuguese"}
AUDIENCE_WORDS = {"executive": "an executive", "peer": "a peer", "client": "a client", "team": "the team", "public": "the public"}

PEER_QA_SCHEMA = {"type": "object", "properties": {
    "answer": {"type": "string"}, "citations": {"type": "array", "items": {"type": "integer"}}, "found": {"type": "boolean"}},
    "required": ["answer", "citations", "found"]}
PEER_SUMMARY_SCHEMA = {"type": "object", "properties": {
    "summary": {"type": "string"},
    "mainTopics": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 5},
    "keyTakeaways": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 5},
    "targetAudience": {"type": "string"},
    "engagementLevel": {"type": "string", "enum": ["low", "medium", "high"]}},
    "required": ["summary", "mainTopics", "keyTakeaways", "targetAudience", "engagementLevel"]}
PEER_HIGHLIGHTS_SCHEMA = {"type": "object", "properties": {
    "keyMoments": {"type": "array", "items": {"type": "object", "properties": {
        "title": {"type": "string"}, "segmentId": {"type": "integer"}}, "required": ["title", "segmentId"]}},
    "quotes": {"type": "array", "items": {"type": "object", "properties": {
        "text": {"type": "string"}, "segmentIds": {"type": "array", "items": {"type": "integer"}}},
        "required": ["text", "segmentIds"]}},
    "actionItems": {"type": "array", "items": {"type": "string"}}},
    "required": ["keyMoments", "quotes", "actionItems"]}

PEER_QA_INSTRUCTION = ("Answer from the transcript only. Give the answer, the numbers of the segments that support it, "
                       "and say 'not mentioned in the transcript' if it does not say.")
PEER_SUMMARY_INSTRUCTION = ("Summarize this transcript: a 2-3 sentence summary, 3-5 main topics, 3-5 key takeaways "
                            "(each a full sentence), who it is for (the target audience) and how engaging it is "
                            "(low, medium or high).")
PEER_HIGHLIGHTS_INSTRUCTION = ("Pick the highlights of this transcript: the key moments (a short title and the number of "
                               "the segment each), notable quotes (the exact words and the numbers of their segments), "
                               "and the action items (each a full sentence; none if there are none).")

PEER_PROCS: List[subprocess.Popen] = []  # llama-server running now


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def daemon_defaults(binary: str) -> Dict[str, int]:
    """The daemon's default context size and threads, as its --help states them."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    text = out.stdout + out.stderr
    ctx = re.search(r"--ctx N\s.*?\(default (\d+)\)", text)
    thr = re.search(r"--threads defaults to (\d+)", text)
    return {"contextSize": int(ctx.group(1)) if ctx else 4096,
            "threads": int(thr.group(1)) if thr else max(1, (os.cpu_count() or 2))}


def store_model_path(args: argparse.Namespace) -> Optional[str]:
    """The file behind --model (a path, or a store name the daemon lists as available)."""
    if not args.model:
        return None
    if os.path.isfile(args.model):
        return args.model
    if args.model.startswith("openai:"):
        raise SystemExit("eval: the peer column runs llama-server on a GGUF file; a remote --model has none (use --columns off,on)")
    listed = json.loads(subprocess.run([args.daemon, "models", "--json"], capture_output=True, text=True, check=True).stdout)
    for m in listed.get("available", []):
        if m["name"] == args.model:
            return m["path"]
    raise SystemExit(f"eval: --model {args.model} is not on this machine (parlance models lists what is; parlance models pull gets it)")


def peer_model_path(args: argparse.Namespace) -> str:
    for p in (args.peer_model, store_model_path(args), os.environ.get("PARLANCE_MODEL"), os.environ.get("PARLANCE_DEFAULT_MODEL")):
        if p and os.path.isfile(p):
            return p
    raise SystemExit("eval: peer column: no model file (--peer-model, $PARLANCE_MODEL or $PARLANCE_DEFAULT_MODEL; "
                     "run under eval \"$(scripts/setup.sh)\")")


def llama_server_path(args: argparse.Namespace) -> str:
    p = args.llama_server or os.environ.get("PARLANCE_LLAMA_SERVER")
    if not p:
        out = subprocess.run([os.path.join(ROOT, "scripts", "setup-llama-server.sh")], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"eval: peer column: scripts/setup-llama-server.sh failed: {out.stderr[-500:]}")
        p = out.stdout.strip().splitlines()[-1]
    if not os.path.isfile(p):
        raise SystemExit(f"eval: peer column: no llama-server at {p}")
    return p


class Peer:
    """One llama-server process."""

    def __init__(self, server: str, model: str, ctx: int, threads: int, logf: Any):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.argv = [server, "-m", model, "--host", "127.0.0.1", "--port", str(self.port), "-c", str(ctx), "-np", "1",
                     "-t", str(threads), "--no-webui", "--seed", str(SEED)]
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        PEER_PROCS.append(self.proc)

    def http(self, path: str, body: Optional[Dict[str, Any]] = None, timeout: float = 600.0) -> Any:
        import urllib.request
        req = urllib.request.Request(self.base + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read().decode() or "null")

    def wait_healthy(self, timeout: float = 300.0) -> None:
        import urllib.error
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited {self.proc.returncode} before /health answered")
            if STOPPING:
                raise SystemExit(128 + STOPPING[0])
            try:
                if (self.http("/health", timeout=5) or {}).get("status") == "ok":
                    return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.5)
        raise TimeoutError(f"llama-server: no /health after {timeout:.0f} s")

    def count(self, text: str) -> int:
        return len(self.http("/tokenize", {"content": text})["tokens"])

    def chat(self, prompt: str, temperature: float, max_tokens: int, schema: Optional[Dict[str, Any]] = None,
             timeout: float = 600.0) -> Dict[str, Any]:
        body: Dict[str, Any] = {"messages": [{"role": "user", "content": prompt}], "temperature": temperature,
                                "seed": SEED, "max_tokens": max_tokens}
        if schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        return self.http("/v1/chat/completions", body, timeout=timeout)

    def stop(self) -> Optional[int]:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        if self.proc in PEER_PROCS:
            PEER_PROCS.remove(self.proc)
        return self.proc.returncode


def numbered(segs: Sequence[str], n: int) -> str:
    return "\n".join(f"[{i + 1}] {s}" for i, s in enumerate(segs[:n]))


def fit_segments(peer: Peer, doc: Dict[str, Any], prompt_of: Callable[[str], str], reserve: int, ctx: int) -> int:
    """How many segments, from the first, fit the context with the rest of the prompt and
    `reserve` tokens of answer: all of them when the whole transcript fits; otherwise the first
    N that fit (no retrieval: a user pasting the start of a long transcript)."""
    segs = doc["segments"]
    budget = ctx - reserve - PEER_TEMPLATE_MARGIN
    if peer.count(prompt_of(numbered(segs, len(segs)))) <= budget:
        return len(segs)
    if "peerLineTokens" not in doc:
        doc["peerLineTokens"] = [peer.count(f"[{i + 1}] {s}") + 1 for i, s in enumerate(segs)]
    fixed = peer.count(prompt_of(""))
    n, used = 0, fixed
    while n < len(segs) and used + doc["peerLineTokens"][n] <= budget:
        used += doc["peerLineTokens"][n]
        n += 1
    while n > 0 and peer.count(prompt_of(numbered(segs, n))) > budget:  # tokenizer merges across lines
        n -= 1
    return n


def parse_json_reply(content: str) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """The reply's JSON object; one cut off by max_tokens is closed at the last complete value
    (an unterminated string kept as far as it goes), as a user would salvage it."""
    try:
        v = json.loads(content)
        return (v, None) if isinstance(v, dict) else (None, "not an object")
    except ValueError as e:
        err = f"{type(e).__name__}: {e}"
    for end in range(len(content), 0, -1):
        if end != len(content) and content[end - 1] not in '"]}0123456789el':
            continue
        stack: List[str] = []
        in_str = esc = False
        for ch in content[:end]:
            if in_str:
                esc, in_str = (False, True) if esc else (ch == "\\", ch != '"')
            elif ch == '"':
                in_str = True
            elif ch in "{[":
                stack.append("}" if ch == "{" else "]")
            elif ch in "}]" and stack:
                stack.pop()
        head = content[:end] + ('"' if in_str and not esc else "")
        try:
            v = json.loads(head.rstrip().rstrip(",") + "".join(reversed(stack)))
        except ValueError:
            continue
        if isinstance(v, dict):
            return v, f"truncated JSON closed after {end} of {len(content)} characters ({err})"
    return None, err


def peer_usage(resp: Dict[str, Any], seconds: float) -> Dict[str, Any]:
    u = resp.get("usage") or {}
    return {"promptTokens": u.get("prompt_tokens"), "generatedTokens": u.get("completion_tokens"),
            "totalMs": round(seconds * 1000), "finishReason": ((resp.get("choices") or [{}])[0]).get("finish_reason")}


def peer_qa(peer: Peer, q: Dict[str, Any], doc: Dict[str, Any], ctx: int) -> Dict[str, Any]:
    def prompt_of(lines: str) -> str:
        return f"Transcript:\n{lines}\n\nQuestion: {q['question']}\n\n{PEER_QA_INSTRUCTION}"
    n = fit_segments(peer, doc, prompt_of, PEER_MAX_TOKENS["qa"], ctx)
    t0 = time.monotonic()
    resp = peer.chat(prompt_of(numbered(doc["segments"], n)), PEER_TEMPERATURE["qa"], PEER_MAX_TOKENS["qa"], PEER_QA_SCHEMA)
    content = resp["choices"][0]["message"].get("content") or ""
    obj, err = parse_json_reply(content)
    segs = doc["segments"]
    res: Dict[str, Any] = {"usage": peer_usage(resp, time.monotonic() - t0),
                           "retrieval": {"wholeDocument": n == len(segs), "segmentsShown": n, "segmentsTotal": len(segs)},
                           "raw": content}
    if obj is None:
        res.update(answer=content, found=True, citations=[], jsonError=err)
    else:
        ids = [c for c in obj.get("citations") or [] if isinstance(c, int) and not isinstance(c, bool)]
        res.update(answer=str(obj.get("answer", "")), found=obj.get("found") if isinstance(obj.get("found"), bool) else True,
                   citations=[{"segmentId": c, "text": segs[c - 1] if 0 < c <= len(segs) else ""} for c in ids])
    return res


def peer_compose(peer: Peer, c: Dict[str, Any], tone: str) -> Dict[str, Any]:
    aud = c.get("audience")
    prompt = f"Rewrite the following text in a {tone} tone" + (f" for {AUDIENCE_WORDS.get(aud, aud)}" if aud else "") + \
             ". Keep every fact, name and number. Reply with the rewrite only."
    lang = LANGUAGE_NAMES.get(c.get("language") or "")
    if lang:
        prompt += f" Write it in {lang}."
    prompt += "\n\n" + c["text"]
    max_tokens = min(1024, max(64, peer.count(c["text"]) * 3 // 2 + 32))  # the daemon's compose budget
    t0 = time.monotonic()
    resp = peer.chat(prompt, PEER_TEMPERATURE["compose"], max_tokens)
    text = (resp["choices"][0]["message"].get("content") or "").strip()
    return {"tone": tone, "audience": aud, "text": text, "formalityScore": formality(text),
            "usage": peer_usage(resp, time.monotonic() - t0)}


def peer_list(peer: Peer, method: str, doc: Dict[str, Any], ctx: int) -> Dict[str, Any]:
    instruction = PEER_SUMMARY_INSTRUCTION if method == "analysis/summarize" else PEER_HIGHLIGHTS_INSTRUCTION
    schema = PEER_SUMMARY_SCHEMA if method == "analysis/summarize" else PEER_HIGHLIGHTS_SCHEMA

    def prompt_of(lines: str) -> str:
        return f"{instruction}\n\nTranscript:\n{lines}"
    n = fit_segments(peer, doc, prompt_of, PEER_MAX_TOKENS[method], ctx)
    t0 = time.monotonic()
    resp = peer.chat(prompt_of(numbered(doc["segments"], n)), PEER_TEMPERATURE["lists"], PEER_MAX_TOKENS[method], schema)
    content = resp["choices"][0]["message"].get("content") or ""
    obj, err = parse_json_reply(content)
    res: Dict[str, Any] = dict(obj or {})
    res.update(usage=peer_usage(resp, time.monotonic() - t0), raw=content,
               retrieval={"wholeDocument": n == len(doc["segments"]), "segmentsShown": n, "segmentsTotal": len(doc["segments"])})
    if err:
        res["jsonError"] = err
    strs = lambda xs: [x for x in xs if isinstance(x, str)] if isinstance(xs, list) else []  # noqa: E731
    objs = lambda xs: [x for x in xs if isinstance(x, dict)] if isinstance(xs, list) else []  # noqa: E731
    if method == "analysis/summarize":
        res["mainTopics"], res["keyTakeaways"] = strs(res.get("mainTopics")), strs(res.get("keyTakeaways"))
        res["targetAudience"] = res.get("targetAudience") if isinstance(res.get("targetAudience"), str) else ""
    else:
        res["keyMoments"], res["quotes"] = objs(res.get("keyMoments")), objs(res.get("quotes"))
        res["actionItems"] = strs(res.get("actionItems"))
    return res


def run_peer(args: argparse.Namespace, data: Dict[str, Any], defaults: Dict[str, int]) -> Dict[str, Any]:
    """The peer column: the same labeled set through llama-server, raw results shaped like the
    daemon's (answer/found/citations; variations with formalityScore; the list fields) so the
    same scoring functions apply."""
    name = "peer"
    ctx, threads = defaults["contextSize"], defaults["threads"]
    server, model = llama_server_path(args), peer_model_path(args)
    tmp = tempfile.mkdtemp(prefix="parlance-eval-peer-")
    logpath = os.path.join(tmp, "llama-server.log")
    logf = open(logpath, "w")
    out: Dict[str, Any] = {"column": name, "verify": None, "qa": [], "compose": [], "lists": [],
                           "peer": {"server": server, "model": model, "contextSize": ctx, "threads": threads, "parallel": 1,
                                    "requestsInFlight": 1, "temperature": PEER_TEMPERATURE, "seed": SEED,
                                    "maxTokens": {**PEER_MAX_TOKENS, "compose": "min(1024, max(64, 1.5 x selection tokens + 32))"},
                                    "prompts": {"qa": PEER_QA_INSTRUCTION, "summarize": PEER_SUMMARY_INSTRUCTION,
                                                "highlights": PEER_HIGHLIGHTS_INSTRUCTION,
                                                "compose": "Rewrite the following text in a <tone> tone for <audience>. Keep every "
                                                           "fact, name and number. Reply with the rewrite only. [Write it in "
                                                           "<language>.]"}}}
    errors: List[Dict[str, Any]] = []
    fatal: List[str] = []
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    peer = Peer(server, model, ctx, threads, logf)
    out["peer"]["argv"] = peer.argv
    total = len(data["qa"]) + len(data["compose"]) + 2 * len(data["lists"])
    done = [0]
    fam_t: Dict[str, List[float]] = {}

    def call(family: str, method: str, label: str, fn: Callable[[], Any]) -> Dict[str, Any]:
        s = time.monotonic()
        rec: Dict[str, Any] = {}
        if fatal:
            rec["error"] = {"code": None, "name": "skipped", "message": "llama-server failed earlier in this column"}
        else:
            try:
                rec["result"] = fn()
            except Exception as e:  # noqa: BLE001 - report, never hide
                if STOPPING:
                    raise SystemExit(128 + STOPPING[0])
                rec["error"] = {"code": getattr(e, "code", None), "name": type(e).__name__, "message": str(e)[:500]}
                fatal.append(f"{method} {label}: {type(e).__name__}: {e}")
        if "error" in rec:
            errors.append({"family": family, "method": method, "item": label, "fatal": True, **rec["error"]})
        e = time.monotonic()
        rec["seconds"] = round(e - s, 3)
        span = fam_t.setdefault(family, [s, e])
        span[0], span[1] = min(span[0], s), max(span[1], e)
        done[0] += 1
        status = "ok" if "result" in rec else f"error {rec['error']['name']}"
        log(f"[{name}] {done[0]}/{total} {family} {label}: {status} ({rec['seconds']:.1f} s)")
        return rec

    try:
        peer.wait_healthy()
        out["serverVersion"] = "llama-server " + str((peer.http("/props") or {}).get("build_info", "?"))
        for q in data["qa"]:
            doc = data["docs"][q["docKey"]]
            out["qa"].append({"item": q, **call("qa", "ask/stream", q["id"], lambda q=q, doc=doc: peer_qa(peer, q, doc, ctx))})
        for c in data["compose"]:
            rec = call("compose", "compose/variations", c["id"],
                       lambda c=c: {"variations": [peer_compose(peer, c, t) for t in TONES]})
            out["compose"].append({"item": c, **rec})
        for key in data["lists"]:
            for m in ANALYSES:
                rec = call("lists", m, f"{m.split('/')[1]} {key}",
                           lambda key=key, m=m: peer_list(peer, m, data["docs"][key], ctx))
                out["lists"].append({"doc": key, "method": m, **rec})
        out["familySpanSeconds"] = {k: round(v[1] - v[0], 1) for k, v in fam_t.items()}
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fatal.append(f"{type(e).__name__}: {e}")
    finally:
        code = peer.stop()
        logf.close()
        if STOPPING:
            shutil.rmtree(tmp, ignore_errors=True)
    if STOPPING:
        raise SystemExit(128 + STOPPING[0])
    out["wallSeconds"] = round(time.monotonic() - t0, 1)
    out["loadAverage"] = {"start": round(load0, 2), "end": round(os.getloadavg()[0], 2)}
    out["exitCode"] = code
    if fatal:
        with open(logpath, errors="replace") as f:
            out["daemonLogTail"] = f.read()[-3000:]
        log(f"[{name}] llama-server log, last lines:\n{out['daemonLogTail']}")
    shutil.rmtree(tmp, ignore_errors=True)
    out["errors"], out["fatal"], out["warnings"] = errors, fatal, []
    return out


# ---------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------

def rate(n: int, d: int) -> Optional[float]:
    return round(n / d, 3) if d else None


def mean(xs: Sequence[float], nd: int = 3) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), nd) if xs else None


def verification_of(obj: Any) -> Optional[Dict[str, Any]]:
    v = obj.get("verification") if isinstance(obj, dict) else None
    return v if isinstance(v, dict) else None


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
        v = verification_of(res)
        if v is not None:
            d["verification"] = v
        for k in ("raw", "jsonError"):  # the peer's reply as it came
            if k in res:
                d["peer" + k[0].upper() + k[1:]] = res[k]
        # citations: do their texts match our segmentation (are the gold ids comparable)?
        mis = []
        for c in res.get("citations", []):
            sid = c.get("segmentId")
            ours = doc["segments"][sid - 1] if isinstance(sid, int) and 0 < sid <= len(doc["segments"]) else ""
            if plain(c.get("text", "")) and plain(c.get("text", ""))[:40] not in plain(ours):
                mis.append(sid)
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


METHODS = ["ask/stream", "compose/variations"] + ANALYSES


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


def check(value: Any, op: str, target: float) -> Optional[bool]:
    if value is None:
        return None
    return value >= target if op == ">=" else value <= target if op == "<=" else value == target


# ---------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------

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
        qa, compose, lists = qa[:args.limit], compose[:args.limit], lists[:args.limit]
    only = set(args.only or ["qa", "compose", "lists"])
    qa = qa if "qa" in only else []
    compose = compose if "compose" in only else []
    lists = lists if "lists" in only else []
    # Questions grouped by document (stable): questions sent together on one document share
    # its evaluated prefix.
    order = {k: i for i, k in enumerate(dict.fromkeys(q["docKey"] for q in qa))}
    qa = sorted(qa, key=lambda q: order[q["docKey"]])
    needed = {q["docKey"] for q in qa} | set(lists)
    return {"docs": docs, "qa": qa, "compose": compose, "lists": lists, "needed": needed, "warnings": warnings,
            "heldOutInData": held_in_data}


# ---------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description="Parlance quality eval (see the module docstring).")
    ap.add_argument("--only", action="append", choices=["qa", "compose", "lists"],
                    help="run only this family (repeatable)")
    ap.add_argument("--all", action="store_true", help="also the items marked extra in the data (about twice as long)")
    ap.add_argument("--limit", type=int, help="first N items per family (lists: first N documents)")
    ap.add_argument("--ids", metavar="REGEX", help="only items whose id (list documents: path) matches")
    ap.add_argument("--columns", default="off,on,peer",
                    help="comma-separated, of off,on,peer (default: off,on,peer); run one after another")
    ap.add_argument("--concurrency", type=int, default=6, help="requests in flight per daemon (default 6)")
    ap.add_argument("--max-attempts", type=int, help="maxAttempts to send when the daemon knows it (default: its own)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for one response")
    ap.add_argument("--model", default=None,
                    help="the model to evaluate: any name --model takes (ollama:…, hf:…, lmstudio:…, a path, openai:…); "
                         "default: the daemon's default model. The peer column runs the same file.")
    ap.add_argument("--binary", default=os.environ.get("PARLANCE_BIN") or os.path.join(ROOT, ".build", "release", "parlance"))
    ap.add_argument("--data", default=os.path.join(ROOT, "eval", "data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "eval", "last-run.json"))
    ap.add_argument("--json", action="store_true", help="print the JSON summary instead of the tables")
    ap.add_argument("--llama-server", help="llama-server for the peer column (default: $PARLANCE_LLAMA_SERVER, "
                                           "else scripts/setup-llama-server.sh)")
    ap.add_argument("--peer-model", help="GGUF for the peer (default: $PARLANCE_MODEL, else $PARLANCE_DEFAULT_MODEL)")
    args = ap.parse_args()

    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    data = load_data(args)
    for w in data["warnings"]:
        log("eval: warning: " + w)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # Both columns run one copy of the daemon, taken now: a rebuild during the run changes neither.
    snapdir = tempfile.mkdtemp(prefix="parlance-eval-bin-")
    try:
        return run(args, ap, data, t0, started, snapdir)
    finally:
        shutil.rmtree(snapdir, ignore_errors=True)


def run(args: argparse.Namespace, ap: argparse.ArgumentParser, data: Dict[str, Any], t0: float, started: str,
        snapdir: str) -> int:
    snapshot = os.path.join(snapdir, "parlance")
    shutil.copy2(args.binary, snapshot)
    with open(snapshot, "rb") as f:
        binary_sha = hashlib.sha256(f.read()).hexdigest()
    args.daemon = snapshot
    spec = method_params(snapshot)
    defaults = daemon_defaults(snapshot)
    verify_support = {m: "verify" in spec.get(m, {}) for m in METHODS}
    supported = all(verify_support.values())
    wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
    for c in wanted:
        if c not in ("on", "off", "peer"):
            ap.error(f"--columns: unknown column {c!r}")
    daemon_wanted = [c for c in wanted if c != "peer"]
    columns = [(c, c == "on") for c in daemon_wanted] if supported else ([("default", None)] if daemon_wanted else [])
    if not supported and daemon_wanted:
        log(f"eval: this daemon has no `verify` param ({', '.join(m for m, s in verify_support.items() if not s)}): "
            "one daemon column, 'default'")
    names = [c for c, _ in columns] + (["peer"] if "peer" in wanted else [])
    log(f"eval: {len(data['qa'])} questions, {len(data['compose'])} compose items, {len(data['lists'])} list documents; "
        f"columns {names}, concurrency {args.concurrency} (peer: 1, llama-server -np 1); "
        f"context {defaults['contextSize']}, {defaults['threads']} threads")

    # One column after another: never two model processes at once.
    raw: Dict[str, Dict[str, Any]] = {}
    for name, verify in columns:
        log(f"eval: column {name} (verify={verify})")
        raw[name] = run_column(name, verify, args, spec, data)
        log(f"eval: column {name}: {raw[name]['wallSeconds']} s")
    if "peer" in wanted:
        log("eval: column peer (llama-server)")
        raw["peer"] = run_peer(args, data, defaults)
        log(f"eval: column peer: {raw['peer']['wallSeconds']} s")

    held_ids = {x["id"] for x in data["qa"] + data["compose"] if x.get("heldOut")}
    has_held = {"qa": any(q["id"] in held_ids for q in data["qa"]),
                "compose": any(c["id"] in held_ids for c in data["compose"]), "lists": False}

    def part_of(col: Dict[str, Any], part: str) -> Dict[str, Any]:
        keep = (lambda r: True) if part == "all" else (lambda r: (r["item"]["id"] in held_ids) == (part == "heldOut"))
        return {"qa": [r for r in col["qa"] if keep(r)], "compose": [r for r in col["compose"] if keep(r)],
                "lists": col["lists"] if part != "heldOut" else []}

    def score(col: Dict[str, Any], name: str, part: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        sub = part_of(col, part)
        s: Dict[str, Any] = {}
        det: Dict[str, Any] = {}
        if sub["qa"]:
            s["qa"], det["qa"] = score_qa(sub["qa"], data)
        if sub["compose"]:
            s["compose"], det["compose"] = score_compose(sub["compose"], unflagged=name == "peer")
        if sub["lists"]:
            s["lists"], det["lists"] = score_lists(sub["lists"], data)
        return s, det

    summary_cols: Dict[str, Any] = {}
    parts: Dict[str, Dict[str, Any]] = {"tuning": {}, "heldOut": {}}
    details: Dict[str, Any] = {}
    for name, col in raw.items():
        s, det = score(col, name, "all")
        for part in parts:
            parts[part][name] = score(col, name, part)[0]
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

    # Targets are judged on the verify-on column; a run of the peer alone judges the peer.
    main_col = "on" if "on" in summary_cols else next((c for c in summary_cols if c != "peer"), "peer")
    peer_on = "peer" in summary_cols

    def value(part: str, col: Optional[str], fam: str, key: str) -> Any:
        if col is None:
            return None
        src = summary_cols if part == "all" else parts[part]
        return ((src.get(col) or {}).get(fam) or {}).get(key)

    def judged_part(fam: str) -> str:
        return "heldOut" if has_held[fam] else "tuning"

    targets: Dict[str, Any] = {}
    for fname, fam, key, label, better, op, target in FIGURES:
        part = judged_part(fam)
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
        "targetsPart": {fam: judged_part(fam) for fam in ("qa", "compose", "lists")},
        "heldOutItems": len(held_ids),
        "heldOutItemsInData": data["heldOutInData"],
        "concurrency": args.concurrency,
        "contextSize": defaults["contextSize"],
        "threads": defaults["threads"],
        "seed": SEED,
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
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(full, f, indent=2, ensure_ascii=False)
        f.write("\n")
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        print(report(summary, has_held))
    log(f"eval: {summary['targetsMet']}/{summary['targetsMeasured']} targets met; details in "
        f"{os.path.relpath(args.out, ROOT)}; {summary['wallSeconds']} s")
    return 0 if not fatal else 1


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


def fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))
    return str(v)


def report(summary: Dict[str, Any], has_held: Dict[str, bool]) -> str:
    """The printed tables: every figure per column for the held-out and the tuning part, the
    targets (judged on the `targetsColumn`) and "better than peer"; then the cost per method."""
    cols = summary["columns"]
    main_col = summary["targetsColumn"]
    lines: List[str] = []
    w0, wc = 54, 9

    def row(label: str, cells: Sequence[str], tail: Sequence[str] = ()) -> str:
        return (label.ljust(w0) + "".join(c.rjust(wc) for c in cells) + "  "
                + "".join(t.ljust(w) for t, w in zip(tail, (10, 15, 0)))).rstrip()

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
    qa = {c: (summary["results"][c].get("qa") or {}) for c in cols}
    if any(qa.values()):
        lines.append("== calibration of confidenceScore (whole run; correct = answerable, found, a gold citation, "
                     "not degenerate; or unanswerable and found false)")
        for c in cols:
            q = qa[c]
            lines.append(f"  {c}: ECE (10 bins) {fmt(q.get('calibrationECE'))}, Brier {fmt(q.get('brierScore'))}, "
                         f"over {q.get('withConfidenceScore', 0)} answers; wrongly not found on answerable "
                         f"{fmt(q.get('wrongNotFoundRate'))} (target <= 0.10), not found on unanswerable "
                         f"{fmt(q.get('notFoundCorrectRate'))} (target >= 0.75)")
        lines.append("")
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
    lines.append(f"{summary['targetsMet']}/{summary['targetsMeasured']} targets met (column {main_col}); "
                 f"{summary['wallSeconds']} s" + ("" if summary["ok"] else "; FAILED: " + "; ".join(summary["failures"])))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

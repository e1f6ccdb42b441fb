#!/usr/bin/env python3
"""Parlance quality eval: run the labeled set in eval/data through the real daemon and model.

    make eval                                      # both columns, the whole set
    python3 eval/run.py --only qa --limit 5        # a quick look at one family
    python3 eval/run.py --columns on --concurrency 2

Each column runs in its own daemon (`--stdio --no-history`, a fresh temporary `--cache-dir`
and `--data-dir`): "off" sends `verify: false` (the daemon's checks are only reported),
"on" sends `verify: true`. A daemon whose spec (`parlance --print-spec`) has no `verify`
param gets one column, "default", with the params it knows. Every metric is computed here
from the answers and the labels, independently of the daemon's own `verification`.

Prints one JSON summary on stdout (progress goes to stderr) and writes it, with the
per-question, per-variation and per-list details, to eval/last-run.json. Exit code 0 even
when targets are missed (this is a measurement); 1 when the run itself failed: the daemon
crashed or exited badly, a request timed out, or answered a JSON-RPC error other than a
documented generation refusal (-32010).

Data (eval/data, or --data DIR):
  transcripts/*.srt|*.vtt|*.txt   segments numbered 1, 2, 3... in document order
  qa.json        [{"id","doc","question","answerable","gold":[ids],"evidence","answer"}]
  compose.json   [{"id","kind","text","facts":[substrings of text],"audience","language"?}]
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

TARGETS = [  # (name, family, metric path, comparison, target)
    ("citationHitRate", "qa", ("qa", "citationHitRate"), ">=", 0.90),
    ("degenerateRate", "qa", ("qa", "degenerateRate"), "==", 0),
    ("notFoundCorrectRate", "qa", ("qa", "notFoundCorrectRate"), ">=", 0.75),
    ("badButPassed", "compose", ("compose", "badButPassed"), "==", 0),
    ("keyFactsKeptMean", "compose", ("compose", "keyFactsKeptMean"), ">=", 0.80),
    ("toneSeparation", "compose", ("compose", "toneSeparation"), ">=", 0.90),
    ("duplicateItems", "lists", ("lists", "duplicateItems"), "==", 0),
]
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
    client = ParlanceClient(args.daemon, ["--cache-dir", cache, "--data-dir", datadir, "--no-history"],
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
        d.update({"answer": answer, "found": found, "citations": cited, "confidence": res.get("confidence"),
                  "generatedTokens": gen, "expected": q.get("answer"), "usage": res.get("usage"),
                  "wholeDocument": (res.get("retrieval") or {}).get("wholeDocument")})
        v = verification_of(res)
        if v is not None:
            d["verification"] = v
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
        "errors": len(runs) - answered,
    }
    return m, details


def score_compose(runs: List[Dict[str, Any]]) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    details = []
    cats = {"refusal": 0, "instructionEcho": 0, "unchanged": 0, "factsMissing": 0, "error": 0}
    failing = variations = bad_passed = separated = inv_n = 0
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
            if ver is not None:
                with_verification += 1
                d["verification"] = ver
                if ver.get("passed") and {"refusal", "instructionEcho", "unchanged"} & set(fl):
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
        "badButPassed": bad_passed if with_verification else None,
        "withInventedNumbersOrNames": inv_n,
        "errors": sum(1 for r in runs if "error" in r),
    }
    return m, details


def score_lists(runs: List[Dict[str, Any]], data: Dict[str, Any]) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    details = []
    dup_n = label_n = aud_n = 0
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
         "targetAudienceIsName": aud_n, "errors": sum(1 for r in runs if "error" in r)}
    return m, details


def cost(col: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for fam in ("qa", "compose", "lists"):
        runs = col[fam]
        if not runs:
            continue
        attempts = []
        for r in runs:
            res = r.get("result") or {}
            objs = res.get("variations", []) if fam == "compose" else [res]
            attempts += [v["attempts"] for o in objs for v in [verification_of(o)] if v and "attempts" in v]
        out[{"qa": "ask"}.get(fam, fam)] = {
            "requests": len(runs),
            "attemptsMean": mean(attempts),
            "wallSecondsMean": mean([r["seconds"] for r in runs], 2),
            "engineSecondsMean": mean([(r.get("result") or {}).get("usage", {}).get("totalMs", 0) / 1000
                                       for r in runs if "result" in r], 2),
            "spanSeconds": col.get("familySpanSeconds", {}).get(fam),
        }
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
    return {"docs": docs, "qa": qa, "compose": compose, "lists": lists, "needed": needed, "warnings": warnings}


# ---------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description="Parlance quality eval (see the module docstring).")
    ap.add_argument("--only", action="append", choices=["qa", "compose", "lists"],
                    help="run only this family (repeatable)")
    ap.add_argument("--all", action="store_true", help="also the items marked extra in the data (about twice as long)")
    ap.add_argument("--limit", type=int, help="first N items per family (lists: first N documents)")
    ap.add_argument("--ids", metavar="REGEX", help="only items whose id (list documents: path) matches")
    ap.add_argument("--columns", default="off,on", help="comma-separated, of off,on (default: off,on)")
    ap.add_argument("--concurrency", type=int, default=6, help="requests in flight per daemon (default 6)")
    ap.add_argument("--max-attempts", type=int, help="maxAttempts to send when the daemon knows it (default: its own)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for one response")
    ap.add_argument("--binary", default=os.environ.get("PARLANCE_BIN") or os.path.join(ROOT, ".build", "release", "parlance"))
    ap.add_argument("--data", default=os.path.join(ROOT, "eval", "data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "eval", "last-run.json"))
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
    gen_methods = ["ask/stream", "compose/variations"] + ANALYSES
    verify_support = {m: "verify" in spec.get(m, {}) for m in gen_methods}
    supported = all(verify_support.values())
    wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
    for c in wanted:
        if c not in ("on", "off"):
            ap.error(f"--columns: unknown column {c!r}")
    columns = [(c, c == "on") for c in wanted] if supported else [("default", None)]
    if not supported:
        log(f"eval: this daemon has no `verify` param ({', '.join(m for m, s in verify_support.items() if not s)}): "
            "one column, 'default'")
    log(f"eval: {len(data['qa'])} questions, {len(data['compose'])} compose items, {len(data['lists'])} list documents; "
        f"columns {[c for c, _ in columns]}, concurrency {args.concurrency}")

    raw: Dict[str, Dict[str, Any]] = {}
    for name, verify in columns:
        log(f"eval: column {name} (verify={verify})")
        raw[name] = run_column(name, verify, args, spec, data)
        log(f"eval: column {name}: {raw[name]['wallSeconds']} s")

    summary_cols: Dict[str, Any] = {}
    details: Dict[str, Any] = {}
    for name, col in raw.items():
        s: Dict[str, Any] = {}
        det: Dict[str, Any] = {}
        if data["qa"]:
            s["qa"], det["qa"] = score_qa(col["qa"], data)
        if data["compose"]:
            s["compose"], det["compose"] = score_compose(col["compose"])
        if data["lists"]:
            s["lists"], det["lists"] = score_lists(col["lists"], data)
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
            det["daemonLogTail"] = col["daemonLogTail"]
        details[name] = det

    main_col = "on" if "on" in summary_cols else next(iter(summary_cols))
    targets: Dict[str, Any] = {}
    for tname, fam, path, op, target in TARGETS:
        if fam not in summary_cols[main_col]:
            continue
        value = summary_cols[main_col][path[0]].get(path[1])
        targets[tname] = {"value": value, "target": f"{op} {target}", "met": check(value, op, target)}
    if "on" in raw and "off" in raw:
        ratio = round(raw["on"]["wallSeconds"] / raw["off"]["wallSeconds"], 3) if raw["off"]["wallSeconds"] else None
        targets["onOffWallTimeRatio"] = {"value": ratio, "target": f"<= {WALL_RATIO_TARGET}",
                                         "met": check(ratio, "<=", WALL_RATIO_TARGET)}
    else:
        targets["onOffWallTimeRatio"] = {"value": None, "target": f"<= {WALL_RATIO_TARGET}", "met": None}

    fatal = [f"{n}: {f}" for n, c in raw.items() for f in c["fatal"]]
    summary = {
        "started": started,
        "binary": os.path.relpath(args.binary, ROOT) if args.binary.startswith(ROOT) else args.binary,
        "binarySha256": binary_sha[:16],
        "serverVersion": next(iter(raw.values())).get("serverVersion"),
        "verifySupported": supported,
        "columns": list(raw),
        "targetsColumn": main_col,
        "concurrency": args.concurrency,
        "seed": SEED,
        "data": {"questions": len(data["qa"]), "unanswerable": sum(1 for q in data["qa"] if not q["answerable"]),
                 "composeItems": len(data["compose"]), "listDocuments": data["lists"],
                 "warnings": len(data["warnings"]), **({"limit": args.limit} if args.limit else {}),
                 **({"ids": args.ids} if args.ids else {})},
        "results": summary_cols,
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
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    log(f"eval: {summary['targetsMet']}/{summary['targetsMeasured']} targets met; details in "
        f"{os.path.relpath(args.out, ROOT)}; {summary['wallSeconds']} s")
    return 0 if not fatal else 1


if __name__ == "__main__":
    sys.exit(main())

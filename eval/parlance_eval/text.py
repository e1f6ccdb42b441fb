"""Text helpers: folding and tokens, our own segmentation of transcripts (the labels'
numbering, to check the daemon's), and the numbers a text holds (unsupportedNumberRate)."""

from __future__ import annotations

import os
import re
import unicodedata
from typing import List, Set

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

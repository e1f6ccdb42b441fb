"""The judges: checks of one answer, variation or list, independent of the daemon's own
`verification` (Q&A: degenerate answers, "not found"; compose: refusals, echoes, facts,
invented numbers and names; lists: labels, bare names, duplicates). The tasks' scoring
(qa.py, compose.py, lists.py) counts what they find."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .text import doc_numbers, fact_norm, fold, jaccard, letter_words, numbers_in, plain, strip_speaker, tokens

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

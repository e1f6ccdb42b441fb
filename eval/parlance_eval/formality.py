"""Formality: a faithful port of Sources/ParlanceFeatures/Compose/Formality.swift (the daemon
does not expose its scorer), so the peer's text is scored exactly as the daemon's
`formalityScore`. Swift Characters are grapheme clusters, Python's code points: the text is
NFC-normalised first so the two agree for everything but emoji sequences."""

from __future__ import annotations

import unicodedata
from typing import List

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


def _w(s: str) -> set:
    return set(s.split())


# FormalityMarkers.table (Sources/ParlanceFeatures/Compose/FormalityMarkers.swift):
# (formal, casual, capitalized formal, casual prefixes) per language.
_MARKERS = {
    "es": (_w("""usted ustedes estimado estimada estimados estimadas atentamente cordialmente señor señora señores sírvase
               agradeceríamos agradecemos agradecería rogamos ruego solicitamos solicitar disculpe disculpen lamentamos
               informarle comunicarle indicarle notificarle asimismo obstante consiguiente mediante quisiera quisiéramos
               dicho dicha adjunto adjunta"""),
           _w("""tú tu tus te ti contigo hola oye vale genial guay chicos chicas porfa vaya jaja ok okey besos abrazo
               cuídate perdona mira venga súper chao chau tranqui"""), set(), []),
    "fr": (_w("""vous votre vos madame monsieur mesdames messieurs cordialement veuillez prions salutations sincèrement
               respectueusement distinguées agréer souhaiterions regrettons néanmoins toutefois conséquent afin ci-joint
               concernant informer"""),
           _w("tu te toi ton ta tes salut coucou super cool ouais bises bisous sympa génial ok truc bref hé hey"), set(),
           ["t'", "t\u2019"]),
    "de": (_w("""geehrte geehrter geehrten freundlichen grüßen hochachtungsvoll mitteilen bezüglich hiermit gemäß
               diesbezüglich bedauern bitten möchten"""),
           _w("""du dich dir dein deine deinen deinem deiner euch euer eure hallo hey hi tschüss ciao servus moin lg super
               cool klar okay ok echt mega krass"""),
           {"Sie", "Ihnen", "Ihr", "Ihre", "Ihrer", "Ihrem", "Ihren", "Ihres"}, []),
    "it": (_w("""gentile gentili egregio egregia cordiali distinti saluti porgo comunichiamo informiamo desideriamo
               preghiamo cortesemente cortese spettabile pertanto tuttavia"""),
           _w("tu ti te tuo tua tuoi tue ciao ehi dai ragazzi raga super figo ok okay vabbè boh bacioni baci"),
           {"Lei", "Sua", "Suo", "Suoi", "Sue"}, []),
    "pt": (_w("""senhor senhora senhores senhoras prezado prezada prezados prezadas atenciosamente cordialmente informamos
               solicitamos gostaríamos agradecemos lamentamos vossa ilustríssimo contudo todavia"""),
           _w("tu te ti contigo teu tua teus tuas oi valeu beijos beijo abraço galera tá né pra legal beleza tchau"), set(), []),
    "nb": (_w("""vennlig vennligst hilsen ærbødigst herved vedrørende angående henvendelse anmode anmoder beklager informere
               opplyse vedlagt imidlertid følgelig"""),
           _w("hei heisann hallo halla kult digg fett ass liksom lissom okei ok jepp snakkes klem gutta"),
           {"De", "Dem", "Deres"}, []),
}


def _markers(language: str):
    return _MARKERS.get((language or "en").split("-")[0].lower())


def _local_formality(text: str, words: List[str], markers) -> float:
    """Formality.score(text, words:, markers:): a language with its own markers."""
    import math
    formal_set, casual_set, capitalized, prefixes = markers
    n = float(len(words))
    sentences = formality_sentences(text)
    s = float(max(1, len(sentences)))
    starts, k = set(), 0
    for sentence in sentences:
        starts.add(k)
        k += len(formality_words(sentence))
    formal = casual = 0
    for i, w in enumerate(words):
        lw = w.lower()
        if lw in formal_set or (i not in starts and w in capitalized):
            formal += 1
        if lw in casual_set or any(lw.startswith(p) for p in prefixes):
            casual += 1
    exclaims = text.count("!") + sum(1 for c in text if _is_emoji_presentation(c))
    lower_starts = sum(1 for x in sentences if x[0].isalpha() and x[0].islower())
    z = 14 * formal / n - 14 * casual / n - 0.8 * exclaims / s
    z += min(1.2, max(-1.2, 0.06 * (n / s - 14)))
    z -= 1 * lower_starts / s
    p = 1 / (1 + math.exp(-z))
    return math.floor(p * 100 + 0.5) / 100


def formality(text: str, language: str = "en") -> float:
    """Formality.score(text, language:): 0 very casual .. 1 very formal, rounded to 2 decimals."""
    import math
    text = unicodedata.normalize("NFC", text or "")
    words = formality_words(text)
    if not words:
        return 0.5
    markers = _markers(language)
    if markers is not None:
        return _local_formality(text, words, markers)
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

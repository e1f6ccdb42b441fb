import Foundation
import ParlanceDocuments

/// The words the checks, the repairs and compose share, kept once: how a text is cut into
/// words and sentences, retrieval's terms, contractions, calendar words, crude stems and
/// content words. Where two checks read words differently, both readings are here, named
/// (`Split`, `SentenceSplit`), so the difference is said in one place.
enum Lexicon {
    // MARK: Words

    /// How a text is cut into words.
    enum Split {
        /// As written: letters and digits, with inner apostrophes (' ’) and hyphens, case
        /// kept ("Don't", "re-run", "3pm"): the words of `WordDiff.tokens`.
        case written
        /// Normalised: lower case, diacritics folded, anything but a letter or a digit a
        /// break ("don't" → "don", "t"): the words of `TextChecks.normalized`.
        case normalized
        /// Letters only, with hyphens and straight apostrophes wherever they are; digits and
        /// anything else break ("tokens/second" → "tokens", "second"): key phrases.
        case letters
        /// Retrieval's content terms (`BM25Index.terms`): folded, stopwords out, stemmed,
        /// word forms joined ("ran" → "run").
        case terms
    }

    /// The words of `text`, in order.
    static func words(_ text: String, _ split: Split = .written) -> [String] {
        switch split {
        case .written: WordDiff.tokens(text).filter(\.isWord).map(\.text)
        case .normalized: TextChecks.normalized(text).split(separator: " ").map(String.init)
        case .letters: text.split(whereSeparator: { !($0.isLetter || $0 == "-" || $0 == "'") }).map(String.init)
        case .terms: BM25Index.terms(text)
        }
    }

    /// How a text is cut into sentences.
    enum SentenceSplit {
        /// A written text (a selection, a rewrite): split after . ! ? before whitespace and
        /// at line breaks, not after an initial or a common abbreviation; trimmed; only
        /// pieces with a letter or a digit.
        case written
        /// The documents' splitter (`Sentences.split`): the pieces tile the text, each with
        /// the whitespace after it; more abbreviations, closing quotes and CJK stops known.
        case tiled
    }

    static func sentences(_ text: String, _ split: SentenceSplit = .written) -> [String] {
        switch split {
        case .written: writtenSentences(text)
        case .tiled: Sentences.split(text)
        }
    }

    private static func writtenSentences(_ text: String) -> [String] {
        var out: [String] = []
        var current = ""
        let chars = Array(text)
        for (i, c) in chars.enumerated() {
            if c == "\n" {
                out.append(current)
                current = ""
                continue
            }
            current.append(c)
            if ".!?".contains(c), i + 1 == chars.count || chars[i + 1].isWhitespace {
                // Not after a single capital (an initial) or a common abbreviation.
                let lastWord = current.split(separator: " ").last.map(String.init) ?? ""
                if !["e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "approx."].contains(lastWord.lowercased()),
                   !(lastWord.count == 2 && lastWord.first!.isUppercase) {
                    out.append(current)
                    current = ""
                }
            }
        }
        out.append(current)
        return out.map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.contains(where: { $0.isLetter || $0.isNumber }) }
    }

    // MARK: Contractions

    /// English contractions and their long forms, in the order a formal repair spells them
    /// out ("it's been" before "it's").
    static let contractions: [(short: String, long: String)] = [
        ("can't", "cannot"), ("won't", "will not"), ("shan't", "shall not"), ("don't", "do not"), ("doesn't", "does not"),
        ("didn't", "did not"), ("isn't", "is not"), ("aren't", "are not"), ("wasn't", "was not"), ("weren't", "were not"),
        ("haven't", "have not"), ("hasn't", "has not"), ("hadn't", "had not"), ("wouldn't", "would not"), ("couldn't", "could not"),
        ("shouldn't", "should not"), ("mustn't", "must not"), ("needn't", "need not"),
        ("i'm", "I am"), ("i've", "I have"), ("i'll", "I will"), ("i'd", "I would"),
        ("we're", "we are"), ("we've", "we have"), ("we'll", "we will"), ("we'd", "we would"),
        ("you're", "you are"), ("you've", "you have"), ("you'll", "you will"), ("you'd", "you would"),
        ("they're", "they are"), ("they've", "they have"), ("they'll", "they will"), ("they'd", "they would"),
        ("it's been", "it has been"), ("that's been", "that has been"), ("there's been", "there has been"), ("he's been", "he has been"),
        ("she's been", "she has been"), ("it's got", "it has got"), ("it's", "it is"), ("that's", "that is"), ("there's", "there is"), ("here's", "here is"), ("what's", "what is"),
        ("let's", "let us"), ("he's", "he is"), ("she's", "she is"), ("who's", "who is"), ("it'll", "it will"), ("that'll", "that will"),
        ("he'll", "he will"), ("she'll", "she will"), ("there'll", "there will"), ("where's", "where is"), ("how's", "how is"),
    ]

    /// The phrases a casual repair contracts, in the order it contracts them ("is not" before
    /// "it is": "it is not" → "it isn't").
    static let contractible: [(long: String, short: String)] = [
        ("do not", "don't"), ("does not", "doesn't"), ("did not", "didn't"), ("is not", "isn't"), ("are not", "aren't"),
        ("was not", "wasn't"), ("were not", "weren't"), ("have not", "haven't"), ("has not", "hasn't"), ("will not", "won't"),
        ("cannot", "can't"), ("would not", "wouldn't"), ("could not", "couldn't"), ("should not", "shouldn't"),
        ("I am", "I'm"), ("I will", "I'll"), ("we are", "we're"), ("we will", "we'll"),
        ("you are", "you're"), ("you will", "you'll"), ("they are", "they're"), ("they will", "they'll"),
        ("it is", "it's"), ("that is", "that's"), ("there is", "there's"), ("let us", "let's"),
    ]

    /// The contractions spelled out wherever phrases are compared (refusals, tone markers:
    /// "I'm sorry" = "I am sorry"), in this order, anywhere in a word; the others stay as written there.
    static let comparedContractions: [(short: String, long: String)] = ["i'm", "can't", "don't", "won't", "i've", "isn't", "doesn't", "i'd"].map { s in
        (s, contractions.first { $0.short == s }!.long.lowercased())
    }

    /// Lower case, the curly apostrophe straight, the `comparedContractions` spelled out.
    static func expanded(_ text: String) -> String {
        var t = text.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
        for (short, long) in comparedContractions { t = t.replacingOccurrences(of: short, with: long) }
        return t
    }

    /// A contracted word: "n't", "'re", "'ll", "'ve", "'m", "'d", a pronoun's "'s" ("it's",
    /// not "Ana's"), or a spoken form ("gonna", "ain't").
    static func isContraction(_ w: String) -> Bool {
        let w = w.replacingOccurrences(of: "\u{2019}", with: "'")
        guard let apostrophe = w.firstIndex(of: "'") else { return ["gonna", "wanna", "gotta", "dunno", "lemme", "gimme", "ain't"].contains(w) }
        let suffix = w[apostrophe...]
        // "n't" starts before the apostrophe: the suffix is "'t".
        if w.hasSuffix("n't") || ["'re", "'ll", "'ve", "'m", "'d"].contains(where: { suffix.hasSuffix($0) }) { return true }
        return suffix == "'s" && ["it", "that", "there", "here", "what", "let", "he", "she", "who", "where", "how"].contains(String(w[..<apostrophe]))
    }

    // MARK: Calendar words

    /// Month names, January first, by language (lower case, diacritics folded).
    static let months: [String: [String]] = [
        "en": ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"],
        "es": ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"],
        "fr": ["janvier", "fevrier", "mars", "avril", "mai", "juin", "juillet", "aout", "septembre", "octobre", "novembre", "decembre"],
    ]

    /// Weekday names, Monday first, by language (lower case, diacritics folded).
    static let weekdays: [String: [String]] = [
        "en": ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
        "es": ["lunes", "martes", "miercoles", "jueves", "viernes", "sabado", "domingo"],
        "fr": ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
    ]

    /// Words that say when (normalised): months, weekdays and the other time words of
    /// English, Spanish and French.
    static let timeWords: Set<String> = Set(months.values.joined()).union(weekdays.values.joined()).union([
        "today", "tomorrow", "yesterday", "tonight", "morning", "afternoon", "evening", "night", "noon", "midnight", "week", "weeks",
        "month", "months", "year", "years", "spring", "summer", "autumn", "fall", "winter", "weekend", "daily", "weekly", "monthly",
        "yearly", "annually",
        "hoy", "manana", "ayer", "semana", "mes", "ano",
        "aujourd", "demain", "hier", "semaine", "mois", "an", "annee",
    ])

    // MARK: Stems and content words

    /// A crude English stem: lower case, no possessive, common suffixes off (compose's
    /// key points; retrieval stems its own way, `Split.terms`).
    static func stem(_ word: String) -> String {
        var w = word.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
        if w.hasSuffix("'s") { w.removeLast(2) }
        for (suffix, replacement) in [("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("ly", ""), ("e", "")] {
            if w.count > suffix.count + 2, w.hasSuffix(suffix) {
                w = String(w.dropLast(suffix.count)) + replacement
                break
            }
        }
        return w
    }

    static let numberWords: [String: String] = [
        "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
        "ten": "10", "eleven": "11", "twelve": "12", "twice": "2", "once": "1", "first": "1", "second": "2", "third": "3",
    ]

    /// Digit runs in a word ("3pm" → "3", "2,500" stays one number after removing commas).
    static func numbers(in text: String) -> [String] {
        var out: [String] = []
        for w in words(text) {
            if let n = numberWords[w.lowercased()] { out.append(n); continue }
            let digits = w.replacingOccurrences(of: ",", with: "")
            var run = ""
            for c in digits {
                if c.isNumber { run.append(c) } else if !run.isEmpty { out.append(run); run = "" }
            }
            if !run.isEmpty { out.append(run) }
        }
        return out
    }

    static let stopwords: Set<String> = [
        "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "in", "on", "for", "with", "to", "by", "from", "at", "as",
        "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "have", "has", "had", "having", "it", "its",
        "this", "that", "these", "those", "there", "here", "i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his",
        "she", "her", "they", "them", "their", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "all",
        "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "than",
        "too", "very", "can", "will", "just", "should", "would", "could", "might", "must", "shall", "may", "also", "about",
        "into", "over", "after", "before", "up", "down", "out", "off", "again", "further", "once", "because", "while", "until",
        "get", "got", "just", "really", "hi", "hey", "hello", "thanks", "thank", "please", "let", "let's", "it's", "don't",
        "we're", "i'm", "you're", "that's", "we'll", "i'll", "can't", "won't", "isn't", "aren't", "didn't", "doesn't",
        "need", "needs", "make", "sure", "know", "think", "going", "want", "like", "well", "now", "new", "one", "two",
    ]

    /// The words of a text that carry its content: not stopwords, at least 3 letters.
    static func contentWords(_ text: String) -> [String] {
        words(text).filter { w in
            let l = w.lowercased()
            return !stopwords.contains(l) && l.filter(\.isLetter).count >= 3
        }
    }
}

import Foundation
import ParlanceProtocol

/// Whether a rewrite is in the tone it was asked for, by markers that can be counted:
///
/// - formal: no contractions, no slang, full sentences (each starts with a capital and ends
///   with . ! or ?), and a formality score of at least 0.45;
/// - casual: a formality score of at most 0.6, and two of: a contraction, the reader
///   addressed as "you", short sentences (at most 18 words on average);
/// - empathetic: the reader acknowledged ("I understand", "I know this", "thank you for",
///   "I'm sorry", "we appreciate"…);
/// - direct: the first sentence carries the selection's first fact (or, without facts, two
///   of its content words), and the whole is shorter than the selection;
/// - diplomatic: a hedge or softener ("perhaps", "might", "could we", "would it be
///   possible", "I wonder"…).
///
/// The safe repairs are lexical: a formal rewrite has its contractions spelled out and a
/// slang opener ("Hey") dropped; a casual one has "do not", "we are", "it is"… contracted.
public enum ToneCheck {
    /// One marker the text failed, with what the message needs (`detail` says it in words).
    public enum Failure: Hashable, Sendable {
        /// The contractions found (each once).
        case contractions([String])
        /// The slang found (each once).
        case slang([String])
        /// The first sentence that is not a full one.
        case notFullSentences(String)
        /// The formality score (two decimals), below `formalAtLeast`.
        case readsCasual(Double)
        /// The formality score (two decimals), above `casualAtMost`.
        case readsFormal(Double)
        /// Two or more of the casual markers missing: "contractions", "secondPerson", "shortSentences".
        case notConversational(missing: [String])
        case noAcknowledgement
        /// A direct rewrite's first sentence has none of the selection's facts (one named).
        case noFactFirst(example: String)
        /// A direct rewrite's first sentence lacks the selection's main words (it has no facts).
        case noMainWordsFirst
        case notShorter(words: Int, selectionWords: Int)
        case noHedge

        /// The marker's name ("contractions", "acknowledgement"…).
        public var marker: String {
            switch self {
            case .contractions: "contractions"
            case .slang: "slang"
            case .notFullSentences: "fullSentences"
            case .readsCasual, .readsFormal: "formality"
            case .notConversational(let missing): missing[0]
            case .noAcknowledgement: "acknowledgement"
            case .noFactFirst, .noMainWordsFirst: "mainPointFirst"
            case .notShorter: "shorter"
            case .noHedge: "hedges"
            }
        }
    }

    /// One lexical change of a repair: `"don't" → "do not"`.
    public struct Change: Hashable, Sendable {
        public var from: String
        public var to: String
    }

    public static let formalAtLeast = 0.45
    public static let casualAtMost = 0.6
    static let shortSentence = 18.0

    /// The markers `text` fails for `tone` (empty: the tone is what it says). `original` is
    /// the selection (the direct tone compares against it).
    /// In a language with its own formality markers (`FormalityMarkers`), formal and casual
    /// are judged by those (`addressFailures`); the other tones' markers are English.
    public static func check(_ text: String, tone: Tone, original: String, language: String = "en") -> [Failure] {
        let lower = Lexicon.expanded(text)
        let words = Lexicon.words(text)
        let sentences = Lexicon.sentences(text)
        let score = Formality.score(text, language: language)
        let shown = (score * 100).rounded() / 100
        if tone == .formal || tone == .casual, let markers = FormalityMarkers.of(language) {
            return addressFailures(text, tone: tone, words: words, sentences: sentences, score: shown, markers: markers)
        }
        var out: [Failure] = []
        switch tone {
        case .formal:
            let contractions = words.filter { Lexicon.isContraction($0.lowercased()) }
            if !contractions.isEmpty { out.append(.contractions(unique(contractions))) }
            let slang = words.filter { slangWords.contains($0.lowercased()) }
            if !slang.isEmpty { out.append(.slang(unique(slang))) }
            if let fragment = firstFragment(sentences) { out.append(.notFullSentences(fragment)) }
            if score < formalAtLeast { out.append(.readsCasual(shown)) }
        case .casual:
            if score > casualAtMost { out.append(.readsFormal(shown)) }
            let contracted = words.contains { Lexicon.isContraction($0.lowercased()) }
            let secondPerson = words.contains { ["you", "your", "you're", "you'll", "you've", "you'd", "yours", "u", "ya"].contains($0.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")) }
            let mean = Double(words.count) / Double(max(1, sentences.count))
            var missing: [String] = []
            if !contracted { missing.append("contractions") }
            if !secondPerson { missing.append("secondPerson") }
            if mean > shortSentence { missing.append("shortSentences") }
            if missing.count >= 2 { out.append(.notConversational(missing: missing)) }
        case .empathetic:
            if !acknowledgements.contains(where: { contains(lower, $0) }) { out.append(.noAcknowledgement) }
        case .direct:
            out += directFailures(text, sentences: sentences, original: original)
        case .diplomatic:
            if !hedges.contains(where: { contains(lower, $0) }) { out.append(.noHedge) }
        }
        return out
    }

    /// The first sentence that is not a full one (a capital or digit first, . ! ? : or a
    /// quote last); a salutation line ("Dear Ana,") and a sign-off are not sentences.
    static func firstFragment(_ sentences: [String]) -> String? {
        sentences.first { s in
            guard let f = s.first(where: { !"\"'“‘(¿¡".contains($0) }) else { return false }
            let startsWell = f.isUppercase || f.isNumber || !f.isLetter
            let endsWell = s.last.map { ".!?:\"”)".contains($0) } ?? false
            return (!startsWell || !endsWell) && !s.hasSuffix(",") && Lexicon.words(s).count > 3
        }
    }

    /// Formal and casual in a language with its own markers: formal has none of the casual
    /// words (the informal address: "tú", "tu", "du"), full sentences and a score of at
    /// least `formalAtLeast`; casual a score of at most `casualAtMost`, and one of: a casual
    /// word, short sentences.
    static func addressFailures(_ text: String, tone: Tone, words: [String], sentences: [String], score: Double,
                                markers: FormalityMarkers) -> [Failure] {
        let casualWords = words.filter(markers.isCasual)
        var out: [Failure] = []
        if tone == .formal {
            if !casualWords.isEmpty { out.append(.slang(unique(casualWords))) }
            if let fragment = firstFragment(sentences) { out.append(.notFullSentences(fragment)) }
            if score < formalAtLeast { out.append(.readsCasual(score)) }
        } else {
            if score > casualAtMost { out.append(.readsFormal(score)) }
            var missing: [String] = []
            if casualWords.isEmpty { missing.append("informalAddress") }
            if Double(words.count) / Double(max(1, sentences.count)) > shortSentence { missing.append("shortSentences") }
            if missing.count >= 2 { out.append(.notConversational(missing: missing)) }
        }
        return out
    }

    /// A direct rewrite: the first sentence carries the selection's first fact (or another of
    /// its facts; without facts, two of its content words), and the whole is shorter.
    static func directFailures(_ text: String, sentences: [String], original: String) -> [Failure] {
        var out: [Failure] = []
        let first = sentences.first ?? text
        let facts = Facts.extract(original)
        if let fact = facts.first {
            if Facts.missing(facts, in: first).count == facts.count { out.append(.noFactFirst(example: fact.text)) }
        } else {
            let have = Set(Lexicon.contentWords(first).map(Lexicon.stem))
            let want = Set(Lexicon.contentWords(original).map(Lexicon.stem))
            if have.intersection(want).count < min(2, want.count) { out.append(.noMainWordsFirst) }
        }
        let n = TextChecks.wordCount(text), m = TextChecks.wordCount(original)
        if m >= 8, n >= m { out.append(.notShorter(words: n, selectionWords: m)) }
        return out
    }

    // MARK: Repair

    /// The text with the tone's safe lexical repairs applied, with one finding naming the
    /// changes (none: nothing to do). Only formal and casual have them.
    public static func repair(_ text: String, tone: Tone) -> Repaired<String> {
        switch tone {
        case .formal: return formalize(text)
        case .casual: return contract(text)
        default: return Repaired(text)
        }
    }

    static func repaired(_ text: String, _ tone: Tone, _ changes: [Change]) -> Repaired<String> {
        Repaired(text, findings: changes.isEmpty ? [] : [Finding(.toneMismatch, .toneWording(tone, changes), action: .replaced(by: .rewording))])
    }

    /// Contractions spelled out ("don't" → "do not"), slang replaced where a plain word
    /// says the same ("gonna" → "going to"), a slang opener dropped ("Hey team, the…" →
    /// "Team, the…"; "Hey Ana," → "Dear Ana,").
    static func formalize(_ text: String) -> Repaired<String> {
        var t = text
        var changes: [Change] = []
        // The opener first: "Hey Priyanka," → "Dear Priyanka,"; "Hey," / "Hey there!" → dropped.
        if let m = firstMatch(openerPattern, in: t) {
            let whole = m.0, rest = m.1
            let name = rest.trimmingCharacters(in: .whitespaces)
            let replacement: String
            if name.isEmpty || ["there", "all", "everyone", "folks", "guys", "y'all"].contains(name.lowercased()) {
                replacement = ""
            } else {
                replacement = "Dear " + name + ","
            }
            var after = String(t.dropFirst(whole.count)).trimmingCharacters(in: .whitespaces)
            if replacement.isEmpty, let f = after.first, f.isLowercase { after = f.uppercased() + after.dropFirst() }
            t = replacement.isEmpty ? after : replacement + (after.hasPrefix("\n") ? "" : " ") + after
            changes.append(Change(from: whole.trimmingCharacters(in: .whitespaces), to: replacement.isEmpty ? "(dropped)" : replacement))
        }
        for (short, long) in Lexicon.contractions {
            let (r, n) = replaceWords(t, short, long)
            if n > 0 { t = r; changes.append(Change(from: short, to: long)) }
        }
        // What is left: "'s"/"'re"/"'ll"… after a pronoun or "n't" after a verb.
        for (suffix, long) in [("n't", " not"), ("'re", " are"), ("'ll", " will"), ("'ve", " have")] {
            let (r, n) = replaceSuffix(t, suffix, long)
            if n > 0 { t = r; changes.append(Change(from: "…" + suffix, to: "…" + long)) }
        }
        for (slang, plain) in slangReplacements {
            let (r, n) = replaceWords(t, slang, plain)
            if n > 0 { t = r; changes.append(Change(from: slang, to: plain)) }
        }
        return repaired(t, .formal, changes)
    }

    /// Common phrases contracted ("do not" → "don't", "we are" → "we're", "it is" → "it's",
    /// "I am" → "I'm"), only where the contraction reads naturally (not at the end of a
    /// clause: "yes, it is." stays).
    static func contract(_ text: String) -> Repaired<String> {
        var t = text
        var changes: [Change] = []
        for (long, short) in Lexicon.contractible {
            let (r, n) = replaceWords(t, long, short, notBeforePunctuation: true)
            if n > 0 { t = r; changes.append(Change(from: long, to: short)) }
        }
        return repaired(t, .casual, changes)
    }

    /// A stronger line for the next attempt's prompt.
    public static func instruction(_ tone: Tone) -> String {
        switch tone {
        case .formal:
            return "Be strictly formal: no contractions (write \"do not\", \"we are\"), no slang, no \"Hey\"; complete sentences only."
        case .casual:
            return "Be clearly casual: use contractions (we're, don't, it's), talk to the reader as \"you\", keep sentences short."
        case .empathetic:
            return "Start by acknowledging the reader, with words such as \"I understand\", \"I'm sorry\" or \"Thank you for\"."
        case .direct:
            return "Put the main point and its key fact in the first sentence. Use fewer words than the original."
        case .diplomatic:
            return "Soften it with tactful words such as \"perhaps\", \"might\", \"could we\" or \"would it be possible\"."
        }
    }

    // MARK: Lexicons

    static let acknowledgements = [
        "i understand", "we understand", "i know this", "i know that", "i know how", "we know this", "we know how", "thank you for",
        "thanks for", "thanks so much for", "i am sorry", "we are sorry", "i am so sorry", "so sorry", "i apologi", "we apologi",
        "our apologies", "my apologies", "we appreciate", "i appreciate", "i realise", "i realize", "we realise", "we realize",
        "i can imagine", "i hear you", "must be frustrating", "must be difficult", "may be frustrating", "may be disappointing",
        "this is frustrating", "this is disappointing", "understandably", "i recognise", "i recognize", "we recognise", "we recognize",
        "sorry for", "sorry to", "sorry about", "regret", "i hope you", "we hope you", "i hope this", "we value", "we truly value",
        "your patience", "your understanding",
    ]

    static let hedges = [
        "perhaps", "might", "could we", "could you", "would it be possible", "i wonder", "we wonder", "possibly", "may be",
        "would you", "would be", "it would", "we would", "i would", "if possible", "suggest", "consider", "we may", "you may",
        "it may", "it seems", "appears", "hopefully", "ideally", "kindly", "would you mind", "would appreciate", "open to",
        "happy to", "a little", "slightly", "somewhat", "unfortunately", "i am afraid", "we are afraid",
        "i'd", "we'd",
    ]

    /// Slang a formal text must not have (a subset of the formality score's casual markers:
    /// words with no formal sense).
    static let slangWords: Set<String> = [
        "hey", "hiya", "yeah", "yep", "yup", "nope", "gonna", "wanna", "gotta", "kinda", "sorta", "cool", "awesome", "stuff", "guys",
        "lol", "btw", "thx", "tbh", "fyi", "asap", "oops", "wow", "folks", "chill", "dude", "buddy", "yay", "ugh", "alright", "bummer",
        "stoked", "u", "ya", "cheers", "heads-up", "okay", "ok",
    ]

    static let slangReplacements: [(String, String)] = [
        ("gonna", "going to"), ("wanna", "want to"), ("gotta", "have to"), ("kinda", "somewhat"), ("sorta", "somewhat"),
        ("yeah", "yes"), ("yep", "yes"), ("yup", "yes"), ("nope", "no"), ("thx", "thank you"), ("asap", "as soon as possible"),
        ("btw", "incidentally"), ("fyi", "for your information"), ("heads-up", "notice"),
    ]

    /// "Hey", "Hey there", "Hey team", "Hey Ana Ruiz" at the start, with what follows it (",", "!").
    nonisolated(unsafe) static let openerPattern = try! NSRegularExpression(
        pattern: #"^\s*(?i:hey|hiya|yo)\b(?: +((?i:there|all|everyone|folks|guys|team|y'all)\b|\p{Lu}[\p{L}'’-]*(?: \p{Lu}[\p{L}'’-]*)?))?\s*[,!:—–-]?"#)

    // MARK: Helpers

    static func unique(_ words: [String]) -> [String] {
        var seen = Set<String>()
        return words.filter { seen.insert($0.lowercased()).inserted }
    }

    /// Whether `lower` (lower case, contractions spelled out) has `phrase` at word boundaries.
    static func contains(_ lower: String, _ phrase: String) -> Bool {
        let p = Lexicon.expanded(phrase)
        var from = lower.startIndex
        while let r = lower.range(of: p, range: from..<lower.endIndex) {
            let before = r.lowerBound == lower.startIndex ? nil : lower[lower.index(before: r.lowerBound)]
            let after = r.upperBound == lower.endIndex ? nil : lower[r.upperBound]
            // A phrase ending in a stem ("apologi", "regret") may continue into a word.
            let stem = phrase.hasSuffix("apologi") || phrase == "regret" || phrase == "suggest"
            if !(before?.isLetter ?? false), stem || !(after?.isLetter ?? false) { return true }
            from = r.upperBound
        }
        return false
    }

    static func firstMatch(_ re: NSRegularExpression, in text: String) -> (String, String)? {
        let ns = text as NSString
        guard let m = re.firstMatch(in: text, range: NSRange(location: 0, length: ns.length)) else { return nil }
        return (ns.substring(with: m.range), m.range(at: 1).location == NSNotFound ? "" : ns.substring(with: m.range(at: 1)))
    }

    /// Replaces the phrase `from` (case-insensitive, whole words, either apostrophe) by `to`,
    /// keeping a capital first letter. Returns the text and how many were replaced.
    static func replaceWords(_ text: String, _ from: String, _ to: String, notBeforePunctuation: Bool = false) -> (String, Int) {
        let escaped = NSRegularExpression.escapedPattern(for: from).replacingOccurrences(of: "'", with: "['’]")
        let tail = notBeforePunctuation ? #"(?![\p{L}\p{N}'’-])(?!\s*[.,;:!?)]|\s*$)"# : #"(?![\p{L}\p{N}'’-])"#
        guard let re = try? NSRegularExpression(pattern: #"(?<![\p{L}\p{N}'’-])"# + escaped + tail, options: [.caseInsensitive]) else { return (text, 0) }
        let ns = text as NSString
        let matches = re.matches(in: text, range: NSRange(location: 0, length: ns.length))
        guard !matches.isEmpty else { return (text, 0) }
        let out = NSMutableString(string: text)
        for m in matches.reversed() {
            let found = ns.substring(with: m.range)
            var replacement = to
            if let f = found.first, f.isUppercase, let g = to.first, g.isLowercase {
                replacement = g.uppercased() + to.dropFirst()
            } else if let f = found.first, f.isLowercase, to.hasPrefix("I") == false, let g = to.first, g.isUppercase, !from.hasPrefix("i") {
                replacement = g.lowercased() + to.dropFirst()
            }
            out.replaceCharacters(in: m.range, with: replacement)
        }
        return (out as String, matches.count)
    }

    /// "…n't", "…'re"… after any word the tables do not know ("Harry'll") are left: only
    /// after pronouns and auxiliaries is the expansion certain.
    static func replaceSuffix(_ text: String, _ suffix: String, _ long: String) -> (String, Int) {
        let stems: [String]
        switch suffix {
        case "n't": stems = ["ain"]
        default: stems = ["who", "what", "there", "these", "those", "where"]
        }
        var t = text, n = 0
        for s in stems {
            let target = s == "ain" ? "is not" : s + long
            let (r, k) = replaceWords(t, s + suffix, target)
            t = r
            n += k
        }
        return (t, n)
    }
}

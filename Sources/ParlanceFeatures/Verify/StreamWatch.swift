import ParlanceDocuments
import ParlanceProtocol

/// The cheap checks, run on a generation's growing text while it streams, so that an
/// output going wrong is stopped at once and the next attempt starts, instead of being
/// finished and then judged: a loop (a run of words repeated back to back, or a sentence
/// written again), an echo of the prompt's own instructions, a bracketed placeholder, and
/// text in another language than the one asked for, and a number or name that the texts it
/// may draw on do not have (a fact invented, or changed beyond repair). Each is the finished-text check's own
/// test (`TextChecks`, `LanguageDetector`), so a stream stopped here would have failed
/// there; the loop is the one check only a stream needs (a finished loop is cut by
/// `maxTokens`, after every token of it was paid for).
public struct StreamWatch: Sendable {
    /// The prompt's own words (the echo check); empty: not checked.
    public var instructions: [String] = []
    /// The user's text: what the output may repeat (echo and placeholders are only those it does not have).
    public var source = ""
    /// BCP-47 primary language the output must be in; nil: not checked.
    public var language: String? = nil
    /// The code a finding is reported under.
    public var code: VerificationIssueCode = .degenerate
    /// Bracketed placeholders are checked (not in JSON output, whose arrays are bracketed).
    public var placeholders = true
    /// Numbers and names the output may write (`unsupportedFact`); nil: not checked.
    public var facts: FactRule? = nil

    /// The finished check's `unsupportedFact` rule, run on the sentences the output has
    /// finished (a number or a name may still be growing in the last one).
    public struct FactRule: Sendable {
        /// Where the output may take facts from: a rewrite's selection, an answer's segments.
        public enum Scope: Sendable { case selection, segments }
        public var scope: Scope
        /// The texts whose numbers and names the output may write.
        public var sources: [String]
        /// Texts whose names it may write besides (a rewrite's prompt instructions).
        public var names: [String] = []
        /// A rewrite's selection: what the deterministic repairs put right first (a fact
        /// changed in place, an invented greeting name) is not a reason to stop. nil: an
        /// answer, judged as written.
        public var repairedAgainst: String? = nil
        /// The JSON field that holds the text (ask's "answer"); nil: the whole output.
        public var field: String? = nil

        /// The facts of `output`'s finished sentences that no source has; nil: none.
        func invented(in output: String) -> Finding? {
            var text = output
            if let field {
                guard let value = PartialJSON.complete(output)?[field]?.stringValue else { return nil }
                text = value
            }
            let done = StreamWatch.finishedSentences(text)
            guard !done.isEmpty else { return nil }
            let judged = scope == .segments ? AnswerVerifier.withoutReferences(done)
                : repairedAgainst.map { RewriteRepair.repair(done, original: $0, tone: nil, mode: .repair).value } ?? done
            let found = Facts.unsupported(in: judged, by: sources).filter { f in !(f.kind == .name && names.contains { $0.contains(f.text) }) }
            guard !found.isEmpty else { return nil }
            let texts = found.map(\.text)
            return Finding(.unsupportedFact, scope == .selection ? .factsNotInSelection(texts) : .factsNotInSegments(texts), path: field)
        }
    }

    /// `text` up to the end of its last finished sentence: a sentence mark followed by
    /// white space, or a line break ("3." may yet become "3.5").
    static func finishedSentences(_ text: String) -> String {
        var end = text.startIndex
        var i = text.startIndex
        while i < text.endIndex {
            let next = text.index(after: i)
            if text[i] == "\n" || (".!?".contains(text[i]) && next < text.endIndex && text[next].isWhitespace) { end = next }
            i = next
        }
        return String(text[..<end])
    }

    /// A stop's finding as the result carries it: taken care of (the rest of the output was
    /// cut away, action `removed`) when the text kept from the stopped stream no longer shows
    /// it, as when an echo of the prompt began on a line of its own that cleaning drops;
    /// open otherwise.
    public func settled(_ stop: Finding, kept: String) -> Finding {
        check(kept, delta: ".") == nil ? stop.acted(.removed, .repair) : stop
    }

    /// Words repeated back to back that make a loop: this many words in all.
    static let loopWords = 12
    /// Words a language must be judged on.
    static let languageWords = 12

    /// What stops the stream, judged when `delta` ends a sentence or a line (the checks are
    /// whole-text, so once per sentence keeps them cheap); nil: go on.
    public func check(_ text: String, delta: String) -> Finding? {
        guard delta.contains(where: { ".!?\n;:".contains($0) }) else { return nil }
        if let run = Self.loop(in: text), !Lexicon.words(source, .normalized).joined(separator: " ").contains(run + " " + run) {
            // (A repetition the user's own text has is copied, not a loop.)
            return Finding(code, .loop(run))
        }
        if !instructions.isEmpty, let echo = TextChecks.echo(in: text, instructions: instructions, source: source) {
            return Finding(.instructionEcho, .rewriteEchoesPrompt(echo))
        }
        if placeholders, let p = TextChecks.placeholder(in: text, source: source) { return Finding(code, .answerPlaceholder(p)) }
        if let invented = facts?.invented(in: text) { return invented }
        if let want = language, TextChecks.wordCount(text) >= Self.languageWords {
            let (found, confidence) = LanguageDetector.detect(text)
            if found != want, found != "und", confidence >= 0.5 { return Finding(.wrongLanguage, .wrongLanguage(found: found, wanted: want)) }
        }
        return nil
    }

    /// The repeated run, when the text ends in one: the same words back to back, at least
    /// twice and `loopWords` words in all ("hello hello hello …", a clause written again and
    /// again), or a last sentence of five words or more that the text already holds.
    /// A run of two to eight words written three times back to back anywhere in `text`
    /// ("a team led by a team led by a team led by"), or nil. A finished text's loop need
    /// not be at its end, where `loop` looks while it streams.
    static func repeatedRun(in text: String) -> String? {
        let words = Lexicon.words(text, .normalized)
        guard words.count >= 6 else { return nil }
        for period in 2...8 where words.count >= 3 * period {
            for start in 0...(words.count - 3 * period) {
                let unit = words[start..<(start + period)]
                if unit == words[(start + period)..<(start + 2 * period)], unit == words[(start + 2 * period)..<(start + 3 * period)] {
                    return unit.joined(separator: " ")
                }
            }
        }
        return nil
    }

    static func loop(in text: String) -> String? {
        let words = Lexicon.words(text, .normalized)
        if words.count >= loopWords {
            for period in 1...min(40, words.count / 2) {
                let unit = Array(words.suffix(period))
                var times = 1
                var end = words.count - period
                while end >= period, Array(words[(end - period)..<end]) == unit {
                    times += 1
                    end -= period
                }
                if times >= 2, times * period >= loopWords { return unit.joined(separator: " ") }
            }
        }
        let sentences = Sentences.split(text).map { Lexicon.words($0, .normalized) }.filter { !$0.isEmpty }
        if let last = sentences.last, last.count >= 5, sentences.dropLast().contains(last) { return last.joined(separator: " ") }
        return nil
    }
}

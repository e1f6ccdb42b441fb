import Foundation
import ParlanceDocuments
import ParlanceProtocol

/// Judges one answer of ask/stream against the segments the model was shown: the answer
/// must be language (not punctuation, a timestamp or a piece of the prompt), its figures
/// and names must occur in those segments or the question, and every citation must
/// support it. Citations are also repaired here (`VerifyMode.repair`): unsupported ones are
/// dropped, and the segment that best supports the answer and the question (BM25 over the
/// shown segments) is cited when the model did not cite it.
public enum AnswerVerifier {
    /// What the check says of an answer, beside its findings.
    public struct Verdict: Sendable, Equatable {
        /// The citations to return, by segment id, in transcript order (`.report`: as cited).
        public var citations: [Int]
        /// The model said the document does not answer the question.
        public var saysNotFound: Bool
        /// The answer itself passed (its citations aside, which are repaired or reported).
        public var answerPassed: Bool
    }

    /// The segments shown for one answer and their BM25 index, built once per answer: every
    /// attempt's check, the citation repair and the extractive fallback rank against it.
    /// The texts whose numbers and names an answer may write: the segments shown, with
    /// their speakers, and the question.
    public static func factSources(question: String, segments: [Segment]) -> [String] {
        segments.map { ($0.speaker ?? "") + " " + $0.text } + [question]
    }

    /// The answer without what points at the transcript instead of stating a fact of it:
    /// the segment ids the prompt shows ("[4]", "segment 4", "segments 3 and 5") and list
    /// markers ("1. "). Their numbers are in no segment's text, and were judged invented
    /// facts: an answer citing "[1]" was stopped and retried, and then declared not found.
    public static func withoutReferences(_ answer: String) -> String {
        referencePatterns.reduce(answer) { text, p in
            p.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: " ")
        }
    }

    nonisolated(unsafe) static let referencePatterns = [
        #"\[\s*\d+(?:\s*[,;–-]\s*\d+)*\s*\]"#,
        #"(?i)\b(?:segments?|segmentos?|segmenti|seg\.)\s*#?\d+(?:\s*(?:,|and|et|und|y|e|&|to|-|–)\s*\d+)*"#,
        #"(?m)^\s*\d{1,2}[.)](?=\s|$)"#,  // at the end too: a stream is judged up to "1."
    ].map { try! NSRegularExpression(pattern: $0) }

    public struct Passages: Sendable {
        public let segments: [Segment]
        let index: BM25Index
        /// Each segment's facts (`Facts.extract`'s keys), for `factSource`.
        let facts: [Set<String>]
        public init(_ segments: [Segment]) {
            self.segments = segments
            index = BM25Index(documents: segments.map { ($0.speaker.map { $0 + " " } ?? "") + $0.text })
            facts = segments.map { Set(Facts.extract($0.text).map(\.key)) }
        }
    }

    public static func check(question: String, answer: String, cited: [Int], shown: [Segment], instructions: [String],
                             mode: VerifyMode = .repair) -> Repaired<Verdict> {
        check(question: question, answer: answer, cited: cited, passages: Passages(shown), instructions: instructions, mode: mode)
    }

    /// The answer checked and its citations repaired (`.repair`) or reported (`.report`).
    /// `evidence`: the shown segments that hold what is asked beside an answer of the kind
    /// asked for (`Answerability.Evidence.quote`), cited after the answer's own source.
    /// `language`: the document's, for the forms of the question's words (`saidOfOther`).
    public static func check(question: String, answer: String, cited: [Int], passages: Passages, instructions: [String],
                             mode: VerifyMode = .repair, evidence: [Int] = [], language: String = "en") -> Repaired<Verdict> {
        let text = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        var findings = (Ablation.off("answer.degenerate") ? nil : degenerate(question: question, answer: text, passages: passages, instructions: instructions))
            .map { [Finding(.degenerate, $0, path: "answer")] } ?? []
        // "Not mentioned" in clean words is an answer: the document does not say.
        if findings.isEmpty, saysNotFound(text) { return Repaired(Verdict(citations: [], saysNotFound: true, answerPassed: true)) }
        let typed = !Ablation.off("answer.type")
        if typed, findings.isEmpty, let type = AskStream.AnswerType.figure(askedBy: question), !type.isGiven(in: text) {
            findings.append(Finding(.notAnswered, .notAnswered(type), path: "answer"))
        }
        if typed, findings.isEmpty, let unit = uncounted(question: question, answer: text) {
            findings.append(Finding(.notAnswered, .countOfOther(unit), path: "answer"))
        }
        if typed, findings.isEmpty, case let other = saidOfOther(question: question, answer: text, segments: passages.segments, language: language), !other.isEmpty {
            findings.append(Finding(.notAnswered, .valueOfOther(other), path: "answer"))
        }
        let invented = Ablation.off("answer.facts") ? []
            : Facts.unsupported(in: withoutReferences(text), by: factSources(question: question, segments: passages.segments))
        if !invented.isEmpty { findings.append(Finding(.unsupportedFact, .factsNotInSegments(invented.map(\.text)), path: "answer")) }
        let answerPassed = findings.isEmpty
        let citations = Ablation.off("answer.citations") ? Repaired(cited.filter { id in passages.segments.contains { $0.id == id } })
            : repairCitations(question: question, answer: text, cited: cited, passages: passages, mode: mode, evidence: evidence)
        return Repaired(Verdict(citations: citations.value, saysNotFound: false, answerPassed: answerPassed), findings: findings + citations.findings)
    }

    /// The first way the answer is degenerate (not language, the prompt's words, a
    /// placeholder, a fragment, the question again, a copied unrelated segment), if any.
    static func degenerate(question: String, answer text: String, passages: Passages, instructions: [String]) -> Finding.Subject? {
        let shown = passages.segments
        // A one-word answer is fine when it is a word of the segments (a name for "who…?").
        let oneWord = Lexicon.words(text)
        let wordFromSegments = oneWord.count == 1 && oneWord[0].count >= 2 && oneWord[0].allSatisfy(\.isLetter)
            && shown.contains { s in Lexicon.words(s.text).contains { $0.lowercased() == oneWord[0].lowercased() } }
        if !wordFromSegments, !TextChecks.isLanguage(text) {
            return .answerNotLanguage(text)
        } else if let echo = TextChecks.echo(in: text, instructions: instructions, source: question + "\n" + shown.map(\.text).joined(separator: "\n")) {
            return .answerEchoesPrompt(echo)
        } else if let placeholder = TextChecks.placeholder(in: text, source: question + "\n" + shown.map(\.text).joined(separator: "\n")) {
            return .answerPlaceholder(placeholder)
        } else if let first = text.unicodeScalars.first, ",;:)]}".unicodeScalars.contains(first) {
            return .answerFragment(String(first))
        } else if repeatsQuestion(text, question) {
            return .answerRepeatsQuestion
        } else if let copied = shown.first(where: { copies(text, $0) }), TextChecks.terms(copied.text).isDisjoint(with: TextChecks.terms(question)) {
            return .answerCopiesSegment(copied.id)
        } else if let line = transcriptLine(opening: text, shown: shown) {
            return .answerCopiesSegment(line)
        } else if let label = speakerLabel(opening: text, shown: shown) ?? AskDocuments.heading(opening: text) {
            return .answerOpensWithLabel(label)
        } else if let run = StreamWatch.repeatedRun(in: text), !shown.contains(where: { StreamWatch.repeatedRun(in: $0.text) == run }) {
            // "…created by a team led by a team led by a team led by…": a loop that stopped,
            // which the stream's watch (it reads the end only) let through.
            return .answerLoops(run)
        }
        return nil
    }

    /// The model gave no answer of its own: it said the document does not say, or only
    /// restated the question. A small model seldom says "not mentioned"; where the document
    /// does not say, it restates what was asked (the tuning part, measured: the kept attempt
    /// of 6 of 32 unanswerable questions, of 2 of 50 answerable ones). Answerability reads it
    /// of any attempt of the turn (`modelSaysNotFound`).
    public static func givesNoAnswer(_ verdict: Repaired<Verdict>) -> Bool {
        verdict.saysNotFound || verdict.findings.contains { $0.subject == .answerRepeatsQuestion }
    }

    /// The label the answer opens with when it is a shown segment's speaker, as the prompt
    /// writes a line ("Renata: Renata, we have a problem…"): the model went on writing the
    /// transcript, and what follows is a line of its own, not an answer. Nil for any other
    /// opening ("2019: the year…", "Short answer: …", a label after a line's number, which
    /// `transcriptLine` reads).
    static func speakerLabel(opening text: String, shown: [Segment]) -> String? {
        guard let m = text.firstMatch(of: /^\s*([^:\n\d\[(]{1,60}):/) else { return nil }
        let label = TextChecks.normalized(String(m.output.1))
        guard !label.isEmpty, shown.contains(where: { $0.speaker.map(TextChecks.normalized) == label }) else { return nil }
        return String(m.output.1).trimmingCharacters(in: .whitespaces)
    }

    /// The shown segment whose line the answer opens with as the prompt writes lines, its
    /// number and its speaker ("1) Claire Martin: Bonjour à tous…", "[12] MAYA: …"): the
    /// model went on writing the transcript, whatever follows. Nil when the answer opens
    /// otherwise (a number alone, "2019: the year…", is an answer).
    static func transcriptLine(opening text: String, shown: [Segment]) -> Int? {
        guard let m = text.firstMatch(of: /^\s*[\[(]?(\d{1,6})[\])\].:]?\s+([^:\n]{1,60}):/),
              let id = Int(m.output.1), let segment = shown.first(where: { $0.id == id }),
              let speaker = segment.speaker ?? shown.last(where: { $0.id < id && $0.speaker != nil })?.speaker,
              TextChecks.normalized(String(m.output.2)) == TextChecks.normalized(speaker) else { return nil }
        return id
    }

    /// The unit a "how many <unit>" question counts ("mesas" of "¿Cuántas mesas…?"), when
    /// no sentence of a longer answer names it beside a number the question does not give:
    /// the answer counts something else. A unit of three letters or fewer ("kg") is written
    /// too many ways to ask for, and a few words ("Five.") need not name it.
    static func uncounted(question: String, answer: String) -> String? {
        guard AskStream.AnswerType.asked(by: question) == .quantity, let unit = Answerability.unitTerm(question), unit.count > 3,
              unit != Answerability.durationUnit,
              TextChecks.wordCount(answer) > 4 else { return nil }
        let asked = Set(Lexicon.words(question, .normalized))
        let counted = Sentences.split(answer).contains { sentence in
            Lexicon.words(sentence, .terms).contains { Answerability.sameWord($0, unit) }
                && Facts.numberSpans(sentence).contains { !asked.contains($0.key) && !asked.contains(TextChecks.normalized($0.span)) }
        }
        return counted ? nil : unit
    }

    /// The answer is the segment's line copied: its text whole, or its opening (six words or
    /// more), or the whole line and more after it; what a transcript line starts with may
    /// come first (its id, its time, its speaker, "Transcript").
    static func copies(_ answer: String, _ segment: Segment) -> Bool {
        let line = TextChecks.normalized(segment.text)
        let label = Set(TextChecks.normalized(segment.speaker ?? "").split(separator: " ").map(String.init) + ["transcript"])
        let words = TextChecks.normalized(answer).split(separator: " ")
        let body = words.drop { label.contains(String($0)) || $0.allSatisfy(\.isNumber) }.joined(separator: " ")
        guard !body.isEmpty, !line.isEmpty else { return false }
        return body == line || body.hasPrefix(line + " ") || line.hasPrefix(body) && body.split(separator: " ").count >= 6
    }

    /// The answer is the question again, alone or after a label of one word ("Question: …",
    /// the prompt's own label for it, which the model copies with the question).
    static func repeatsQuestion(_ answer: String, _ question: String) -> Bool {
        var unlabelled = answer.drop { $0.isWhitespace }
        if let colon = unlabelled.firstIndex(of: ":"), unlabelled[..<colon].allSatisfy(\.isLetter) {
            unlabelled = unlabelled[unlabelled.index(after: colon)...]
        }
        // A label before a short answer ("Answer: Oslo") is an answer, even one the question names.
        let variants = TextChecks.wordCount(String(unlabelled)) * 2 >= TextChecks.wordCount(question) ? [answer, String(unlabelled)] : [answer]
        return variants.contains { a in
            let n = TextChecks.normalized(a), q = TextChecks.normalized(question)
            return !n.isEmpty && (q.contains(n) || TextChecks.jaccard(a, question) >= 0.8 && TextChecks.wordCount(a) <= TextChecks.wordCount(question) + 2)
        }
    }

    /// Segments ranked by how well they support the answer and the question together.
    public static func answerRanking(question: String, answer: String, passages p: Passages) -> [(id: Int, score: Double)] {
        // The answer counts twice: a citation supports what was said, not only what was asked.
        p.index.search(answer + " " + answer + " " + question, limit: p.segments.count).map { (p.segments[$0.index].id, $0.score) }
    }

    /// Segments ranked by the question alone (what retrieval answers).
    public static func relevance(question: String, passages p: Passages) -> [(id: Int, score: Double)] {
        p.index.search(question, limit: p.segments.count).map { (p.segments[$0.index].id, $0.score) }
    }

    public static func relevant(question: String, shown: [Segment]) -> [Segment] { relevant(question: question, passages: Passages(shown)) }

    /// Segments ranked by the question alone, an interviewer's question replaced by the
    /// reply after it (in an interview the matching question is rarely the answer).
    public static func relevant(question: String, passages p: Passages) -> [Segment] {
        let shown = p.segments
        var out: [Segment] = []
        let ranked = relevance(question: question, passages: p)
        guard let top = ranked.first?.score else { return [] }
        for r in ranked where r.score >= 0.5 * top {
            guard let i = shown.firstIndex(where: { $0.id == r.id }) else { continue }
            var seg = shown[i]
            if seg.text.trimmingCharacters(in: .whitespaces).hasSuffix("?"), i + 1 < shown.count, shown[i + 1].id == seg.id + 1 {
                seg = shown[i + 1]
            }
            if !out.contains(seg) { out.append(seg) }
        }
        return out
    }

    /// The citations to return: the model's that share words with the question and the answer,
    /// retrieval's best for the question, the answer's own source, the evidence passage and the
    /// answer's best support added before them (`.repair`); as cited, with the same findings (`.report`).
    static func repairCitations(question: String, answer: String, cited: [Int], passages: Passages, mode: VerifyMode,
                                evidence: [Int] = []) -> Repaired<[Int]> {
        let shown = passages.segments
        let questionTerms = TextChecks.terms(question)
        let answerTerms = TextChecks.terms(answer)
        let byQuestion = relevant(question: question, passages: passages).map(\.id)
        let byAnswer = answerRanking(question: question, answer: answer, passages: passages)
        var kept: [Int] = []
        var dropped: [Int] = []
        // The model's citations stay when they share a word with the question and one with
        // the answer (a small model often cites the first line, or a line it copied).
        for id in cited where !kept.contains(id) {
            guard let seg = shown.first(where: { $0.id == id }) else { dropped.append(id); continue }
            let terms = TextChecks.terms(seg.text + " " + (seg.speaker ?? ""))
            if !terms.isDisjoint(with: questionTerms), !terms.isDisjoint(with: answerTerms) || byQuestion.prefix(3).contains(id) {
                kept.append(id)
            } else {
                dropped.append(id)
            }
        }
        var findings: [Finding] = []
        if !dropped.isEmpty { findings.append(Finding(.unsupportedCitation, .weakCitations(dropped), path: "citations").acted(.removed, mode)) }
        // Retrieval's best segment for the question leads, then the segment the answer's own
        // figures and names come from, the evidence passage's first segment (what is asked
        // stated beside a value of its kind), retrieval's second, and the segment that best
        // supports the answer and the question when it shares a word with the question.
        var leading = Array(byQuestion.prefix(1))
        if let source = factSource(question: question, answer: answer, passages: passages) { leading.append(source) }
        if let first = evidence.first, shown.contains(where: { $0.id == first }) { leading.append(first) }
        leading += byQuestion.dropFirst().prefix(1)
        if let best = byAnswer.first?.id, let seg = shown.first(where: { $0.id == best }), !TextChecks.terms(seg.text).isDisjoint(with: questionTerms) {
            leading.append(best)
        }
        leading = leading.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
        let added = leading.filter { !kept.contains($0) }
        let final = Array((leading + kept.filter { !leading.contains($0) }).prefix(3))
        let addedKept = added.filter(final.contains).sorted()
        if !addedKept.isEmpty { findings.append(Finding(.unsupportedCitation, .uncitedSegments(addedKept), path: "citations").acted(.added, mode)) }
        return Repaired(mode == .repair ? final.sorted() : cited, findings: findings)
    }

    /// The shown segment the answer's own facts come from: the one holding the most of its
    /// numbers and names that the question does not give, counting only facts that at most
    /// two shown segments hold (a speaker's name or a "1" says nothing of where an answer
    /// comes from). nil when no fact of the answer is that distinctive.
    static func factSource(question: String, answer: String, passages: Passages) -> Int? {
        let asked = Set(Facts.extract(question).map(\.key))
        let facts = Facts.extract(withoutReferences(answer)).filter { !asked.contains($0.key) }
        guard !facts.isEmpty else { return nil }
        var counts: [Int: Int] = [:]
        for f in facts {
            let holders = passages.segments.indices.filter { passages.facts[$0].contains(f.key) }
            guard holders.count <= 2 else { continue }
            for i in holders { counts[passages.segments[i].id, default: 0] += 1 }
        }
        // The most facts; at equal counts the earlier segment.
        return counts.max { a, b in a.value < b.value || a.value == b.value && a.key > b.key }?.key
    }

    /// The answer says the document does not answer the question.
    public static func saysNotFound(_ answer: String) -> Bool {
        let a = answer.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
        return notFoundPhrases.contains { a.contains($0) } && TextChecks.wordCount(a) <= 30
    }

    static let notFoundPhrases = [
        "not found in the", "not mentioned", "isn't mentioned", "is not mentioned", "does not say", "doesn't say", "does not mention",
        "doesn't mention", "no information", "not in the transcript", "not in the document", "the transcript does not", "the document does not",
        "not stated", "not specified", "no mention", "cannot be found", "can't be found",
        // A not-found dressed as an answer: "Reda is from an unspecified location." (the 1.5B
        // on a real podcast, found: true and passed, 2026-12-08).
        // Only "unspecified": "not provided" or "is unknown" may be the answer itself
        // ("Refunds are not provided for annual plans").
        "unspecified",
        "no se menciona", "no se encuentra", "no se dice", "no aparece", "n'est pas mentionn", "introuvable", "ne précise pas", "ne dit pas",
        "nicht erwähnt", "nicht im dokument",
    ]
}

import ParlanceDocuments
import ParlanceProtocol

/// Judges one answer of ask/stream against the segments the model was shown: the answer
/// must be language (not punctuation, a timestamp or a piece of the prompt), its figures
/// and names must occur in those segments or the question, and every citation must
/// support it. Citations are also repaired here: unsupported ones are dropped, and the
/// segment that best supports the answer and the question (BM25 over the shown segments)
/// is cited when the model did not cite it.
public enum AnswerVerifier {
    public struct Verdict: Sendable {
        /// Blocking problems (the answer should be generated again) and repairs made.
        public var issues: [VerificationIssue]
        /// The citations to return, by segment id, in transcript order.
        public var citations: [Int]
        /// The model said the document does not answer the question.
        public var saysNotFound: Bool
        public var blocking: Bool { issues.contains { $0.repaired != true } }
    }

    /// The segments shown for one answer and their BM25 index, built once per answer: every
    /// attempt's check, the citation repair and the extractive fallback rank against it.
    public struct Passages: Sendable {
        public let segments: [Segment]
        let index: BM25Index
        public init(_ segments: [Segment]) {
            self.segments = segments
            index = BM25Index(documents: segments.map { ($0.speaker.map { $0 + " " } ?? "") + $0.text })
        }
    }

    public static func check(question: String, answer: String, cited: [Int], shown: [Segment], instructions: [String]) -> Verdict {
        check(question: question, answer: answer, cited: cited, passages: Passages(shown), instructions: instructions)
    }

    public static func check(question: String, answer: String, cited: [Int], passages: Passages, instructions: [String]) -> Verdict {
        let shown = passages.segments
        var issues: [VerificationIssue] = []
        let text = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        // A one-word answer is fine when it is a word of the segments (a name for "who…?").
        let oneWord = WordDiff.tokens(text).filter(\.isWord)
        let wordFromSegments = oneWord.count == 1 && oneWord[0].text.count >= 2 && oneWord[0].text.allSatisfy(\.isLetter)
            && shown.contains { s in WordDiff.tokens(s.text).contains { $0.text.lowercased() == oneWord[0].text.lowercased() } }
        if !wordFromSegments, !TextChecks.isLanguage(text) {
            issues.append(VerificationIssue(.degenerate, "the answer is not language: \"\(RewriteVerifier.clip(text))\"", path: "answer"))
        } else if let echo = TextChecks.echo(in: text, instructions: instructions, source: question + "\n" + shown.map(\.text).joined(separator: "\n")) {
            issues.append(VerificationIssue(.degenerate, "the answer repeats the prompt's instructions (\"\(RewriteVerifier.clip(echo))\")", path: "answer"))
        } else if let placeholder = TextChecks.placeholder(in: text, source: question + "\n" + shown.map(\.text).joined(separator: "\n")) {
            issues.append(VerificationIssue(.degenerate, "the answer contains a placeholder (\(placeholder))", path: "answer"))
        } else if let first = text.unicodeScalars.first, ",;:)]}".unicodeScalars.contains(first) {
            issues.append(VerificationIssue(.degenerate, "the answer is a fragment (it starts with \"\(first)\")", path: "answer"))
        } else if repeatsQuestion(text, question) {
            issues.append(VerificationIssue(.degenerate, "the answer repeats the question", path: "answer"))
        } else if let copied = shown.first(where: { TextChecks.normalized($0.text) == TextChecks.normalized(text) }),
                  TextChecks.terms(copied.text).isDisjoint(with: TextChecks.terms(question)) {
            issues.append(VerificationIssue(.degenerate, "the answer copies segment \(copied.id), which has nothing in common with the question", path: "answer"))
        }
        // "Not mentioned" in clean words is an answer: the document does not say.
        if issues.isEmpty, saysNotFound(text) { return Verdict(issues: [], citations: [], saysNotFound: true) }
        if issues.isEmpty, let kind = QuestionKind.expected(question), !QuestionKind.answers(text, kind) {
            issues.append(VerificationIssue(.notAnswered, "the question asks for \(kind.rawValue) and the answer gives none", path: "answer"))
        }
        let invented = Facts.unsupported(in: text, by: shown.map { ($0.speaker ?? "") + " " + $0.text } + [question])
        if !invented.isEmpty {
            issues.append(VerificationIssue(.unsupportedFact, "not in the segments shown: " + invented.map(\.text).joined(separator: ", "), path: "answer"))
        }
        let (citations, repairs) = repairCitations(question: question, answer: text, cited: cited, passages: passages)
        issues += repairs
        return Verdict(issues: issues, citations: citations, saysNotFound: false)
    }

    static func repeatsQuestion(_ answer: String, _ question: String) -> Bool {
        let a = TextChecks.normalized(answer), q = TextChecks.normalized(question)
        return !a.isEmpty && (q.contains(a) || TextChecks.jaccard(answer, question) >= 0.8 && TextChecks.wordCount(answer) <= TextChecks.wordCount(question) + 2)
    }

    /// Segments ranked by how well they support the answer and the question together.
    public static func support(question: String, answer: String, passages p: Passages) -> [(id: Int, score: Double)] {
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

    static func repairCitations(question: String, answer: String, cited: [Int], passages: Passages) -> ([Int], [VerificationIssue]) {
        let shown = passages.segments
        let questionTerms = TextChecks.terms(question)
        let answerTerms = TextChecks.terms(answer)
        let byQuestion = relevant(question: question, passages: passages).map(\.id)
        let byAnswer = support(question: question, answer: answer, passages: passages)
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
        var issues: [VerificationIssue] = []
        if !dropped.isEmpty {
            issues.append(VerificationIssue(.unsupportedCitation, "cited segment\(dropped.count == 1 ? "" : "s") \(dropped.map(String.init).joined(separator: ", ")) share\(dropped.count == 1 ? "s" : "") little with the question and the answer: removed",
                                            path: "citations", repaired: true))
        }
        // Retrieval's best segments for the question lead; the segment that best supports
        // the answer and the question follows when it shares a word with the question.
        var leading = Array(byQuestion.prefix(2))
        if let best = byAnswer.first?.id, !leading.contains(best), let seg = shown.first(where: { $0.id == best }),
           !TextChecks.terms(seg.text).isDisjoint(with: questionTerms) {
            leading.append(best)
        }
        var added: [Int] = []
        for id in leading.reversed() where !kept.contains(id) {
            kept.insert(id, at: 0)
            added.append(id)
        }
        let final = Array(kept.prefix(3))
        let addedKept = added.filter(final.contains).sorted()
        if !addedKept.isEmpty {
            issues.append(VerificationIssue(.unsupportedCitation, "segment\(addedKept.count == 1 ? "" : "s") \(addedKept.map(String.init).joined(separator: ", ")) best match\(addedKept.count == 1 ? "es" : "") the question and \(addedKept.count == 1 ? "was" : "were") not cited: added",
                                            path: "citations", repaired: true))
        }
        return (final.sorted(), issues)
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
        "no se menciona", "no se encuentra", "no se dice", "no aparece", "n'est pas mentionn", "introuvable", "ne précise pas", "ne dit pas",
        "nicht erwähnt", "nicht im dokument",
    ]
}

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

    public static func check(question: String, answer: String, cited: [Int], shown: [Segment], instructions: [String]) -> Verdict {
        var issues: [VerificationIssue] = []
        let text = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        if saysNotFound(text) { return Verdict(issues: [], citations: [], saysNotFound: true) }
        // A one-word answer is fine when it is a word of the segments (a name for "who…?").
        let oneWord = WordDiff.tokens(text).filter(\.isWord)
        let wordFromSegments = oneWord.count == 1 && oneWord[0].text.count >= 2
            && shown.contains { s in WordDiff.tokens(s.text).contains { $0.text.lowercased() == oneWord[0].text.lowercased() } }
        if !wordFromSegments, !TextChecks.isLanguage(text) {
            issues.append(VerificationIssue(.degenerate, "the answer is not language: \"\(RewriteVerifier.clip(text))\"", path: "answer"))
        } else if let echo = TextChecks.echo(in: text, instructions: instructions, source: question + "\n" + shown.map(\.text).joined(separator: "\n")) {
            issues.append(VerificationIssue(.degenerate, "the answer repeats the prompt's instructions (\"\(RewriteVerifier.clip(echo))\")", path: "answer"))
        } else if let copied = shown.first(where: { TextChecks.normalized($0.text) == TextChecks.normalized(text) }),
                  TextChecks.terms(copied.text).isDisjoint(with: TextChecks.terms(question)) {
            issues.append(VerificationIssue(.degenerate, "the answer copies segment \(copied.id), which has nothing in common with the question", path: "answer"))
        }
        let invented = Facts.unsupported(in: text, by: shown.map { ($0.speaker ?? "") + " " + $0.text } + [question])
        if !invented.isEmpty {
            issues.append(VerificationIssue(.unsupportedFact, "not in the segments shown: " + invented.map(\.text).joined(separator: ", "), path: "answer"))
        }
        let (citations, repairs) = repairCitations(question: question, answer: text, cited: cited, shown: shown)
        issues += repairs
        return Verdict(issues: issues, citations: citations, saysNotFound: false)
    }

    /// Segments ranked by how well they support the answer and the question together.
    public static func support(question: String, answer: String, shown: [Segment]) -> [(id: Int, score: Double)] {
        let index = BM25Index(documents: shown.map { ($0.speaker.map { $0 + " " } ?? "") + $0.text })
        // The answer counts twice: a citation supports what was said, not only what was asked.
        return index.search(answer + " " + answer + " " + question, limit: shown.count).map { (shown[$0.index].id, $0.score) }
    }

    /// Segments ranked by the question alone (what retrieval answers).
    public static func relevance(question: String, shown: [Segment]) -> [(id: Int, score: Double)] {
        let index = BM25Index(documents: shown.map { ($0.speaker.map { $0 + " " } ?? "") + $0.text })
        return index.search(question, limit: shown.count).map { (shown[$0.index].id, $0.score) }
    }

    static func repairCitations(question: String, answer: String, cited: [Int], shown: [Segment]) -> ([Int], [VerificationIssue]) {
        let ranked = support(question: question, answer: answer, shown: shown)
        let score = Dictionary(ranked.map { ($0.id, $0.score) }, uniquingKeysWith: max)
        let best = ranked.first
        // The segment the question points at is cited whatever the model picked: a small
        // model's own pick is often the first line; retrieval's is usually the answer's.
        let byQuestion = relevance(question: question, shown: shown)
        let answerTerms = TextChecks.terms(answer), questionTerms = TextChecks.terms(question)
        var kept: [Int] = []
        var dropped: [Int] = []
        for id in cited where !kept.contains(id) {
            guard let seg = shown.first(where: { $0.id == id }) else { dropped.append(id); continue }
            let terms = TextChecks.terms(seg.text + " " + (seg.speaker ?? ""))
            let shared = terms.intersection(answerTerms.union(questionTerms)).count
            let strongEnough = (score[id] ?? 0) >= 0.5 * (best?.score ?? 0)
            if shared >= 1, strongEnough { kept.append(id) } else { dropped.append(id) }
        }
        var issues: [VerificationIssue] = []
        if !dropped.isEmpty {
            issues.append(VerificationIssue(.unsupportedCitation, "cited segment\(dropped.count == 1 ? "" : "s") \(dropped.map(String.init).joined(separator: ", ")) share\(dropped.count == 1 ? "s" : "") little with the answer or the question: removed",
                                            path: "citations", repaired: true))
        }
        var added: [Int] = []
        var leading: [Int] = []
        if let top = byQuestion.first {
            leading.append(top.id)
            if byQuestion.count > 1, byQuestion[1].score >= 0.8 * top.score { leading.append(byQuestion[1].id) }
        }
        if let best, !leading.contains(best.id), best.score >= 0.5 * (score[leading.first ?? -1] ?? 0) { leading.append(best.id) }
        for id in leading.reversed() where !kept.contains(id) {
            kept.insert(id, at: 0)
            added.append(id)
        }
        let final = Array(kept.prefix(3))
        let addedKept = added.filter(final.contains).sorted()
        if !addedKept.isEmpty {
            issues.append(VerificationIssue(.unsupportedCitation, "segment\(addedKept.count == 1 ? "" : "s") \(addedKept.map(String.init).joined(separator: ", ")) best match\(addedKept.count == 1 ? "es" : "") the question and answer and \(addedKept.count == 1 ? "was" : "were") not cited: added",
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

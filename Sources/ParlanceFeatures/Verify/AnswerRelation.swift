import Foundation
import ParlanceDocuments

/// Is the answer's value said of what the question asks about? A small model answers with a
/// figure or a name from the passage it was shown, often the one beside the subject rather
/// than of it: "10 pounds" for the early termination fee, where the transcript says "a
/// goodwill credit of 10 pounds for the connection problems". Each of the answer's own facts
/// (numbers and names the question does not give) is looked up in the segments shown; when
/// every sentence that says any of them names nothing of the question's focus, in its words,
/// its speaker's name or the question it replies to, the answer gives the value of something else.
///
/// Answerability read a looser measure as a feature (the focus share beside the answer's
/// figure, with any sentence before) and cross-validated worse: it is low as often for an
/// answerable question the model answered wrongly as for an unanswerable one. It says the
/// *answer* is wrong, not that the document has none, so it fails the attempt: the next
/// attempt, and then the passage quoted.
extension AnswerVerifier {
    /// The answer's facts, when every one the segments say is said only beside none of the
    /// question's focus; empty when one of them stands beside it, when the question has no
    /// focus, or when the segments say none of them (`factsNotInSegments` reads that).
    static func saidOfOther(question: String, answer: String, segments: [Segment], language: String) -> [String] {
        let focus = Answerability.focusTerms(question)
        guard !focus.isEmpty else { return [] }
        let asked = Set(Facts.extract(question).map(\.key))
        let facts = Facts.extract(withoutReferences(answer)).filter { !asked.contains($0.key) && !Facts.notNames.contains($0.key) }
        let forms = FocusForms(language: language)
        // A number word of the focus is itself only: "eighteen" is not a form of "eight".
        let numbers = focus.filter { Facts.numberWords[$0] != nil }, words = focus.subtracting(numbers)
        let sentences = statements(segments)
        var other: [String] = []
        for fact in facts {
            let saying = sentences.filter { says($0, fact) }
            guard !saying.isEmpty else { continue }
            if saying.contains(where: { !$0.terms.isDisjoint(with: numbers) || forms.share(of: words, in: $0.terms) > 0 }) { return [] }
            other.append(fact.text)
        }
        return other
    }

    /// A sentence of the segments shown, its speaker, and its terms: its own, its speaker's and
    /// those of the question it replies to (the sentence before, when that asks).
    struct Statement {
        let sentence: String
        let speaker: String?
        let terms: Set<String>
    }

    /// A caption cue that ends mid-sentence goes on in the next cue of the same speaker: they
    /// are read as one text ("It came about because Pareto noticed" / "that 80% of land in
    /// Italy" / "was owned by 20% of the population."). Read cue by cue, the 80% was "said of
    /// something else", and the 0.5B model's right answer about Pareto failed (issue 77).
    static func statements(_ segments: [Segment]) -> [Statement] {
        var out: [Statement] = []
        var before = ""
        var previousId = Int.min
        for segment in joinedCues(segments) {
            if segment.id != previousId + 1 { before = "" }
            previousId = segment.lastId
            for sentence in Sentences.split(segment.text) {
                let asked = before.trimmingCharacters(in: .whitespaces).hasSuffix("?") ? before : ""
                out.append(Statement(sentence: sentence, speaker: segment.speaker,
                                     terms: Set(Lexicon.words(asked + " " + sentence + " " + (segment.speaker ?? ""), .terms))))
                before = sentence
            }
        }
        return out
    }

    /// Consecutive segments of one speaker joined while the text so far ends mid-sentence (no
    /// full stop, question or exclamation mark): each with its first id and its last.
    static func joinedCues(_ segments: [Segment]) -> [(id: Int, lastId: Int, speaker: String?, text: String)] {
        var out: [(id: Int, lastId: Int, speaker: String?, text: String)] = []
        for s in segments {
            if let last = out.last, last.lastId + 1 == s.id, last.speaker == s.speaker,
               let end = last.text.trimmingCharacters(in: .whitespaces).last, !".!?\u{2026}\u{3002}".contains(end) {
                out[out.count - 1] = (last.id, s.id, last.speaker, last.text + " " + s.text)
            } else {
                out.append((s.id, s.id, s.speaker, s.text))
            }
        }
        return out
    }

    /// Whether the sentence says the fact: the number's value, or the name in its words or as its speaker.
    static func says(_ s: Statement, _ fact: Facts.Fact) -> Bool {
        switch fact.kind {
        case .number: Facts.numberSpans(s.sentence).contains { $0.key == fact.key }
        case .name: Facts.nameKeys(s.sentence).contains(fact.key) || s.speaker.map(Facts.nameKey) == fact.key
        }
    }
}

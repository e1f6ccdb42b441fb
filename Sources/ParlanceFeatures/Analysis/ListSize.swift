import Foundation
import ParlanceDocuments
import ParlanceJSON

/// How many items a list drawn from a transcript may hold: the usual range, narrowed to the
/// transcript's own number of sentences when it has fewer. A two-sentence note has no third
/// takeaway; under a grammar that asks for three, the model wrote one anyway ("they are for a
/// 3-day trial period"), the check found it unsupported, and two more attempts did the same.
/// The range goes into the schema (so the grammar), the task's words and the list check, so
/// the three agree. A transcript of at least `range.upperBound` sentences keeps the range.
struct ListSize: Equatable, Sendable {
    var range: ClosedRange<Int>
    /// The transcript has fewer sentences than the usual range allows items.
    var narrowed: Bool

    init(_ usual: ClosedRange<Int>, sentences: Int) {
        let upper = max(1, min(usual.upperBound, sentences))
        range = min(usual.lowerBound, upper)...upper
        narrowed = sentences < usual.upperBound
    }

    /// The sentences of the transcript's segments.
    static func sentences(in segments: [Segment]) -> Int {
        segments.reduce(0) { $0 + Sentences.split($1.text).count }
    }

    var minItems: Int { range.lowerBound }

    /// As the task says it: "3-5", or "2".
    var words: String { range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound)-\(range.upperBound)" }

    /// `schema` with this size on the list at `key`.
    func applied(to schema: JSONValue, at key: String) -> JSONValue {
        let s = Grounding.set(schema, at: [key], "minItems", .int(range.lowerBound))
        return Grounding.set(s, at: [key], "maxItems", .int(range.upperBound))
    }

    /// `applied(to:at:)`, and when the transcript is this short (`narrowed`), the list is its
    /// own sentences (`sentenceChoices`), a `const` the grammar writes as it stands. A note of
    /// two sentences has nothing to take away but what it says: asked for takeaways in its own
    /// words, the model wrote one with an invented name and trial ("Thetos are for a 3-day
    /// trial period"), three attempts of three; given the sentences to choose from, it chose
    /// one twice.
    func applied(to schema: JSONValue, at key: String, sentencesOf segments: [Segment], length: ClosedRange<Int>) -> JSONValue {
        let sized = applied(to: schema, at: key)
        guard narrowed else { return sized }
        let choices = Self.sentenceChoices(segments, length: length).prefix(range.upperBound)
        guard choices.count >= range.lowerBound else { return sized }
        return Grounding.set(sized, at: [key], "const", .array(choices.map(JSONValue.string)))
    }

    /// The segments' sentences as list items: trimmed, the first letter capitalised, each once,
    /// those whose length is in `length` (the item's schema bounds).
    static func sentenceChoices(_ segments: [Segment], length: ClosedRange<Int>) -> [String] {
        var seen = Set<String>()
        return segments.flatMap { Sentences.split($0.text) }.compactMap { raw in
            let t = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let first = t.first, length.contains(t.count) else { return nil }
            let item = first.uppercased() + t.dropFirst()
            return seen.insert(item).inserted ? item : nil
        }
    }
}

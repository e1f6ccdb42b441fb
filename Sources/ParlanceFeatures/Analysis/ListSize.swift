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

    init(_ usual: ClosedRange<Int>, sentences: Int) {
        let upper = max(1, min(usual.upperBound, sentences))
        range = min(usual.lowerBound, upper)...upper
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
}

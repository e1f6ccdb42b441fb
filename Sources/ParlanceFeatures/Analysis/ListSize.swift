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
    func applied(to schema: JSONValue, at key: String, sentencesOf segments: [Segment]) -> JSONValue {
        let sized = applied(to: schema, at: key)
        guard narrowed else { return sized }
        let choices = Self.sentenceChoices(segments, length: Self.itemLength(schema, at: key)).prefix(range.upperBound)
        guard choices.count >= range.lowerBound else { return sized }
        return Grounding.set(sized, at: [key], "const", .array(choices.map(JSONValue.string)))
    }

    /// `applied(to:at:)`, and when the transcript is this short (`narrowed`), each item one of
    /// its own phrases (`phraseChoices`), by an `enum` the grammar holds the model to: the
    /// topics of a two-sentence note are in its words, not "Thetos will be available on Monday
    /// at 10am UK time", which the model wrote as its topic three attempts of three.
    func applied(to schema: JSONValue, at key: String, phrasesOf segments: [Segment]) -> JSONValue {
        let sized = applied(to: schema, at: key)
        guard narrowed else { return sized }
        let choices = Self.phraseChoices(segments, length: Self.itemLength(schema, at: key))
        guard choices.count >= range.lowerBound, choices.count <= Self.maxChoices else { return sized }
        return Grounding.set(sized, at: [key, "[]"], "enum", .array(choices.map(JSONValue.string)))
    }

    /// The bounds of a string item of the list at `key` (its schema's minLength, maxLength).
    static func itemLength(_ schema: JSONValue, at key: String) -> ClosedRange<Int> {
        let items = schema["properties"]?[key]?["items"]
        let lo = items?["minLength"]?.intValue ?? 1
        return lo...max(lo, items?["maxLength"]?.intValue ?? .max)
    }

    /// Past this many phrases the list is left to the model (an `enum` that long is a grammar
    /// the sampler checks every candidate token against).
    static let maxChoices = 400

    /// The phrases of the segments' sentences: runs of two to five words inside one clause
    /// (commas, semicolons and colons end a clause, so a speaker label is never in one), that
    /// neither start nor end with a stopword (a capitalised word inside a clause is a name:
    /// "May"), as written but for a capital first letter; each once, those whose length is in
    /// `length`.
    static func phraseChoices(_ segments: [Segment], length: ClosedRange<Int>, words: ClosedRange<Int> = 2...5) -> [String] {
        var seen = Set<String>(), out: [String] = []
        let clauses = segments.flatMap { Sentences.split($0.text) }.flatMap { $0.split(whereSeparator: { ",;:".contains($0) }) }
        for clause in clauses {
            let ws = clause.split(separator: " ").map { $0.trimmingCharacters(in: .punctuationCharacters.union(.symbols)) }.filter { !$0.isEmpty }
            // A clause's first word is capitalised as a sentence's first word is, after a
            // speaker's label too ("Bob: Then marketing…"): a stopword there is a stopword.
            let stop = ws.indices.map { i in
                Lexicon.stopwords.contains(ws[i].lowercased()) && (ws[i].first?.isLowercase == true || i == 0)
            }
            for i in ws.indices where !stop[i] {
                for n in words where i + n <= ws.count && !stop[i + n - 1] {
                    let run = ws[i..<(i + n)].joined(separator: " ")
                    let item = run.prefix(1).uppercased() + run.dropFirst()
                    if length.contains(item.count), seen.insert(item.lowercased()).inserted { out.append(item) }
                }
            }
        }
        return out
    }

    /// The segments' sentences as list items: trimmed, without a speaker's label ("Bob: "), the
    /// first letter capitalised, each once, those whose length is in `length` (the item's
    /// schema bounds).
    static func sentenceChoices(_ segments: [Segment], length: ClosedRange<Int>) -> [String] {
        var seen = Set<String>()
        return segments.flatMap { Sentences.split($0.text) }.compactMap { raw in
            let t = Sentences.withoutSpeakerLabel(raw).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let first = t.first, length.contains(t.count) else { return nil }
            let item = first.uppercased() + t.dropFirst()
            return seen.insert(item).inserted ? item : nil
        }
    }
}

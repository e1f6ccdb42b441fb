import Foundation
import ParlanceDocuments
import ParlanceJSON
import ParlanceProtocol
import Synchronization

/// Fields that point into the transcript are grounded by construction: the grammar lets
/// the model write only ids of segments it was shown, and times, speakers and quoted text
/// are then copied from those segments. Names the model writes are checked against the
/// text (`TextMatch`) and dropped, visibly, when they do not occur.
enum Grounding {
    /// `schema` with `keyword: value` set on the subschema at `path`: property names, and
    /// `[]` to step into an array's `items`.
    static func set(_ schema: JSONValue, at path: [String], _ keyword: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var o) = schema else { return schema }
        guard let head = path.first else {
            o[keyword] = value
            return .object(o)
        }
        let rest = Array(path.dropFirst())
        if head == "[]" {
            if let items = o["items"] { o["items"] = set(items, at: rest, keyword, value) }
        } else if case .object(var props)? = o["properties"], let sub = props[head] {
            props[head] = set(sub, at: rest, keyword, value)
            o["properties"] = .object(props)
        }
        return .object(o)
    }

    /// The ids of `segments`, for an integer `enum`.
    static func ids(_ segments: some Sequence<Segment>) -> JSONValue {
        .array(segments.map { .int($0.id) })
    }

    static func ref(_ s: Segment) -> JSONValue {
        var o = JSONObject()
        o["segmentId"] = .int(s.id)
        if let t = s.start { o["start"] = .double(t) }
        if let t = s.end { o["end"] = .double(t) }
        if let n = s.sourceStart { o["startOffset"] = .int(n) }
        if let n = s.sourceEnd { o["endOffset"] = .int(n) }
        return .object(o)
    }

    /// `ref` plus the segment's speaker and verbatim text: a citation, or a key moment
    /// before its title.
    static func cited(_ s: Segment) -> JSONObject {
        var o = ref(s).objectValue!
        if let sp = s.speaker { o["speaker"] = .string(sp) }
        o["text"] = .string(s.text)
        return o
    }

    /// A segment as `ask/stream` cites it.
    static func citation(_ s: Segment) -> AskStream.Citation {
        AskStream.Citation(segmentId: s.id, start: s.start, end: s.end, speaker: s.speaker, text: s.text, startOffset: s.sourceStart, endOffset: s.sourceEnd)
    }

    /// A quotation starting at segment `id`: that segment, continued through following
    /// segments of the same speaker until the text ends a sentence (at most 3 segments).
    /// The text is the segments' own text, so it occurs verbatim in the transcript.
    static func quote(from id: Int, in input: AnalysisInput) -> JSONValue? {
        guard let first = input.segment(id) else { return nil }
        var parts = [first]
        while parts.count < 3, !endsSentence(parts.last!.text), let next = input.segment(parts.last!.id + 1),
              next.speaker == first.speaker {
            parts.append(next)
        }
        var o = JSONObject()
        o["text"] = .string(parts.map(\.text).joined(separator: " "))
        if let sp = first.speaker { o["speaker"] = .string(sp) }
        o["segmentIds"] = .array(parts.map { .int($0.id) })
        if let t = first.start { o["start"] = .double(t) }
        if let t = parts.last?.end { o["end"] = .double(t) }
        if let n = first.sourceStart { o["startOffset"] = .int(n) }
        if let n = parts.last?.sourceEnd { o["endOffset"] = .int(n) }
        return .object(o)
    }

    static func endsSentence(_ text: String) -> Bool {
        var t = Substring(text)
        while let c = t.last, "\"'”’)»".contains(c) { t = t.dropLast() }
        guard let last = t.last else { return true }
        return ".!?…。！？".contains(last)
    }

    /// `MM:SS-MM:SS` for a span of segments; nil without times.
    static func span(_ segments: [Segment]) -> String? {
        guard let s = segments.compactMap(\.start).min(), let e = segments.compactMap(\.end).max() else { return nil }
        return Chunker.timestamp(s) + "-" + Chunker.timestamp(e)
    }

    /// Names that occur in the transcript, each with its occurrences; the rest separately.
    static func verifyNames(_ names: [String], in segments: [Segment]) -> (found: [(String, [Int])], missing: [String]) {
        var found: [(String, [Int])] = []
        var missing: [String] = []
        var seen = Set<String>()
        for raw in names {
            let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            let key = TextMatch.normalize(name)
            guard !key.isEmpty, seen.insert(key).inserted else { continue }
            let ids = TextMatch.occurrences(of: name, in: segments)
            if ids.isEmpty { missing.append(name) } else { found.append((name, ids)) }
        }
        return (found, missing)
    }
}

// MARK: - Progress

extension ProgressReporter {
    /// Reports from a model call, with percentages mapped into `range`: prompt evaluation
    /// fills the first half, generation (by characters, against `expectedChars`) the rest.
    /// Percentages never go backwards (a retry does not restart the bar).
    func scaled(_ range: ClosedRange<Int>, expectedChars: Int = 600) -> ProgressReporter {
        guard isActive else { return self }
        let state = Locked((chars: 0, last: range.lowerBound))
        let outer = self
        return ProgressReporter(token: token) { v in
            guard case .object(var params) = v, case .object(var value)? = params["value"] else { return outer.send(v) }
            let span = Double(range.upperBound - range.lowerBound)
            let delta = value["delta"]?.stringValue
            let total = value["promptTokens"]?.intValue ?? 0
            let done = value["evaluatedTokens"]?.intValue
            let pct: Int? = state.withLock { st in
                var fraction: Double? = nil
                if total > 0, let done {
                    fraction = 0.5 * Double(done) / Double(total)
                } else if let d = delta {
                    st.chars += d.count
                    fraction = 0.5 + 0.5 * min(1, Double(st.chars) / Double(max(1, expectedChars)))
                }
                guard let f = fraction else { return nil }
                st.last = max(st.last, range.lowerBound + Int(span * f))
                return st.last
            }
            if let pct, value["percentage"] == nil {
                value["percentage"] = .int(pct)
                params["value"] = .object(value)
            }
            outer.send(.object(params))
        }
    }

    /// Reports of a sub-step (e.g. one document's summary), percentages mapped into
    /// `range` and labelled with `part`.
    func remapped(_ range: ClosedRange<Int>, part: String) -> ProgressReporter {
        guard isActive else { return self }
        let outer = self
        return ProgressReporter(token: token) { v in
            guard case .object(var params) = v, case .object(var value)? = params["value"] else { return outer.send(v) }
            if let p = value["percentage"]?.intValue {
                value["percentage"] = .int(range.lowerBound + (range.upperBound - range.lowerBound) * max(0, min(100, p)) / 100)
            }
            if value["part"] == nil { value["part"] = .string(part) }
            params["value"] = .object(value)
            outer.send(.object(params))
        }
    }

    /// Sends a plain report (message and percentage) with an optional part label.
    func report(_ message: String, _ percentage: Int, phase: ParlanceProtocol.Progress.Phase? = nil, part: String? = nil) {
        self(.init(kind: .report, message: message, percentage: max(0, min(100, percentage)), phase: phase, part: part))
    }
}

/// A value shared between concurrent closures.
final class Locked<Value: Sendable>: Sendable {
    private let m: Mutex<Value>  // guards the value
    init(_ v: Value) { m = Mutex(v) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { m.withLock { body(&$0) } }
    var value: Value { m.withLock { $0 } }
}

import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// `analysis/highlights`: the model titles key moments and picks quotes by segment id, the
/// grammar admitting only ids of segments it was shown; times, speakers and quoted text
/// come from those segments, so every moment and quote is a real, verbatim place.
public enum Highlights {
    struct Draft: Codable, Sendable, Schematic {
        var keyMoments: [Moment]
        var quotes: [QuotePick]
        var actionItems: [String]
        static let schemaHints: [String: SchemaHint] = [
            "keyMoments": SchemaHint(minItems: 1, maxItems: 5),
            "quotes": SchemaHint(maxItems: 3),
            "actionItems": SchemaHint(maxItems: 4, minLength: 5, maxLength: 150),
        ]
    }

    struct Moment: Codable, Sendable, Schematic {
        var title: String
        var segmentId: Int
        static let schemaHints: [String: SchemaHint] = ["title": SchemaHint(minLength: 5, maxLength: 80)]
    }

    struct QuotePick: Codable, Sendable, Schematic {
        var segmentId: Int
    }

    static let maxTokens = 450
    static let task = """
        Pick the key moments of this transcript: for each, a short title and the [id] of the line where it happens. \
        Pick 1-3 memorable quotes by the [id] of the line. List actionItems: concrete things a listener could do \
        after listening ([] if none).
        """

    /// The draft schema with segment ids limited to those of `segments`.
    static func schema(ids segments: [Segment]) -> JSONValue {
        var s = SchemaDeriver.schema(for: Draft.self)
        let ids = Grounding.ids(segments)
        s = Grounding.set(s, at: ["keyMoments", "[]", "segmentId"], "enum", ids)
        s = Grounding.set(s, at: ["quotes", "[]", "segmentId"], "enum", ids)
        return s
    }

    public static func highlights(_ p: AnalysisParams, _ ctx: RequestContext) async throws -> AnalyzeHighlights.Result {
        try await AnalysisJob.run(AnalyzeHighlights.self, p, maxTokens: maxTokens, ctx: ctx) { job in
            let input = job.input
            // Long transcripts: the moments, quote and action items in every part's notes, merged.
            let (drafts, chunks, usage) = try await job.drafts(output: maxTokens, whole: {
                try await job.generate(body: input.promptText, condensed: false, task: task, schema: schema(ids: input.transcript.segments),
                                       maxTokens: maxTokens, range: 5...99, expectedChars: 400)
            }, fromNotes: { n in ["keyMoments": n["moments"] ?? [], "quotes": n["quote"] ?? [], "actionItems": n["actionItems"] ?? []] })
            let (content, verification) = verify(merge(drafts, input: input), names: job.names, repair: job.attempts.verify,
                                                 instructions: job.userInstructions, transcript: input.promptText)
            return AnalysisOutput(content: content, chunks: chunks, usage: usage, verification: verification)
        }
    }

    /// Drafts → the result: moments and quotes resolved to their segments (one per segment,
    /// in transcript order, evenly thinned to 10 moments and 6 quotes), action items
    /// de-duplicated (at most 8).
    static func merge(_ drafts: [JSONValue], input: AnalysisInput) -> JSONObject {
        var moments: [(Int, JSONValue)] = []
        var quotes: [(Int, JSONValue)] = []
        var usedMoments = Set<Int>()
        var quoted = Set<Int>()
        var actions: [String] = []
        for d in drafts {
            for m in d["keyMoments"]?.arrayValue ?? [] {
                guard let id = m["segmentId"]?.intValue, let seg = input.segment(id), usedMoments.insert(id).inserted else { continue }
                var o = Grounding.cited(seg)
                o["title"] = .string((m["title"]?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines))
                moments.append((id, .object(o)))
            }
            for q in d["quotes"]?.arrayValue ?? [] {
                guard let id = q["segmentId"]?.intValue, !quoted.contains(id), let v = Grounding.quote(from: id, in: input) else { continue }
                for i in v["segmentIds"]?.arrayValue ?? [] { if let i = i.intValue { quoted.insert(i) } }
                quotes.append((id, v))
            }
            actions += d["actionItems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }
        var o = JSONObject()
        o["keyMoments"] = .array(thin(moments.sorted { $0.0 < $1.0 }.map(\.1), to: 10))
        o["quotes"] = .array(thin(quotes.sorted { $0.0 < $1.0 }.map(\.1), to: 6))
        o["actionItems"] = .array(Analyses.dedupe(actions).prefix(8).map { .string($0) })
        return o
    }

    /// Action items that are names or labels and moments whose titles repeat an earlier
    /// one are dropped (moments and quotes are grounded by construction: the grammar
    /// admits only ids of real segments); with the user's `instructions`, so are action
    /// items and titles that only repeat them (`transcript`: what they may repeat).
    static func verify(_ merged: JSONObject, names: Set<String>, repair: Bool, instructions: [String] = [],
                       transcript: String = "") -> (JSONObject, Verification) {
        // verify: false: what the checks find is proposed, not done.
        let mode: VerifyMode = repair ? .repair : .propose
        var o = merged
        let actions = ListItemRules.repair(o["actionItems"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                                           field: .init("actionItems", .sentence, minItems: 0),
                                           labels: ["keyMoments", "quotes", "actionItems", "title", "segmentId"], names: names,
                                           instructions: instructions, echoSource: transcript, mode: mode)
        if repair { o["actionItems"] = .array(actions.value.map { .string($0) }) }
        var all = actions.findings
        var titles: [String] = []
        var moments: [JSONValue] = []
        for (i, m) in (o["keyMoments"]?.arrayValue ?? []).enumerated() {
            let title = m["title"]?.stringValue ?? ""
            let echo = TextChecks.echo(in: title, instructions: instructions, source: transcript).map { _ in VerificationIssueCode.instructionEcho }
            if let code = echo ?? (moments.count >= 1 ? ListItemRules.problem(title, kind: .phrase, before: titles, labels: ["keyMoments", "title"], names: []) : nil) {
                all.append(Finding(code, .keyMoment(title), path: "keyMoments[\(i)]").acted(.removed, mode))
                continue
            }
            titles.append(title)
            moments.append(m)
        }
        if repair { o["keyMoments"] = .array(moments) }
        return (o, Verification(checked: all))
    }

    /// At most `n` items, evenly spread over the list.
    static func thin<T>(_ items: [T], to n: Int) -> [T] {
        guard items.count > n, n > 0 else { return items }
        return (0..<n).map { items[$0 * items.count / n] }
    }
}

import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceHash
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// A part of a transcript the model reads on its own: consecutive whole segments (or a
/// piece of one over-long segment), rendered with segment ids, hashed for the per-part
/// caches.
struct Piece: Sendable {
    var index: Int
    var segments: [Segment]
    var text: String
    var hash: String
    var start: Double?
    var end: Double?

    var label: String {
        let span = Grounding.span(segments).map { " (\($0))" } ?? ""
        return "Part \(index + 1)\(span)"
    }
}

/// Long transcripts: split into parts on segment boundaries, each within a token budget,
/// mapped with bounded concurrency, and condensed into part summaries that are cached by
/// the part's content hash.
enum Condense {
    /// Tokens per part: the seed's condensed-summary input budget (2,000 at a 4,096 context),
    /// capped so that one part, the prompt around it and its notes fit the context. Parts are
    /// not shrunk so that two batch: on a CPU two sequences of a small model at once took
    /// longer than one after the other, and every extra part costs a whole set of notes.
    static func budget(_ engine: any LanguageModel) -> Int {
        let ctx = engine.contextSize
        return max(256, min(TokenBudget.condensedSummary.scaled(toContext: ctx).input, ctx - 556 - notesTokens))
    }

    /// How many parts run at once: as many as fit the context beside each other.
    static func concurrency(_ engine: any LanguageModel, promptTokens: Int, output: Int) -> Int {
        max(1, min(engine.parallel, (engine.contextSize - 128) / max(1, promptTokens + output + 200)))
    }

    /// Splits on content-defined boundaries: a part ends at the first segment whose text
    /// hashes to a boundary once the part holds 70% of the budget, or where the next
    /// segment would overflow it. An edit therefore changes only the part it falls in (and
    /// rarely the next one): every other part keeps its text and its cached results.
    static func pieces(_ segments: [Segment], budget: Int, tokenCount: (String) -> Int) -> [Piece] {
        let costs = segments.map { tokenCount(AnalysisInput.render([$0])) + 1 }
        let minFill = budget * 7 / 10
        var out: [Piece] = []
        var i = 0
        while i < segments.count {
            if costs[i] > budget {
                let s = segments[i]
                for c in Chunker.chunk([s], budget: max(16, budget - 16), tokenCount: tokenCount) {
                    var part = s
                    part.text = c.text
                    out.append(make(out.count, [part]))
                }
                i += 1
                continue
            }
            var j = i
            var sum = 0
            while j < segments.count, sum + costs[j] <= budget {
                sum += costs[j]
                j += 1
                if sum >= minFill, isBoundary(segments[j - 1].text) { break }
            }
            out.append(make(out.count, Array(segments[i..<j])))
            i = j
        }
        return out
    }

    static func pieces(_ input: AnalysisInput, engine: any LanguageModel) -> [Piece] {
        pieces(input.transcript.segments, budget: budget(engine), tokenCount: engine.countTokens)
    }

    private static func make(_ index: Int, _ segs: [Segment]) -> Piece {
        let text = AnalysisInput.render(segs)
        return Piece(index: index, segments: segs, text: text, hash: SHA256.hex(text),
                     start: segs.compactMap(\.start).min(), end: segs.compactMap(\.end).max())
    }

    /// FNV-1a of the text: one segment in six is a boundary, the same on every run.
    static func isBoundary(_ text: String) -> Bool {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h % 6 == 0
    }

    /// Runs `body` over the parts, at most `concurrency` at once, results in part order.
    /// `done(k)` is called as each finishes; cancellation stops between and within parts.
    static func map<T: Sendable>(_ pieces: [Piece], concurrency: Int, done: @escaping @Sendable (_ finished: Int, _ piece: Piece) -> Void,
                                 _ body: @escaping @Sendable (Piece) async throws -> T) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var results = [T?](repeating: nil, count: pieces.count)
            var next = 0
            var finished = 0
            func launch() {
                let p = pieces[next]
                group.addTask { (p.index, try await body(p)) }
                next += 1
            }
            while next < min(concurrency, pieces.count) { launch() }
            while let (i, r) = try await group.next() {
                results[i] = r
                finished += 1
                done(finished, pieces[i])
                try Task.checkCancellation()
                if next < pieces.count { launch() }
            }
            return results.map { $0! }
        }
    }

    /// Per-part notes: one schema-guided call per part gives its summary, the names it
    /// mentions, up to two key moments and a quote (segment ids limited to the part) and
    /// action items. Cached by the part's content hash (and language, model, sampling), so a
    /// long transcript is read once for every analysis, and after document/change only the
    /// parts that changed are read again.
    /// The user's `instructions` go into each part's task line (after the part's text) and
    /// its cache key: a focused analysis reads the parts with its focus, and notes made
    /// without instructions stay shared by every unfocused analysis.
    static func notes(_ pieces: [Piece], input: AnalysisInput, engine: any LanguageModel, options: ResolvedOptions, ctx: RequestContext,
                      range: ClosedRange<Int>, instructions: String?) async throws -> (notes: [JSONValue], usage: Usage, reused: Int) {
        let n = pieces.count
        let usage = Locked(Usage.zero)
        let reused = Locked(0)
        let width = range.upperBound - range.lowerBound
        let par = concurrency(engine, promptTokens: budget(engine) + 200, output: notesTokens)
        let notes = try await map(pieces, concurrency: par, done: { k, piece in
            ctx.progress.report("read part \(k) of \(n)", range.lowerBound + width * k / max(1, n), phase: .map, part: "chunk-\(piece.index)")
        }) { p in
            var settings: JSONObject = ["seed": .int(Int(options.seed)), "temperature": .double(options.sampling.temperature)]
            for (k, v) in options.chosenSampling { settings[k] = v }
            if let instructions { settings["instructions"] = .string(instructions) }
            let key = AnalysisCache.Key(method: "part-notes", content: p.hash, settings: settings, language: input.language.language,
                                        model: engine.identity, documents: [input.contentHash], uri: input.uri, modelName: engine.name)
            if !options.refresh, let hit: JSONValue = await ctx.services.analysisCache.get(key) {
                reused.withLock { $0 += 1 }
                return hit
            }
            let task = """
                This is \(p.label) of \(n) of a longer transcript. Give summary (2-4 sentences on this part, keeping names, \
                numbers and decisions), entities (names mentioned, copied exactly: people, organizations, products, locations, \
                resources), moments (up to 2 key moments: a short title and the [id] of the line), quote (the [id] of the \
                most memorable line) and actionItems (things a listener could do, or []).
                """
            var o = options
            o.maxTokens = notesTokens
            let prompt = engine.render(AnalysisPrompt.messages(input, body: p.text, task: task, instructions: instructions))
            let out = try await Generation.run(engine, prompt: prompt, schema: fittedNotesSchema(p.segments), options: o,
                                               cachePriority: .normal, progress: .none, part: "chunk-\(p.index)")
            usage.withLock { $0 = $0 + out.usage }
            let v = out.json ?? [:]
            await ctx.services.analysisCache.put(key, v)
            return v
        }
        return (notes, usage.value, reused.value)
    }

    static let notesTokens = 420

    struct Notes: Codable, Sendable, Schematic {
        var summary: String
        var entities: Entities.Draft
        var moments: [Highlights.Moment]
        var quote: [Highlights.QuotePick]
        var actionItems: [String]
        static let schemaHints: [String: SchemaHint] = [
            "summary": SchemaHint(minLength: 20, maxLength: 500),
            "moments": SchemaHint(maxItems: 2),
            "quote": SchemaHint(maxItems: 1),
            "actionItems": SchemaHint(maxItems: 2, minLength: 5, maxLength: 120),
        ]
    }

    /// The notes' schema shrunk so that every text its grammar admits fits `notesTokens` (at
    /// 2.5 characters a token): the model fills every field to its limit, and a part whose
    /// notes ran out of tokens was generated twice, the second time under this schema.
    static func fittedNotesSchema(_ segments: [Segment]) -> JSONValue {
        SchemaBudget.fitting(notesSchema(segments), chars: notesTokens * 5 / 2)
    }

    static func notesSchema(_ segments: [Segment]) -> JSONValue {
        var s = SchemaDeriver.schema(for: Notes.self)
        let ids = Grounding.ids(segments)
        s = Grounding.set(s, at: ["moments", "[]", "segmentId"], "enum", ids)
        s = Grounding.set(s, at: ["quote", "[]", "segmentId"], "enum", ids)
        for kind in Entities.kinds { s = Grounding.set(s, at: ["entities", kind], "maxItems", 3) }
        return s
    }

    /// The transcript condensed to fit `budget` tokens: part summaries, labelled with their
    /// time ranges, summarized again while they are still too long (at most 4 rounds).
    static func condensed(_ input: AnalysisInput, engine: any LanguageModel, options: ResolvedOptions, ctx: RequestContext, budget: Int,
                          range: ClosedRange<Int>, instructions: String?) async throws -> (body: String, chunks: Int, usage: Usage) {
        var segments = input.transcript.segments
        var usage = Usage.zero
        var total = 0
        for round in 0..<4 {
            try Task.checkCancellation()
            let parts = pieces(segments, budget: Condense.budget(engine), tokenCount: engine.countTokens)
            total += parts.count
            let (notes, u, _) = try await notes(parts, input: input, engine: engine, options: options, ctx: ctx, range: range,
                                                instructions: instructions)
            let texts = notes.map { $0["summary"]?.stringValue ?? "" }
            usage = usage + u
            let joined = zip(parts, texts).map { "\($0.label): \($1)" }.joined(separator: "\n")
            if engine.countTokens(joined) <= budget || round == 3 { return (joined, total, usage) }
            // Round two and later: the summaries become the segments, keeping their times.
            segments = zip(parts, texts).enumerated().map { i, pt in
                Segment(id: i + 1, start: pt.0.start, end: pt.0.end, speaker: nil, text: pt.1)
            }
        }
        preconditionFailure("unreachable")
    }
}

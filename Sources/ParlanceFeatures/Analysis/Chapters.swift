import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// `analysis/chapters`: titled chapters covering the whole document in order.
///
/// A transcript that fits the context is read in one schema-guided call that picks each
/// chapter's first segment by id (the grammar admits only the transcript's ids, as for
/// highlights) and titles it. That call extends the transcript prefix every other analysis
/// of the document has evaluated, and a chapter may begin at any segment where the subject
/// changes. Splitting it into parts as `Condense` does would put the boundaries where a
/// token budget falls, not where the talk turns, and a short transcript is one part.
///
/// A longer transcript gets a chapter per part, titled from the parts' notes (the notes
/// `analysis/summarize` reads, cached per part): after a summary, its chapters cost only
/// the titles.
public enum Chapters {
    struct Pick: Codable, Sendable, Schematic {
        var startSegmentId: Int
        var title: String
        static let schemaHints: [String: SchemaHint] = ["title": SchemaHint(minLength: 3, maxLength: ChapterRules.maxCharacters)]
    }

    struct Titles: Codable, Sendable, Schematic {
        var titles: [String]
        static let schemaHints: [String: SchemaHint] = ["titles": SchemaHint(minLength: 3, maxLength: ChapterRules.maxCharacters)]
    }

    static let maxTokens = 400
    /// Tokens per title when titling parts.
    static let tokensPerTitle = 24

    static let titleRule = "2-6 words naming what it is about, not a person's name"

    /// How many chapters a transcript of `tokens` tokens and `segments` segments gets: about
    /// one per 300 tokens (two to three minutes of speech), 2-8, never more than its segments.
    static func count(tokens: Int, segments: Int) -> ClosedRange<Int> {
        let upper = max(1, min(segments, min(8, max(2, tokens / 300))))
        return min(upper, max(1, upper / 3))...upper
    }

    static func task(_ n: Int, firstId: Int) -> String {
        """
        Divide this transcript into \(n) chapters, in order, like a video's chapter list. For each chapter give startSegmentId \
        (the [id] of the line where its subject begins; the first chapter starts at [\(firstId)]) and title (\(titleRule), \
        not a line of the transcript).
        """
    }

    static func titlesTask(_ n: Int) -> String {
        "Give titles: one title for each of the \(n) parts, in order (\(titleRule))."
    }

    /// The line added to the task from the second attempt on.
    static let stricter = "Every title must be different and say what that chapter is about, in at most six words."

    public static func chapters(_ p: AnalysisParams, _ ctx: RequestContext) async throws -> AnalyzeChapters.Result {
        try await AnalysisJob.run(AnalyzeChapters.self, p, maxTokens: maxTokens, ctx: ctx) { job in
            job.fits(output: maxTokens) ? try await whole(job) : try await fromNotes(job)
        }
    }

    /// The chapters of a transcript that fits: one call over it, checked, again while a
    /// title fails and attempts remain. Chapter k starts in the k-th window of segments
    /// (the grammar admits only those ids): the model places each boundary where the
    /// subject turns, and the chapters are in order and spread over the whole transcript
    /// (without windows the 0.5B model started three chapters in the first 30 seconds and
    /// left the remaining seven minutes to the last).
    static func whole(_ job: AnalysisJob) async throws -> AnalysisOutput {
        let segments = job.input.transcript.segments
        let size = count(tokens: job.engine.countTokens(job.input.promptText), segments: segments.count)
        let windows = self.windows(segments, count: size.upperBound)
        let task = task(windows.count, firstId: segments.first?.id ?? 1)
        let schema = windowSchema(windows)
        let usage = Locked(Usage.zero)
        return try await verified(job, instructions: [task, stricter], chunks: 1, minChapters: min(size.lowerBound, windows.count), usage: usage) { attempt in
            let out = try await job.generate(body: job.input.promptText, condensed: false, task: attempt == 1 ? task : task + " " + stricter,
                                             schema: schema, maxTokens: maxTokens, range: attempt == 1 ? 5...99 : 99...99,
                                             expectedChars: 60 * windows.count, attempt: attempt)
            usage.withLock { $0 = $0 + out.usage }
            return windows.indices.compactMap { i in
                let c = out.json?["chapter\(i + 1)"]
                return c?["startSegmentId"]?.intValue.map { ChapterDraft(title: c?["title"]?.stringValue ?? "", startId: $0) }
            }
        }
    }

    /// Where each of `count` chapters may start: the first at the first segment, chapter k
    /// (k ≥ 2) within the segments around the k-th of `count` equal shares; windows are
    /// disjoint and in order, empty ones left out.
    static func windows(_ segments: [Segment], count k: Int) -> [[Segment]] {
        let n = segments.count
        guard let first = segments.first, k > 1 else { return segments.first.map { [[$0]] } ?? [] }
        let later: [[Segment]] = (1..<k).map { i in
            let lo = max(1, (2 * i - 1) * n / (2 * k)), hi = min(n, (2 * i + 1) * n / (2 * k))
            return lo < hi ? Array(segments[lo..<hi]) : []
        }
        return [[first]] + later.filter { !$0.isEmpty }
    }

    /// `{chapter1: {startSegmentId, title}, …}`, each start limited to its window's ids.
    static func windowSchema(_ windows: [[Segment]]) -> JSONValue {
        let item = SchemaDeriver.schema(for: Pick.self)
        var props = JSONObject()
        for (i, w) in windows.enumerated() {
            props["chapter\(i + 1)"] = Grounding.set(item, at: ["startSegmentId"], "enum", Grounding.ids(w))
        }
        return ["type": "object", "properties": .object(props), "required": .array(props.keys.map { .string($0) }), "additionalProperties": false]
    }

    /// The chapters of a transcript longer than the context: one per part, starting at the
    /// part's first segment, titled from the parts' notes in as few calls as fit.
    static func fromNotes(_ job: AnalysisJob) async throws -> AnalysisOutput {
        let parts = Condense.pieces(job.input, engine: job.engine)
        let (notes, notesUsage, _) = try await Condense.notes(parts, input: job.input, engine: job.engine, options: job.options, ctx: job.ctx,
                                                              range: 5...85, instructions: job.instructions)
        let lines = zip(parts, notes).map { "\($0.label): \($1["summary"]?.stringValue ?? "")" }
        let groups = self.groups(lines, engine: job.engine)
        let usage = Locked(notesUsage)
        job.ctx.progress.report("titling \(parts.count) parts", 86, phase: .reduce)
        return try await verified(job, instructions: [AnalysisJob.condensedPreamble, titlesTask(parts.count), stricter], chunks: parts.count,
                                  minChapters: 1, usage: usage) { attempt in
            var titles: [String] = []
            for g in groups {
                let n = g.count
                var schema = SchemaDeriver.schema(for: Titles.self)
                schema = Grounding.set(schema, at: ["titles"], "minItems", .int(n))
                schema = Grounding.set(schema, at: ["titles"], "maxItems", .int(n))
                let task = attempt == 1 ? titlesTask(n) : titlesTask(n) + " " + stricter
                let out = try await job.generate(body: lines[g].joined(separator: "\n"), condensed: true, task: task, schema: schema,
                                                 maxTokens: tokensPerTitle * n + 40, range: nil, attempt: attempt)
                usage.withLock { $0 = $0 + out.usage }
                let given = out.json?["titles"]?.arrayValue?.compactMap(\.stringValue) ?? []
                titles += (0..<n).map { $0 < given.count ? given[$0] : "" }
            }
            return zip(parts, titles).compactMap { part, title in part.segments.first.map { ChapterDraft(title: title, startId: $0.id) } }
        }
    }

    /// The part lines split into consecutive groups, each small enough to title in one call.
    static func groups(_ lines: [String], engine: any LanguageModel) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = 0, tokens = 0
        for (i, line) in lines.enumerated() {
            let t = engine.countTokens(line) + 1
            let budget = engine.contextSize - AnalysisJob.promptOverhead - tokensPerTitle * (i - start + 1) - 40
            if i > start, tokens + t > budget {
                out.append(start..<i)
                start = i
                tokens = 0
            }
            tokens += t
        }
        if start < lines.count { out.append(start..<lines.count) }
        return out
    }

    /// Attempts of `make` laid out and checked by `ChapterRules`, the best kept; the
    /// result's layout checked last, so chapters that do not cover the transcript in order
    /// never pass.
    static func verified(_ job: AnalysisJob, instructions: [String], chunks: Int, minChapters: Int, usage: Locked<Usage>,
                         _ make: @escaping (Int) async throws -> [ChapterDraft]) async throws -> AnalysisOutput {
        let segments = job.input.transcript.segments
        let names = job.names, source = job.source
        let (best, verification) = try await job.attempts.run(progress: job.ctx.progress, { attempt in
            ChapterRules.check(ChapterRules.layout(try await make(attempt), segments: segments), segments: segments, names: names, source: source,
                               instructions: instructions + job.userInstructions, mode: job.attempts.mode, minChapters: minChapters)
        }, check: { $0.findings })
        let chapters = ChapterRules.chapters(best.value, segments: segments)
        let layout = ChapterRules.layoutFindings(chapters, segments: segments)
        var v = verification
        v.issues += layout.map(\.issue)
        if !layout.isEmpty { v.passed = false }
        if v.passed, v.fallback == nil, v.issues.contains(where: { $0.repaired == true }) { v.fallback = .repaired }
        return AnalysisOutput(content: ["chapters": .array(chapters)], chunks: chunks, usage: usage.value, verification: v)
    }
}

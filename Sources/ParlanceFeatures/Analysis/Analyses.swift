import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// What every single-document analysis shares: the resolved input, the engine, sampling,
/// the cache key, the prompt body (the whole transcript when it fits, part summaries when
/// it does not), and the result metadata.
struct AnalysisJob: Sendable {
    let method: String
    let input: AnalysisInput
    let engine: any LanguageModel
    let options: ResolvedOptions
    let ctx: RequestContext
    let cacheKey: String
    let attempts: Attempts

    static func start(_ method: String, text: String?, uri: String?, language: String?, params: some Encodable & Sendable,
                      temperature: Double?, seed: Int?, deterministic: Bool?, verify: Bool?, maxAttempts: Int?, maxTokens: Int,
                      ctx: RequestContext) async throws -> AnalysisJob {
        let input = try await AnalysisInput.resolve(text: text, uri: uri, language: language, ctx: ctx)
        let engine = try await ctx.engine()
        _ = try input.checkedTokenCount(engine, path: uri == nil ? "text" : "uri")
        let options = ResolvedOptions(GenerationOptions(temperature: temperature, seed: seed, maxTokens: maxTokens, deterministic: deterministic), defaultTemperature: 0.2)
        return AnalysisJob(method: method, input: input, engine: engine, options: options, ctx: ctx,
                           cacheKey: AnalysisCache.key(method: method, input: input, params: params, engine: engine),
                           attempts: Attempts(verify: verify, maxAttempts: maxAttempts))
    }

    /// A cached result, marked `cached: true`.
    func cached<R: Decodable>() async -> R? {
        guard let hit: JSONValue = await ctx.services.analysisCache.get(cacheKey), case .object(var o) = hit else { return nil }
        o["cached"] = true
        ctx.progress.report("served from the analysis cache", 100, phase: .done)
        return try? JSONValue.object(o).decode()
    }

    /// Adds the metadata every analysis result carries, decodes, caches and returns it.
    func finish<R: Decodable>(_ content: JSONObject, chunks: Int?, usage: Usage, verification: Verification) async throws -> R {
        var o = content
        o["verification"] = try JSONValue(encoding: verification)
        o["language"] = .string(input.language.language)
        if let f = input.language.fallbackFrom { o["fallbackFrom"] = .string(f) }
        if let chunks { o["chunks"] = .int(chunks) }
        o["cached"] = false
        o["usage"] = try JSONValue(encoding: usage)
        o["provenance"] = try JSONValue(encoding: options.provenance(engine))
        let result: R = try JSONValue.object(o).decode()
        await ctx.services.analysisCache.put(cacheKey, JSONValue.object(o))
        return result
    }

    /// The transcript as the prompt body when it fits beside `output` tokens (the shared
    /// document prefix), else its part summaries (chunks > 1).
    func body(output: Int) async throws -> (text: String, chunks: Int, usage: Usage) {
        let budget = engine.contextSize - output - AnalysisJob.promptOverhead
        if engine.countTokens(input.promptText) <= budget { return (input.promptText, 1, .zero) }
        ctx.progress.report("the transcript is longer than the context: condensing it part by part", 2, phase: .tokenizing)
        let c = try await Condense.condensed(input, engine: engine, options: options, ctx: ctx, budget: budget, range: 5...80)
        return (c.body, c.chunks, c.usage)
    }

    /// Tokens kept for the system prompt, template and task text.
    static let promptOverhead = 200

    /// One schema-guided call over `body`, with the task after the transcript. Progress
    /// percentages map into `range`; nil reports nothing (one part among many).
    func generate(body: String, condensed: Bool, task: String, schema: JSONValue, maxTokens: Int, range: ClosedRange<Int>?,
                  expectedChars: Int = 500, part: String? = nil, attempt: Int = 1) async throws -> Generated {
        try Task.checkCancellation()
        var o = options
        o.maxTokens = maxTokens
        o.seed = Attempts.seed(options.seed, attempt: attempt)
        let prefix = condensed ? "These are summaries of consecutive parts of one transcript, with their times. " : ""
        let prompt = engine.render(AnalysisPrompt.messages(input, body: body, task: prefix + task))
        return try await Generation.run(engine, prompt: prompt, schema: schema, options: o,
                                        cachePriority: input.uri == nil ? .normal : .document,
                                        progress: range.map { ctx.progress.scaled($0, expectedChars: expectedChars) } ?? .none, part: part)
    }
}

extension AnalysisJob {
    /// Names in this job's transcript, for the list checks.
    var names: Set<String> { ListItemRules.names(in: input.promptText, speakers: input.transcript.segments.compactMap(\.speaker)) }

    /// The transcript, for the checks that items are supported by it.
    var source: SourceSupport { SourceSupport(segments: input.transcript.segments) }

    /// One schema-guided call, checked by `check`; while a list still lacks good items or a
    /// scalar fails, another attempt (another seed, the task with a stricter line) tops it up.
    func generateVerified(body: String, condensed: Bool, task: String, schema: JSONValue, maxTokens: Int, range: ClosedRange<Int>?,
                          expectedChars: Int = 500, check: AnalysisVerifier) async throws -> (content: JSONObject, usage: Usage, verification: Verification) {
        // Attempts are merged, not ranked: a later attempt only tops up what the first left short.
        var merged: Repaired<JSONObject>?
        var usage = Usage.zero
        let (best, verification) = try await attempts.run(progress: ctx.progress, { attempt in
            let t = attempt == 1 ? task : task + " " + AnalysisJob.stricter
            // A later attempt reports at the top of the range: percentages never go back.
            let r = attempt == 1 ? range : range.map { $0.upperBound...$0.upperBound }
            let out = try await generate(body: body, condensed: condensed, task: t, schema: schema, maxTokens: maxTokens, range: r,
                                         expectedChars: expectedChars, attempt: attempt)
            usage = usage + out.usage
            let content = out.json?.objectValue ?? JSONObject()
            let next = merged.map { check.topUp($0, from: content) } ?? check.apply(content, mode: attempts.mode)
            merged = next
            return next
        }, check: { $0.findings })
        var v = verification
        if v.passed, v.issues.contains(where: { $0.repaired == true }) { v.fallback = .repaired }
        return (best.value, usage, v)
    }

    /// The line added to the task from the second attempt on.
    static let stricter = "Every list item must say something different. Takeaways and action items are full sentences, not names or labels. targetAudience describes a kind of people (for example \"new beekeepers\"), not a name."
}

/// `analysis/tags` and `analysis/content`: one schema-guided call over the transcript (or
/// its part summaries).
public enum Analyses {
    static let tagsTask = """
        Give tags (3-8 short lowercase keywords for the subjects discussed), categories (1-3 broad fields such as \
        Technology, Business, Science, Health, Culture) and difficulty (beginner, intermediate or advanced) for this transcript.
        """

    public static func tags(_ p: AnalysisParams, _ ctx: RequestContext) async throws -> AnalyzeTags.Result {
        let job = try await AnalysisJob.start(AnalyzeTags.name, text: p.text, uri: p.uri, language: p.language, params: p,
                                              temperature: p.temperature, seed: p.seed, deterministic: p.deterministic,
                                              verify: p.verify, maxAttempts: p.maxAttempts, maxTokens: 300, ctx: ctx)
        if let hit: AnalyzeTags.Result = await job.cached() { return hit }
        let (body, chunks, u) = try await job.body(output: 300)
        let check = AnalysisVerifier(fields: [.init("tags", .phrase, minItems: 3), .init("categories", .phrase, minItems: 1)],
                              labels: AnalyzeTags.Result.generatedFields, names: [])
        let out = try await job.generateVerified(body: body, condensed: chunks > 1, task: tagsTask, schema: AnalyzeTags.Result.generationSchema,
                                                 maxTokens: 300, range: chunks > 1 ? 85...99 : 5...99, expectedChars: 250, check: check)
        return try await job.finish(out.content, chunks: chunks, usage: u + out.usage, verification: out.verification)
    }

    static let contentTask = """
        Describe how this transcript is delivered: style (conversational, interview, lecture, tutorial, narrative, debate, \
        panel, monologue or news), tone (casual, friendly, formal, enthusiastic, serious, humorous, informative, critical, \
        inspirational or neutral), complexity (low, medium or high) and notes (one or two sentences explaining your choices).
        """

    public static func content(_ p: AnalysisParams, _ ctx: RequestContext) async throws -> AnalyzeContent.Result {
        let job = try await AnalysisJob.start(AnalyzeContent.name, text: p.text, uri: p.uri, language: p.language, params: p,
                                              temperature: p.temperature, seed: p.seed, deterministic: p.deterministic,
                                              verify: p.verify, maxAttempts: p.maxAttempts, maxTokens: 200, ctx: ctx)
        if let hit: AnalyzeContent.Result = await job.cached() { return hit }
        let (body, chunks, u) = try await job.body(output: 200)
        let check = AnalysisVerifier(fields: [], proseKeys: ["notes"], labels: AnalyzeContent.Result.generatedFields, names: [])
        let out = try await job.generateVerified(body: body, condensed: chunks > 1, task: contentTask, schema: AnalyzeContent.Result.generationSchema,
                                                 maxTokens: 200, range: chunks > 1 ? 85...99 : 5...99, expectedChars: 250, check: check)
        return try await job.finish(out.content, chunks: chunks, usage: u + out.usage, verification: out.verification)
    }

    /// A string array without case-insensitive repeats, unless that would leave fewer than
    /// the schema's minimum.
    static func dedupe(_ value: JSONValue?, keepingAtLeast n: Int) -> JSONValue? {
        guard let items = value?.arrayValue?.compactMap(\.stringValue) else { return value }
        let unique = dedupe(items)
        return unique.count >= n ? .array(unique.map { .string($0) }) : value
    }

    /// Case-insensitive de-duplication, first spelling kept, whitespace trimmed.
    static func dedupe(_ items: [String]) -> [String] {
        var seen = Set<String>()
        return items.compactMap { raw in
            let s = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            return !s.isEmpty && seen.insert(s.lowercased()).inserted ? s : nil
        }
    }
}

import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// The input every single-document analysis request has (`analysis/tags`, `/content`,
/// `/highlights`, `/entities`, `/worthIt` and `analysis/summarize`): a document and a language.
protocol DocumentRequest: GenerationInput {
    var text: String? { get set }
    var uri: String? { get set }
    var language: String? { get set }
    var languageFallback: LanguageFallback? { get set }
    var instructions: String? { get set }
}
extension DocumentInput: DocumentRequest {}
extension Summarize.Input: DocumentRequest {}
extension AnalyzeWorthIt.Input: DocumentRequest {}

/// What an analysis produced, before the metadata every result carries.
struct AnalysisOutput: Sendable {
    var content: JSONObject
    var chunks: Int
    var usage: Usage
    var verification: Verification
}

/// One single-document analysis: the resolved input, the engine, sampling, the cache key
/// and the attempt policy. `run` is the pipeline every analysis method goes through:
/// start, cache, the method's own work (`produce`), finish.
struct AnalysisJob: Sendable {
    let input: AnalysisInput
    let engine: any LanguageModel
    let options: ResolvedOptions
    let ctx: RequestContext
    let cacheKey: AnalysisCache.Key
    let attempts: Attempts
    /// The user's `instructions`, trimmed; nil when none or blank.
    let instructions: String?

    /// The user's instructions as the checks take them: list items that only repeat them fail.
    var userInstructions: [String] { instructions.map { [$0] } ?? [] }

    /// `instructions` trimmed, nil when blank: what the prompt and the cache key read.
    static func instructions(_ raw: String?) -> String? {
        guard let t = raw?.trimmingCharacters(in: .whitespacesAndNewlines), !t.isEmpty else { return nil }
        return t
    }

    /// Resolves the request, answers from the cache when it can, else runs `produce` and
    /// adds the metadata, caches and returns the result.
    static func run<M: DocumentAnalysis>(_ method: M.Type, _ p: M.Params, maxTokens: Int, ctx: RequestContext,
                                         _ produce: (AnalysisJob) async throws -> AnalysisOutput) async throws -> M.Result
    where M.Input: DocumentRequest {
        let job = try await start(M.name, p, maxTokens: maxTokens, ctx: ctx)
        if !job.options.refresh, let hit: M.Result = await AnalysisCache.cachedResult(job.cacheKey, ctx: ctx) { return hit }
        let out = try await produce(job)
        return try await job.finish(out)
    }

    static func start(_ method: String, _ p: GenerationParams<some DocumentRequest>, maxTokens: Int, ctx: RequestContext) async throws -> AnalysisJob {
        let input = try await AnalysisInput.resolve(text: p.text, uri: p.uri, language: p.language, fallback: p.languageFallback,
                                                    model: try ctx.modelName(), ctx: ctx)
        let engine = try await ctx.engine()
        _ = try input.checkedTokenCount(engine, path: p.uri == nil ? "text" : "uri")
        var options = ResolvedOptions(p.controls, maxTokens: maxTokens, defaultTemperature: 0.2)
        options.languageRisk = input.languageRisk
        return AnalysisJob(input: input, engine: engine, options: options, ctx: ctx,
                           cacheKey: AnalysisCache.Key(method: method, input: input, params: p, engine: engine),
                           attempts: Attempts(verify: p.verify, maxAttempts: p.maxAttempts), instructions: instructions(p.instructions))
    }

    /// The method's fields with the metadata every analysis result carries, cached.
    func finish<F: AnalysisFields>(_ out: AnalysisOutput) async throws -> Analyzed<F> {
        let meta = AnalysisMeta(language: input.language.language, fallbackFrom: input.language.fallbackFrom, chunks: out.chunks,
                                cached: false, verification: out.verification, usage: out.usage, provenance: options.provenance(engine))
        let result = Analyzed<F>(fields: try JSONValue.object(out.content).decode(), meta: meta)
        await ctx.services.analysisCache.put(cacheKey, try JSONValue(encoding: result))
        return result
    }

    /// Tokens kept for the system prompt, template and task text.
    static let promptOverhead = 200

    /// Whether the whole transcript fits in the context beside `output` tokens.
    func fits(output: Int) -> Bool {
        engine.countTokens(input.promptText) <= engine.contextSize - output - AnalysisJob.promptOverhead
    }

    /// The transcript as the prompt body when it fits beside `output` tokens (the shared
    /// document prefix), else its part summaries (chunks > 1).
    func body(output: Int) async throws -> (text: String, chunks: Int, usage: Usage) {
        if fits(output: output) { return (input.promptText, 1, .zero) }
        ctx.progress.report("the transcript is longer than the context: condensing it part by part", 2, phase: .tokenizing)
        let budget = engine.contextSize - output - AnalysisJob.promptOverhead
        let c = try await Condense.condensed(input, engine: engine, options: options, ctx: ctx, budget: budget, range: 5...80,
                                             instructions: instructions)
        return (c.body, c.chunks, c.usage)
    }

    /// Drafts to merge: one call over the whole transcript when it fits beside `output`
    /// tokens; otherwise every part's notes (shared with the other analyses and cached per
    /// part), each made a draft by `fromNotes`.
    func drafts(output: Int, whole: () async throws -> Generated,
                fromNotes: (JSONValue) -> JSONValue) async throws -> (drafts: [JSONValue], chunks: Int, usage: Usage) {
        if fits(output: output) {
            let out = try await whole()
            return ([out.json ?? [:]], 1, out.usage)
        }
        let parts = Condense.pieces(input, engine: engine)
        let (notes, usage, _) = try await Condense.notes(parts, input: input, engine: engine, options: options, ctx: ctx, range: 5...95,
                                                         instructions: instructions)
        return (notes.map(fromNotes), parts.count, usage)
    }

    /// One schema-guided call over `body`, with the task (and the user's instructions) after
    /// the transcript. Progress
    /// percentages map into `range`; nil reports nothing (one part among many).
    /// An analysis whose schema has no number field (summarize, tags, content)
    /// writes numbers only inside its text, and those are the transcript's own
    /// (`NumberGuard`, a local engine): a two-sentence note about a launch "moved to March"
    /// was summarized as "the new launch date is March 15th" for "an audience of 10 people",
    /// and passed its checks. No analysis writes a weekday or month the transcript does not
    /// name (`WordGuard`): held to its numbers, the same summary gave "a deadline of June".
    func generate(body: String, condensed: Bool, task: String, schema: JSONValue, maxTokens: Int, range: ClosedRange<Int>?,
                  expectedChars: Int = 500, part: String? = nil, attempt: Int = 1) async throws -> Generated {
        try Task.checkCancellation()
        var o = options
        o.maxTokens = maxTokens
        o.seed = Attempts.seed(options.seed, attempt: attempt)
        let source = input.transcript.segments.map { ($0.speaker ?? "") + " " + $0.text }.joined(separator: "\n")
        if !Self.hasNumberField(schema) { o.numbersFrom = source }
        o.bannedWords = Facts.absentCalendarWords(source)
        let prefix = condensed ? Self.condensedPreamble + " " : ""
        let prompt = engine.render(AnalysisPrompt.messages(input, body: body, task: prefix + task, instructions: instructions))
        return try await Generation.run(engine, prompt: prompt, schema: schema, options: o,
                                        cachePriority: input.uri == nil ? .normal : .document,
                                        progress: range.map { ctx.progress.scaled($0, expectedChars: expectedChars) } ?? .none, part: part)
    }

    /// What a task over part notes (`condensed`) is told first: an output that echoes it is
    /// the prompt, not content ("Three parts of this transcript, with their times (" came
    /// back as a chapter title).
    static let condensedPreamble = "These are summaries of consecutive parts of one transcript, with their times."

    /// Whether a value of `schema` may hold a JSON number (a `number` or `integer` type, at
    /// any depth), which a guard on the digits written would hold to the transcript's.
    static func hasNumberField(_ schema: JSONValue) -> Bool {
        switch schema {
        case .object(let o):
            let types = o["type"].map { $0.arrayValue ?? [$0] } ?? []
            return types.contains { $0 == "number" || $0 == "integer" } || o.contains { hasNumberField($0.value) }
        case .array(let a): return a.contains(where: hasNumberField)
        default: return false
        }
    }
}

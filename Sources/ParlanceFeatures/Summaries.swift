import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import Synchronization

/// `analysis/summarize`: one pass when the transcript fits, otherwise hierarchical
/// map-reduce (chunk summaries, generated concurrently, then a combined summary).
public enum Summaries {
    static let task = """
        Summarize this transcript. Give: summary (2-3 sentences), mainTopics (3-5 short topics), \
        keyTakeaways (3-5 concrete takeaways), targetAudience (who it is for), engagementLevel (low, medium or high).
        """

    public static func summarize(_ p: Summarize.Params, _ ctx: RequestContext) async throws -> Summarize.Result {
        let input = try await AnalysisInput.resolve(text: p.text, uri: p.uri, language: p.language, services: ctx.services)
        let engine = try await ctx.engine()
        let options = ResolvedOptions(GenerationOptions(temperature: p.temperature, seed: p.seed, maxTokens: p.maxTokens ?? 400),
                                      defaultTemperature: 0.2)
        let cacheKey = AnalysisCache.key(method: Summarize.name, input: input, params: p, engine: engine)
        if let hit: Summarize.Result = await ctx.services.analysisCache.get(cacheKey) {
            var r = hit
            r.cached = true
            return r
        }
        let schema = Summarize.Result.generationSchema
        var body = input.promptText
        var chunks = 1
        var usage = Usage.zero
        let overhead = 160 + options.maxTokens
        let budget = engine.info.contextSize - overhead
        if engine.countTokens(body) > budget {
            (body, chunks, usage) = try await mapReduce(input, engine: engine, budget: budget, options: options, ctx: ctx)
        }
        ctx.progress(.init(kind: .report, message: "summarizing", percentage: chunks > 1 ? 90 : 10, phase: chunks > 1 ? .reduce : .prompt))
        let prompt = engine.prompt.tokens(for: AnalysisPrompt.messages(input, body: body, task: chunks > 1
            ? "These are summaries of consecutive parts of one transcript. " + task : task))
        let out = try await Generation.run(engine, prompt: prompt, schema: schema, options: options,
                                           cachePriority: input.uri == nil ? .normal : .document, progress: ctx.progress)
        var content = out.json?.objectValue ?? JSONObject()
        content["language"] = .string(input.language.language)
        if let f = input.language.fallbackFrom { content["fallbackFrom"] = .string(f) }
        content["chunks"] = .int(chunks)
        content["cached"] = false
        content["usage"] = try JSONValue(encoding: usage + out.usage)
        content["provenance"] = try JSONValue(encoding: options.provenance(engine))
        let result: Summarize.Result = try JSONValue.object(content).decode()
        await ctx.services.analysisCache.put(cacheKey, result)
        return result
    }

    /// Summarizes each chunk (concurrently: the engine batches them), then joins the
    /// summaries; repeats while the joined text is still too long.
    static func mapReduce(_ input: AnalysisInput, engine: Engine, budget: Int, options: ResolvedOptions, ctx: RequestContext)
        async throws -> (String, Int, Usage)
    {
        var segments = input.transcript.segments
        var usage = Usage.zero
        var total = 0
        for round in 0..<4 {
            let chunks = Chunker.chunk(segments, budget: min(budget, 1500), tokenCount: engine.countTokens)
            total += chunks.count
            let done = ProgressCounter()
            let n = chunks.count
            let summaries = try await withThrowingTaskGroup(of: (Int, String, Usage).self) { group in
                for c in chunks {
                    group.addTask {
                        let (text, u) = try await chunkSummary(c, of: n, input: input, engine: engine, options: options, ctx: ctx)
                        let k = done.increment()
                        ctx.progress(.init(kind: .report, message: "summarized part \(k) of \(n)", percentage: min(85, 85 * k / n),
                                           phase: .map, part: "chunk-\(c.index)"))
                        return (c.index, text, u)
                    }
                }
                var out: [(Int, String, Usage)] = []
                for try await r in group { out.append(r) }
                return out.sorted { $0.0 < $1.0 }
            }
            for s in summaries { usage = usage + s.2 }
            let joined = summaries.map { "Part \($0.0 + 1): \($0.1)" }.joined(separator: "\n")
            if engine.countTokens(joined) <= budget || round == 3 { return (joined, total, usage) }
            segments = summaries.enumerated().map { i, s in
                Segment(id: i + 1, start: nil, end: nil, speaker: nil, text: s.1, startOffset: 0, endOffset: 0)
            }
        }
        preconditionFailure("unreachable")
    }

    static func chunkSummary(_ c: Chunk, of n: Int, input: AnalysisInput, engine: Engine, options: ResolvedOptions, ctx: RequestContext)
        async throws -> (String, Usage)
    {
        let key = "chunk-summary|\(c.contentHash)|\(input.language.language)|\(engine.modelSha256)|\(options.seed)"
        if let hit: String = await ctx.services.analysisCache.get(key) { return (hit, .zero) }
        let messages = [
            ChatMessage(.system, "You summarize parts of transcripts in plain prose. Keep names, numbers and decisions."),
            ChatMessage(.user, "Part \(c.index + 1) of \(n) of a transcript:\n\(c.text)\n\n---\nSummarize this part in 3-5 sentences in \(input.languageName)."),
        ]
        var o = options
        o.maxTokens = 200
        let out = try await Generation.run(engine, prompt: engine.prompt.tokens(for: messages), options: o, progress: .none)
        let text = out.text.trimmingCharacters(in: .whitespacesAndNewlines)
        await ctx.services.analysisCache.put(key, text)
        return (text, out.usage)
    }
}

final class ProgressCounter: Sendable {
    private let n = Mutex<Int>(0)  // guards the count of finished steps
    func increment() -> Int { n.withLock { $0 += 1; return $0 } }
}

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
        let maxTokens = p.maxTokens ?? 400
        let job = try await AnalysisJob.start(Summarize.name, text: p.text, uri: p.uri, language: p.language, params: p,
                                              temperature: p.temperature, seed: p.seed, deterministic: p.deterministic,
                                              verify: p.verify, maxAttempts: p.maxAttempts, maxTokens: maxTokens, ctx: ctx)
        if let hit: Summarize.Result = await job.cached() { return hit }
        // One pass when the transcript fits; otherwise map (part summaries, cached per part,
        // so after document/change only changed parts are summarized again) and reduce.
        let (body, chunks, usage) = try await job.body(output: maxTokens)
        if chunks > 1 { ctx.progress.report("combining \(chunks) part summaries", 85, phase: .reduce) }
        let check = AnalysisVerifier(fields: [.init("mainTopics", .phrase, minItems: 3), .init("keyTakeaways", .sentence, minItems: 3)],
                              audienceKey: "targetAudience", proseKeys: ["summary"], labels: Summarize.Result.generatedFields, names: job.names,
                              source: job.source, instructions: [task, AnalysisJob.stricter], topicsKey: "mainTopics", language: job.input.language.language)
        let out = try await job.generateVerified(body: body, condensed: chunks > 1, task: task, schema: Summarize.Result.generationSchema,
                                                 maxTokens: maxTokens, range: chunks > 1 ? 85...99 : 5...99, expectedChars: 900, check: check)
        return try await job.finish(out.content, chunks: chunks, usage: usage + out.usage, verification: out.verification)
    }
}

final class ProgressCounter: Sendable {
    private let n = Mutex<Int>(0)  // guards the count of finished steps
    func increment() -> Int { n.withLock { $0 += 1; return $0 } }
}

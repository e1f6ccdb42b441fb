import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// `analysis/summarize`: one pass when the transcript fits, otherwise hierarchical
/// map-reduce (chunk summaries, generated concurrently, then a combined summary).
public enum Summaries {
    /// The task, with the list sizes of this transcript (3-5 each unless it is shorter).
    static func task(topics: ListSize, takeaways: ListSize) -> String {
        """
        Summarize this transcript. Give: summary (2-3 sentences), mainTopics (\(topics.words) short topics), \
        keyTakeaways (\(takeaways.words) concrete takeaways), targetAudience (who it is for), engagementLevel (low, medium or high).
        """
    }

    /// One pass when the transcript fits; otherwise map (part summaries, cached per part,
    /// so after document/change only changed parts are summarized again) and reduce.
    public static func summarize(_ p: Summarize.Params, _ ctx: RequestContext) async throws -> Summarize.Result {
        let maxTokens = p.maxTokens ?? 400
        return try await AnalysisJob.run(Summarize.self, p, maxTokens: maxTokens, ctx: ctx) { job in
            let topics = job.listSize(3...5), takeaways = job.listSize(3...5)
            let task = task(topics: topics, takeaways: takeaways)
            let schema = takeaways.applied(to: topics.applied(to: Summarize.Result.generationSchema, at: "mainTopics",
                                                              phrasesOf: job.input.transcript.segments), at: "keyTakeaways",
                                           sentencesOf: job.input.transcript.segments)
            let check = AnalysisVerifier(fields: [.init("mainTopics", .phrase, minItems: topics.minItems),
                                                  .init("keyTakeaways", .sentence, minItems: takeaways.minItems)],
                                  audienceKey: "targetAudience", proseKeys: ["summary"], labels: Summarize.Result.generatedFields, names: job.names,
                                  source: job.source, instructions: [task, AnalysisJob.stricter] + job.userInstructions, topicsKey: "mainTopics",
                                  language: job.input.language.language)
            return try await job.verifiedAnalysis(task: task, schema: schema, maxTokens: maxTokens,
                                                  expectedChars: 900, check: check, reducing: { "combining \($0) part summaries" })
        }
    }
}

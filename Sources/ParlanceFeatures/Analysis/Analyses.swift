import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

extension AnalysisJob {
    /// Names in this job's transcript, for the list checks: its people by every name the
    /// transcript gave them ("Bekah" as well as "Bekah Hawrot Weigel").
    var names: Set<String> {
        ListItemRules.names(in: input.promptText, speakers: input.transcript.people.flatMap { [$0.name] + $0.aliases })
    }

    /// A list's size for this transcript: `usual`, or fewer when it has fewer sentences.
    func listSize(_ usual: ClosedRange<Int>) -> ListSize {
        ListSize(usual, sentences: ListSize.sentences(in: input.transcript.segments))
    }

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
        var result = best.value
        if attempts.mode == .repair, case let (repaired, replaced) = check.finalRepair(best), replaced {
            // The model's prose failed on every attempt: an outline of the transcript stands in.
            result = repaired.value
            v = Verification(passed: !repaired.blocking, attempts: v.attempts, issues: repaired.issues, fallback: .extractive)
        }
        if v.passed, v.fallback == nil, v.issues.contains(where: { $0.repaired == true }) { v.fallback = .repaired }
        return (result, usage, v)
    }

    /// The shape most analyses have: the body (the whole transcript, or its part summaries
    /// when it does not fit), then one verified call; progress within `whole`, or within
    /// `condensed` after condensing (announced by `reducing`, when given).
    func verifiedAnalysis(task: String, schema: JSONValue, maxTokens: Int, expectedChars: Int, check: AnalysisVerifier,
                          whole: ClosedRange<Int> = 5...99, condensed: ClosedRange<Int> = 85...99,
                          reducing: ((Int) -> String)? = nil) async throws -> AnalysisOutput {
        let (body, chunks, usage) = try await body(output: maxTokens)
        if chunks > 1, let reducing { ctx.progress.report(reducing(chunks), 85, phase: .reduce) }
        let out = try await generateVerified(body: body, condensed: chunks > 1, task: task, schema: schema, maxTokens: maxTokens,
                                             range: chunks > 1 ? condensed : whole, expectedChars: expectedChars, check: check)
        return AnalysisOutput(content: out.content, chunks: chunks, usage: usage + out.usage, verification: out.verification)
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
        try await AnalysisJob.run(AnalyzeTags.self, p, maxTokens: 300, ctx: ctx) { job in
            let check = AnalysisVerifier(fields: [.init("tags", .tag, minItems: 3), .init("categories", .phrase, minItems: 1)],
                                  labels: AnalyzeTags.Result.generatedFields, names: job.names, instructions: job.userInstructions,
                                  echoSource: job.input.promptText)
            return try await job.verifiedAnalysis(task: tagsTask, schema: AnalyzeTags.Result.generationSchema, maxTokens: 300,
                                                  expectedChars: 250, check: check)
        }
    }

    static let contentTask = """
        Describe how this transcript is delivered: style (conversational, interview, lecture, tutorial, narrative, debate, \
        panel, monologue or news), tone (casual, friendly, formal, enthusiastic, serious, humorous, informative, critical, \
        inspirational or neutral), complexity (low, medium or high) and notes (one or two sentences explaining your choices).
        """

    public static func content(_ p: AnalysisParams, _ ctx: RequestContext) async throws -> AnalyzeContent.Result {
        try await AnalysisJob.run(AnalyzeContent.self, p, maxTokens: 200, ctx: ctx) { job in
            let check = AnalysisVerifier(fields: [], proseKeys: ["notes"], labels: AnalyzeContent.Result.generatedFields, names: [])
            return try await job.verifiedAnalysis(task: contentTask, schema: AnalyzeContent.Result.generationSchema, maxTokens: 200,
                                                  expectedChars: 250, check: check)
        }
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

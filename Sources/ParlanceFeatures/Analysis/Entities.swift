import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// `analysis/entities`: the model names entities by kind; each name is then looked up in the
/// transcript's segments, so every occurrence listed is a segment that contains it, and a
/// name found nowhere is reported in `unverified` instead of the lists.
public enum Entities {
    struct Draft: Codable, Sendable, Schematic {
        var people: [String]
        var organizations: [String]
        var products: [String]
        var locations: [String]
        var resources: [String]
        static let schemaHints: [String: SchemaHint] = [
            "people": SchemaHint(maxItems: 5, minLength: 2, maxLength: 50),
            "organizations": SchemaHint(maxItems: 5, minLength: 2, maxLength: 50),
            "products": SchemaHint(maxItems: 5, minLength: 2, maxLength: 50),
            "locations": SchemaHint(maxItems: 5, minLength: 2, maxLength: 50),
            "resources": SchemaHint(maxItems: 5, minLength: 2, maxLength: 50),
        ]
    }

    static let kinds = ["people", "organizations", "products", "locations", "resources"]
    static let maxTokens = 450

    static let task = """
        List the names mentioned in this transcript, copied exactly as written: people (persons), organizations \
        (companies, institutions, teams), products (software, devices, services), locations (cities, countries, places), \
        resources (books, papers, episodes, websites, tools). Use [] for a kind with none.
        """

    public static func entities(_ p: AnalysisParams, _ ctx: RequestContext) async throws -> AnalyzeEntities.Result {
        try await AnalysisJob.run(AnalyzeEntities.self, p, maxTokens: maxTokens, ctx: ctx) { job in
            // Long transcripts: the names in every part's notes.
            let (drafts, chunks, usage) = try await job.drafts(output: maxTokens, whole: {
                try await job.generate(body: job.input.promptText, condensed: false, task: task, schema: SchemaDeriver.schema(for: Draft.self),
                                       maxTokens: maxTokens, range: 5...99, expectedChars: 300)
            }, fromNotes: { $0["entities"] ?? [:] })
            return grounded(drafts, input: job.input, chunks: chunks, usage: usage)
        }
    }

    /// Every name the drafts give, looked up in the transcript: listed by kind with its
    /// occurrences when found (each name once), else moved to `unverified`.
    static func grounded(_ drafts: [JSONValue], input: AnalysisInput, chunks: Int, usage: Usage) -> AnalysisOutput {
        let segments = input.transcript.segments
        var content = JSONObject()
        var unverified: [String] = []
        var taken = Set<String>()
        for kind in kinds {
            let names = drafts.flatMap { $0[kind]?.arrayValue?.compactMap(\.stringValue) ?? [] }
            let (found, missing) = Grounding.verifyNames(names, in: segments)
            var list: [JSONValue] = []
            for (name, ids) in found where taken.insert(TextMatch.normalize(name)).inserted {
                let refs = ids.compactMap { input.segment($0) }.map(Grounding.ref)
                list.append(["name": .string(name), "occurrences": .array(refs)])
            }
            content[kind] = .array(list)
            unverified += missing
        }
        let ungrounded = Analyses.dedupe(unverified)
        content["unverified"] = .array(ungrounded.map { .string($0) })
        // Every listed name was found in the transcript (grounding is the check); names the
        // model gave that are not there were moved to `unverified`.
        let issues = ungrounded.isEmpty ? [] : [Finding(.unsupportedFact, .namesNotInTranscript(ungrounded), path: "unverified", action: .removed).issue]
        return AnalysisOutput(content: content, chunks: chunks, usage: usage,
                              verification: Verification(passed: true, attempts: 1, issues: issues, fallback: issues.isEmpty ? nil : .repaired))
    }
}

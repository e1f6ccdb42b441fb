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
        let job = try await AnalysisJob.start(AnalyzeEntities.name, text: p.text, uri: p.uri, language: p.language, params: p,
                                              temperature: p.temperature, seed: p.seed, deterministic: p.deterministic,
                                              verify: p.verify, maxAttempts: p.maxAttempts, maxTokens: maxTokens, ctx: ctx)
        if let hit: AnalyzeEntities.Result = await job.cached() { return hit }
        let schema = SchemaDeriver.schema(for: Draft.self)
        let engine = job.engine
        var drafts: [JSONValue] = []
        var usage = Usage.zero
        var chunks = 1
        if engine.countTokens(job.input.promptText) <= engine.contextSize - maxTokens - AnalysisJob.promptOverhead {
            let out = try await job.generate(body: job.input.promptText, condensed: false, task: task, schema: schema,
                                             maxTokens: maxTokens, range: 5...99, expectedChars: 300)
            drafts = [out.json ?? [:]]
            usage = out.usage
        } else {
            // Long transcripts: the names in every part's notes (shared with the other
            // analyses and cached per part).
            let parts = Condense.pieces(job.input, engine: engine)
            chunks = parts.count
            let (notes, u, _) = try await Condense.notes(parts, input: job.input, engine: engine, options: job.options, ctx: ctx, range: 5...95)
            drafts = notes.map { $0["entities"] ?? [:] }
            usage = u
        }
        let segments = job.input.transcript.segments
        var content = JSONObject()
        var unverified: [String] = []
        var taken = Set<String>()
        for kind in kinds {
            let names = drafts.flatMap { $0[kind]?.arrayValue?.compactMap(\.stringValue) ?? [] }
            let (found, missing) = Grounding.verifyNames(names, in: segments)
            var list: [JSONValue] = []
            for (name, ids) in found where taken.insert(TextMatch.normalize(name)).inserted {
                let refs = ids.compactMap { job.input.segment($0) }.map(Grounding.ref)
                list.append(["name": .string(name), "occurrences": .array(refs)])
            }
            content[kind] = .array(list)
            unverified += missing
        }
        let ungrounded = Analyses.dedupe(unverified)
        content["unverified"] = .array(ungrounded.map { .string($0) })
        // Every listed name was found in the transcript (grounding is the check); names the
        // model gave that are not there were moved to `unverified`.
        let issues = ungrounded.isEmpty ? [] : [VerificationIssue(.unsupportedFact, "not in the transcript, moved to unverified: " + ungrounded.joined(separator: ", "),
                                                                  path: "unverified", repaired: true)]
        return try await job.finish(content, chunks: chunks, usage: usage,
                                    verification: Verification(passed: true, attempts: 1, issues: issues, fallback: issues.isEmpty ? nil : .repaired))
    }
}

import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceHash
import ParlanceJSON
import ParlanceProtocol

/// `analysis/compare`: each document is summarized (analysis/summarize, so its summary is
/// cached and shared), then one schema-guided call compares the summaries. The grammar
/// requires one unique insight per document (an object keyed by the titles) and a
/// recommended order made only of the titles.
public enum Compare {
    static let task = """
        Compare these documents. Give commonThemes (1-5 themes several documents share), evolution (how the ideas \
        develop from one document to the next), uniqueInsights (for each document, one insight only it offers), \
        recommendedOrder (every document title, in the best order to read or watch them) and narrative (2-3 sentences \
        tying the documents together).
        """

    public static func compare(_ p: AnalyzeCompare.Params, _ ctx: RequestContext) async throws -> AnalyzeCompare.Result {
        let engine = try await ctx.engine()
        let inputs = try await resolve(p, engine: engine, ctx: ctx)
        let titles = uniqueTitles(p.documents)
        let key = cacheKey(p, inputs: inputs, engine: engine)
        if p.refresh != true, let hit: AnalyzeCompare.Result = await AnalysisCache.cachedResult(key, ctx: ctx) { return hit }
        var options = ResolvedOptions(p.controls, maxTokens: nil, defaultTemperature: 0.2)
        options.languageRisk = inputs[0].languageRisk
        let (digests, documents, mapped) = try await summarizeEach(p, titles: titles, inputs: inputs, ctx: ctx)
        let (draft, reduced) = try await compareSummaries(digests, language: inputs[0], engine: engine, options: options, titles: titles, ctx: ctx)
        var content = verified(draft, titles: titles, verify: Attempts(verify: p.verify, maxAttempts: p.maxAttempts).verify)
        content["documents"] = .array(documents)
        content["language"] = .string(inputs[0].language.language)
        if let f = inputs[0].language.fallbackFrom { content["fallbackFrom"] = .string(f) }
        content["cached"] = false
        content["usage"] = try JSONValue(encoding: mapped + reduced)
        content["provenance"] = try JSONValue(encoding: options.provenance(engine))
        let result: AnalyzeCompare.Result = try JSONValue.object(content).decode()
        await ctx.services.analysisCache.put(key, JSONValue.object(content))
        return result
    }

    /// Every document resolved before any model work: a bad one fails the request at once,
    /// its error's message and path saying which document.
    static func resolve(_ p: AnalyzeCompare.Params, engine: any LanguageModel, ctx: RequestContext) async throws -> [AnalysisInput] {
        var inputs: [AnalysisInput] = []
        for (i, d) in p.documents.enumerated() {
            do {
                let input = try await AnalysisInput.resolve(text: d.text, uri: d.uri, language: p.language ?? inputs.first?.language.language,
                                                            fallback: p.languageFallback, model: engine.name, ctx: ctx)
                _ = try input.checkedTokenCount(engine, path: "documents[\(i)]")
                inputs.append(input)
            } catch var e as ResponseError {
                e.message = "documents[\(i)]: " + e.message
                if case .object(var data)? = e.data, data["path"] != nil {
                    let path = data["path"]?.stringValue ?? ""
                    data["path"] = .string("documents[\(i)]" + (path == "(root)" || path.hasPrefix("documents[") ? "" : "." + path))
                    e.data = .object(data)
                }
                throw e
            }
        }
        return inputs
    }

    /// The documents' contents, and the request's settings with each document's title and
    /// uri but not its text.
    static func cacheKey(_ p: AnalyzeCompare.Params, inputs: [AnalysisInput], engine: any LanguageModel) -> AnalysisCache.Key {
        var settings = (try? JSONValue(encoding: p))?.objectValue ?? JSONObject()
        settings["workDoneToken"] = nil
        settings["refresh"] = nil
        settings["documents"] = .array(p.documents.map { d in
            var o = JSONObject()
            if let t = d.title { o["title"] = .string(t) }
            if let u = d.uri { o["uri"] = .string(u) }
            return .object(o)
        })
        return AnalysisCache.Key(method: AnalyzeCompare.name, content: inputs.map(\.contentHash).joined(separator: ","), settings: settings,
                                 language: inputs[0].language.language, model: engine.identity, documents: inputs.map(\.contentHash),
                                 modelName: engine.name)
    }

    /// Map: one summary per document (analysis/summarize, cached and shared; sequential:
    /// each may fill the context), as the digest the comparison reads and the result's
    /// document entry.
    static func summarizeEach(_ p: AnalyzeCompare.Params, titles: [String], inputs: [AnalysisInput],
                              ctx: RequestContext) async throws -> (digests: [String], documents: [JSONValue], usage: Usage) {
        var usage = Usage.zero
        var digests: [String] = []
        var documents: [JSONValue] = []
        let n = inputs.count
        for (i, d) in p.documents.enumerated() {
            try Task.checkCancellation()
            let sub = ctx.with(progress: ctx.progress.remapped((80 * i / n)...(80 * (i + 1) / n), part: "document-\(i)"))
            var params = Summarize.Params(Summarize.Input(text: d.text, uri: d.uri, language: inputs[0].language.language))
            params.languageFallback = p.languageFallback  // a kept language is kept in each summary too
            params.temperature = p.temperature
            params.topP = p.topP
            params.topK = p.topK
            params.minP = p.minP
            params.refresh = p.refresh
            params.seed = p.seed
            params.verify = p.verify
            params.maxAttempts = p.maxAttempts
            let s = try await Summaries.summarize(params, sub)
            if !s.cached { usage = usage + s.usage }
            digests.append("Document \"\(titles[i])\": \(s.summary)\nTopics: \(s.mainTopics.joined(separator: "; "))")
            var doc: JSONObject = ["title": .string(titles[i]), "contentHash": .string(inputs[i].contentHash), "chunks": .int(s.chunks)]
            if let uri = d.uri { doc["uri"] = .string(uri) }
            documents.append(.object(doc))
        }
        return (digests, documents, usage)
    }

    /// Reduce: one schema-guided call over the summaries.
    static func compareSummaries(_ digests: [String], language first: AnalysisInput, engine: any LanguageModel, options: ResolvedOptions,
                                 titles: [String], ctx: RequestContext) async throws -> (draft: JSONValue, usage: Usage) {
        try Task.checkCancellation()
        let n = digests.count
        ctx.progress.report("comparing \(n) documents", 82, phase: .reduce)
        var o = options
        o.maxTokens = 300 + 90 * n
        let messages = [
            ChatMessage(.system, AnalysisPrompt.system),
            ChatMessage(.user, "Summaries of \(n) documents:\n\n\(digests.joined(separator: "\n\n"))\n\n---\n\(task) Write in \(first.languageName)."),
        ]
        let out = try await Generation.run(engine, prompt: engine.render(messages), schema: schema(titles), options: o,
                                           progress: ctx.progress.scaled(82...99, expectedChars: 1200))
        return (out.json ?? [:], out.usage)
    }

    /// The comparison's fields from the draft: common themes checked (labels and repeats
    /// removed), one insight per title, every title once in the order.
    static func verified(_ draft: JSONValue, titles: [String], verify: Bool) -> JSONObject {
        var content = JSONObject()
        // verify: false: what the item rules find is proposed, not done.
        let themes = ListItemRules.repair(draft["commonThemes"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                                          field: .init("commonThemes", .phrase, minItems: 1),
                                          labels: ["commonThemes", "evolution", "uniqueInsights", "recommendedOrder", "narrative"] + titles, names: [],
                                          mode: verify ? .repair : .propose)
        content["commonThemes"] = .array(themes.value.map { .string($0) })
        content["verification"] = try? JSONValue(encoding: Verification(checked: themes.findings))
        content["evolution"] = draft["evolution"] ?? ""
        content["uniqueInsights"] = .array(titles.map { t in
            ["document": .string(t), "insight": draft["uniqueInsights"]?[t] ?? ""]
        })
        content["recommendedOrder"] = .array(order(draft["recommendedOrder"]?.arrayValue?.compactMap(\.stringValue) ?? [], titles).map { .string($0) })
        content["narrative"] = draft["narrative"] ?? ""
        return content
    }

    /// Titles as given (else the uri, else "Document N"), made distinct.
    static func uniqueTitles(_ docs: [CompareDocument]) -> [String] {
        var seen = Set<String>()
        return docs.enumerated().map { i, d in
            let base = (d.title ?? d.uri ?? "Document \(i + 1)").trimmingCharacters(in: .whitespacesAndNewlines)
            var t = base.isEmpty ? "Document \(i + 1)" : base
            var k = 2
            while !seen.insert(t).inserted {
                t = "\(base) (\(k))"
                k += 1
            }
            return t
        }
    }

    /// The model's order with repeats removed and any missing title appended in input order.
    static func order(_ proposed: [String], _ titles: [String]) -> [String] {
        var out: [String] = []
        for t in proposed where titles.contains(t) && !out.contains(t) { out.append(t) }
        for t in titles where !out.contains(t) { out.append(t) }
        return out
    }

    static func schema(_ titles: [String]) -> JSONValue {
        let n = titles.count
        var insights = JSONObject()
        for t in titles { insights[t] = ["type": "string", "minLength": 5, "maxLength": 200] }
        let titleValues = JSONValue.array(titles.map { .string($0) })
        return [
            "type": "object",
            "properties": [
                "commonThemes": ["type": "array", "items": ["type": "string", "minLength": 3, "maxLength": 80], "minItems": 1, "maxItems": 5],
                "evolution": ["type": "string", "minLength": 10, "maxLength": 400],
                "uniqueInsights": ["type": "object", "properties": .object(insights), "required": titleValues, "additionalProperties": false],
                "recommendedOrder": ["type": "array", "items": ["type": "string", "enum": titleValues], "minItems": .int(n), "maxItems": .int(n)],
                "narrative": ["type": "string", "minLength": 10, "maxLength": 500],
            ],
            "required": ["commonThemes", "evolution", "uniqueInsights", "recommendedOrder", "narrative"],
            "additionalProperties": false,
        ]
    }
}

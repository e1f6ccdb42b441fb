import Foundation
import ParlanceInProcess
import ParlanceJSON
import ParlanceProtocol

/// `parlance mcp`'s tools: each is one of Parlance's methods, and its input and output
/// schemas are that method's params and result schemas (from the Swift types, like the
/// published spec), with `path` beside `uri` and `text` for the document, and without
/// what MCP carries itself (`workDoneToken`: `_meta.progressToken`).
struct MCPToolSpec: Sendable {
    let name: String
    let title: String
    let description: String
    let inputSchema: JSONValue
    let outputSchema: JSONValue
    /// The method to call for these (prepared) arguments.
    let method: @Sendable (JSONObject) -> String
    /// The text rendering of the method's result, beside it as structured content.
    let render: @Sendable (JSONValue) -> String

    static let pathProperty: JSONValue = [
        "type": "string", "minLength": 1,
        "description": "A file to read (SRT, WebVTT or plain text, detected as document/open detects them), instead of uri or text; it becomes an open document (a resource).",
    ]

    /// `schema` without `drop`, with `path` (and `uri`/`text` no longer required: one of the three is).
    static func input(_ schema: JSONValue, drop: Set<String> = ["workDoneToken"], path: Bool = true) -> JSONValue {
        guard case .object(var o) = schema, var props = schema["properties"]?.objectValue else { return schema }
        for d in drop { props[d] = nil }
        if path { props["path"] = pathProperty }
        o["properties"] = .object(props)
        let required = (schema["required"]?.arrayValue ?? []).filter { r in
            guard let n = r.stringValue else { return false }
            return !drop.contains(n) && !(path && (n == "text" || n == "uri"))
        }
        o["required"] = required.isEmpty ? nil : .array(required)
        o["title"] = nil
        return .object(o)
    }

    /// The command line's analyses, each named as its method is (`worthIt` for `analysis/worthIt`).
    static let analyses: [(kind: String, method: any RPCMethod.Type)] = AnalysisKinds.all.map {
        (String($0.method.name.split(separator: "/").last!), $0.method)
    }

    static let document = " Give the document as path (a file), uri (a document already open, or a file:// URI) or text."

    static let all: [MCPToolSpec] = [
        MCPToolSpec(name: "summarize", title: "Summarize a transcript",
                    description: "Summarizes a transcript or document with a local model: a summary, its main topics, key takeaways, the audience and engagement; every item checked against the text." + document,
                    inputSchema: input(Summarize.paramsSchema), outputSchema: Summarize.resultSchema,
                    method: { _ in Summarize.name }, render: Render.summary),
        MCPToolSpec(name: "ask", title: "Answer from a document, with citations",
                    description: "Answers a question from a transcript or document, citing the segments (with timestamps) that support the answer; says so when the document does not answer it (found: false). sessionId from a result continues the conversation." + document
                        + " To ask across several documents at once (episodes of a podcast), give them as paths (files) or uris instead: each citation then names its document (uri).",
                    inputSchema: askInput, outputSchema: AskStream.resultSchema,
                    method: { _ in AskStream.name }, render: { r in (r["answer"]?.stringValue ?? "") + "\n" + Render.citations(r) }),
        MCPToolSpec(name: "rewrite", title: "Rewrite text in tones",
                    description: "Rewrites text in one or more tones (formal, casual, empathetic, direct, diplomatic, …) for an audience, keeping every fact (names, numbers, dates, amounts); each variation is checked for its tone and its facts. Give the text as text or path.",
                    inputSchema: input(ComposeVariations.paramsSchema), outputSchema: ComposeVariations.resultSchema,
                    method: { _ in ComposeVariations.name }, render: { Render.variations($0["variations"]?.arrayValue ?? []) }),
        MCPToolSpec(name: "analyze", title: "Structured analysis of a transcript",
                    description: "One analysis of a transcript: kind tags (tags, categories, difficulty), entities (people, organizations, products, locations, resources), highlights (key moments, quotes, action items), content (style, tone, complexity), worthIt (a score with its reasons) or chapters (titled chapters with start and end times covering the whole transcript); instructions focuses any of them." + document,
                    inputSchema: analyzeInput, outputSchema: ["type": "object", "anyOf": .array(analyses.map { $0.method.resultSchema })],
                    method: { args in analyses.first { $0.kind == args["kind"]?.stringValue }?.method.name ?? AnalyzeTags.name },
                    render: Render.analysis),
        MCPToolSpec(name: "compare", title: "Compare documents",
                    description: "Compares two to eight transcripts or documents: common themes, how their positions evolve, each one's unique insights and an order to read them in. Each document is given as path, uri or text.",
                    inputSchema: compareInput, outputSchema: AnalyzeCompare.resultSchema,
                    method: { _ in AnalyzeCompare.name }, render: Render.fields),
        MCPToolSpec(name: "segments", title: "A transcript's segments",
                    description: "The segments of a transcript as Parlance parsed it (SRT, WebVTT or plain text): each one's id, start and end times, speaker and text, a page at a time (offset, limit; nextOffset says where the next page starts), with the plain text and the speakers (each with the other names the transcript used for them). No model is used." + document,
                    inputSchema: input(DocumentSegments.paramsSchema), outputSchema: DocumentSegments.resultSchema,
                    method: { _ in DocumentSegments.name }, render: Render.segments),
    ]

    /// Every analysis's params in one object, with `kind` choosing the analysis.
    static var analyzeInput: JSONValue {
        var props = JSONObject([("kind", ["type": "string", "enum": .array(analyses.map { .string($0.kind) }), "description": "The analysis to run."])])
        for a in analyses {
            for (k, v) in input(a.method.paramsSchema)["properties"]?.objectValue ?? JSONObject() where props[k] == nil { props[k] = v }
        }
        return ["type": "object", "properties": .object(props), "required": ["kind"], "additionalProperties": false]
    }

    /// ask/stream's params with `path`, and `paths` beside `uris` for several documents.
    static var askInput: JSONValue {
        var schema = input(AskStream.paramsSchema)
        if case .object(var o) = schema, var props = o["properties"]?.objectValue {
            props["paths"] = [
                "type": "array", "items": ["type": "string", "minLength": 1], "minItems": 2, "maxItems": .int(AskStream.maxDocuments),
                "description": "Several files to ask across (each read and opened as a document, a resource), instead of uris, path, uri or text.",
            ]
            o["properties"] = .object(props)
            schema = .object(o)
        }
        return schema
    }

    /// analysis/compare's params, each document with `path` too.
    static var compareInput: JSONValue {
        var schema = input(AnalyzeCompare.paramsSchema, path: false)
        if case .object(var o) = schema, var props = o["properties"]?.objectValue, case .object(var docs)? = props["documents"],
           let items = docs["items"] {
            docs["items"] = input(items)
            props["documents"] = .object(docs)
            o["properties"] = .object(props)
            schema = .object(o)
        }
        return schema
    }

    static func named(_ name: String) -> MCPToolSpec? { all.first { $0.name == name } }

    /// The tool as `tools/list` shows it (`outputSchema` from revision 2025-06-18 on).
    func listing(outputSchemas: Bool) -> JSONValue {
        var o = JSONObject([("name", .string(name)), ("title", .string(title)), ("description", .string(description)), ("inputSchema", inputSchema)])
        if outputSchemas { o["outputSchema"] = outputSchema }
        return .object(o)
    }
}

import JSONRPC
import ParlanceDocuments
import ParlanceHash
import ParlanceProtocol

/// `document/open|change|close|list`.
public enum DocumentHandlers {
    public static func open(_ p: DocumentOpen.Params, _ ctx: RequestContext) async throws -> DocumentInfo {
        try await store(p, ctx, requireExisting: false)
    }

    public static func change(_ p: DocumentOpen.Params, _ ctx: RequestContext) async throws -> DocumentInfo {
        try await store(p, ctx, requireExisting: true)
    }

    static func store(_ p: DocumentOpen.Params, _ ctx: RequestContext, requireExisting: Bool) async throws -> DocumentInfo {
        let docs = ctx.services.documents
        let previous = await docs.get(p.uri)
        if requireExisting, previous == nil { throw ErrorMapping.notFound("document", p.uri) }
        let transcript = try AnalysisInput.parse(p.text, format: p.format.flatMap { TranscriptFormat(rawValue: $0.rawValue) })
        let language = p.language ?? LanguageDetector.detect(String(transcript.plainText.prefix(4000))).code
        if LanguageSupport.resolve(language) == nil {
            throw ErrorMapping.unsupportedLanguage(language, supported: LanguageSupport.supported)
        }
        // Token counts come from the default model's tokenizer (its vocabulary alone when
        // it is not loaded).
        let models = ctx.services.models
        let tokens = models.countTokens(models.settings.defaultModel, transcript.plainText)
        let doc = OpenDocument(uri: p.uri, version: (previous?.version ?? 0) + 1, text: p.text, transcript: transcript,
                               contentHash: SHA256.hex(p.text), language: language, tokenCount: tokens)
        try await docs.put(doc)
        return info(doc)
    }

    public static func close(_ p: DocumentClose.Params, _ ctx: RequestContext) async throws -> Empty {
        guard try await ctx.services.documents.remove(p.uri) else { throw ErrorMapping.notFound("document", p.uri) }
        return Empty()
    }

    public static func list(_ p: Empty, _ ctx: RequestContext) async throws -> DocumentList.Result {
        .init(documents: await ctx.services.documents.all.map(info))
    }

    static func info(_ d: OpenDocument) -> DocumentInfo {
        let segs = d.transcript.segments
        return DocumentInfo(
            uri: d.uri, version: d.version, format: DocumentFormat(rawValue: d.transcript.format.rawValue) ?? .text,
            segments: segs.count, durationSeconds: d.transcript.duration, people: d.transcript.people.map(SpeakerInfo.init), tokens: d.tokenCount,
            bytes: d.text.utf8.count, language: d.language ?? "en", contentHash: d.contentHash,
            warnings: d.transcript.warnings.map { ParseWarningInfo(line: $0.line, message: $0.message) })
    }
}

extension SpeakerInfo {
    /// A person of a parsed transcript as the protocol lists them.
    init(_ s: Speaker) { self.init(name: s.name, aliases: s.aliases) }
}

import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// What every analysis works on: the transcript (from `text` or an open document), and
/// the output language after the seed's fallback rules.
public struct AnalysisInput: Sendable {
    public var transcript: ParsedTranscript
    public var contentHash: String
    public var language: LanguageSupport.Resolution
    public var uri: String?
    /// Set when the input is several documents asked about at once (`ask/stream`'s `uris`):
    /// `transcript` is their segments numbered on, and this maps them back.
    var documents: AskDocuments?
    /// The transcript as prompt text: one `[id] SPEAKER: text` line per segment (the
    /// speaker only where it changes), so the model can point at segments by id. Every
    /// analysis of a document starts its prompt with this text: one shared KV prefix.
    public let promptText: String

    public init(transcript: ParsedTranscript, contentHash: String, language: LanguageSupport.Resolution, uri: String?) {
        self.transcript = transcript
        self.contentHash = contentHash
        self.language = language
        self.uri = uri
        promptText = AnalysisInput.render(transcript.segments)
    }

    /// Several documents as one input: their segments renumbered, the prompt text under each one's title.
    init(documents: AskDocuments, contentHash: String, language: LanguageSupport.Resolution, format: TranscriptFormat) {
        transcript = documents.transcript(format: format)
        self.contentHash = contentHash
        self.language = language
        uri = nil
        self.documents = documents
        promptText = documents.render(transcript.segments)
    }

    /// The segments that open a transcript (one per document): a welcome, never the answer quoted.
    var openings: Set<Int> {
        documents?.openings ?? Set(transcript.segments.first.map { [$0.id] } ?? [])
    }

    /// Analyses that read the whole transcript refuse inputs above this many tokens (about
    /// 15 hours of speech): ask/stream, which reads only retrieved segments, still works.
    public static let maxTokens = 200_000

    /// Segments as prompt lines: `[12] MAYA: text`, then `[13] text` while MAYA goes on.
    public static func render(_ segments: some Sequence<Segment>) -> String {
        var out = ""
        var speaker: String? = nil
        var first = true
        for s in segments {
            if !first { out += "\n" }
            first = false
            out += "[\(s.id)] "
            if let sp = s.speaker, sp != speaker { out += sp + ": " }
            speaker = s.speaker
            out += s.text
        }
        return out
    }

    /// The segment with this id (ids are 1-based and in document order).
    public func segment(_ id: Int) -> Segment? {
        let segs = transcript.segments
        if id >= 1, id <= segs.count, segs[id - 1].id == id { return segs[id - 1] }
        return segs.first { $0.id == id }
    }

    /// The transcript's token count; throws `inputTooLong` above `maxTokens`.
    public func checkedTokenCount(_ engine: any LanguageModel, path: String) throws -> Int {
        // A cheap bound first, so a huge text is refused without tokenizing all of it.
        let bytes = promptText.utf8.count
        let n = bytes > AnalysisInput.maxTokens * 12 ? bytes / 4 : engine.countTokens(promptText)
        if n > AnalysisInput.maxTokens {
            throw ResponseError.invalidParams(
                "the transcript is about \(n) tokens; analyses that read the whole transcript accept at most \(AnalysisInput.maxTokens) (ask/stream reads only the relevant segments)",
                data: ["path": .string(path), "keyword": "maxLength", "error": "inputTooLong", "tokens": .int(n), "limit": .int(AnalysisInput.maxTokens)])
        }
        return n
    }

    public var languageName: String { LanguageSupport.displayName(language.language) }

    /// `provenance.languageRisk` when the language was kept though the model does not write it well.
    public var languageRisk: LanguageRisk? { language.risk(source: languageSource) }
    /// Where the model's languages came from (for `languageRisk`).
    public var languageSource: LanguageSource = .default

    /// `model`: the request's model (a registry name), whose languages the output language
    /// is resolved against (`model/status`'s `languages`).
    public static func resolve(text: String?, uri: String?, language: String?, fallback: LanguageFallback?, model: String,
                               ctx: RequestContext) async throws -> AnalysisInput {
        try checkSource(text: text, uri: uri)
        let languages = ctx.services.models.languages(model)
        var input: AnalysisInput
        if let text {
            let parsed = try parse(text)
            input = AnalysisInput(transcript: parsed, contentHash: SHA256Hex.of(text),
                                  language: try resolveLanguage(language, parsed, languages: languages, fallback: fallback), uri: nil)
        } else {
            let uri = uri ?? ""
            guard let doc = await ctx.document(uri) else { throw ErrorMapping.notFound("document", uri) }
            input = AnalysisInput(transcript: doc.transcript, contentHash: doc.contentHash,
                                  language: try resolveLanguage(language ?? doc.language, doc.transcript, languages: languages, fallback: fallback),
                                  uri: uri)
        }
        input.languageSource = languages.source
        return input
    }

    /// Exactly one of `text` and `uri`, else a precise -32602.
    static func checkSource(text: String?, uri: String?) throws {
        if text == nil, uri == nil {
            throw ResponseError.invalidParams("give either 'text' or 'uri'", data: ["path": "(root)", "keyword": "required"])
        }
        if text != nil, uri != nil {
            throw ResponseError.invalidParams("give either 'text' or 'uri', not both", data: ["path": "(root)", "keyword": "oneOf"])
        }
    }

    static func parse(_ text: String, format: TranscriptFormat? = nil) throws -> ParsedTranscript {
        do {
            return try TranscriptParser.parse(text, format: format)
        } catch {
            throw Documents.error(error)
        }
    }

    static func resolveLanguage(_ requested: String?, _ t: ParsedTranscript, languages: ModelLanguages,
                                fallback: LanguageFallback?) throws -> LanguageSupport.Resolution {
        try OutputLanguage.resolve(requested ?? LanguageDetector.detect(String(t.plainText.prefix(4000))).code, languages: languages, fallback: fallback)
    }
}

/// The system prompt shared by every analysis, so a document's prompt prefix (system +
/// transcript) is evaluated once and reused across methods by the engine's prefix cache.
enum AnalysisPrompt {
    static let system = """
        You are Parlance, a precise assistant that analyses transcripts. Use only what the transcript says. \
        Answer with JSON only.
        """

    /// The transcript first, then the task line: the method's task, the user's
    /// `instructions` (request params, so the transcript's tokens stay a prefix shared by
    /// every analysis, with or without instructions), and the output language.
    static func messages(_ input: AnalysisInput, body: String? = nil, task: String, instructions: String? = nil) -> [ChatMessage] {
        let focus = instructions.map { " Also follow the user's instructions: \($0)" } ?? ""
        return [ChatMessage(.system, system),
                ChatMessage(.user, "Transcript:\n\(body ?? input.promptText)\n\n---\n\(task)\(focus) Write in \(input.languageName).")]
    }
}

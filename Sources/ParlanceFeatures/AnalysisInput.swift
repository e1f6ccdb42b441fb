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

    /// The transcript as prompt text: one line per segment, speaker-labelled.
    public var promptText: String {
        transcript.segments.map { s in s.speaker.map { "\($0): \(s.text)" } ?? s.text }.joined(separator: "\n")
    }

    public var languageName: String { Languages.name(language.language) }

    public static func resolve(text: String?, uri: String?, language: String?, services: Services) async throws -> AnalysisInput {
        switch (text, uri) {
        case (nil, nil):
            throw ResponseError.invalidParams("give either 'text' or 'uri'", data: ["path": "(root)", "keyword": "required"])
        case (.some, .some):
            throw ResponseError.invalidParams("give either 'text' or 'uri', not both", data: ["path": "(root)", "keyword": "oneOf"])
        case (let text?, nil):
            let parsed = try parse(text)
            return try AnalysisInput(transcript: parsed, contentHash: SHA256Hex.of(text), language: resolveLanguage(language, parsed), uri: nil)
        case (nil, let uri?):
            guard let doc = await services.documents.get(uri) else { throw ErrorMapping.notFound("document", uri) }
            return try AnalysisInput(transcript: doc.transcript, contentHash: doc.contentHash,
                                     language: resolveLanguage(language ?? doc.language, doc.transcript), uri: uri)
        }
    }

    static func parse(_ text: String, format: TranscriptFormat? = nil) throws -> ParsedTranscript {
        do {
            return try TranscriptParser.parse(text, format: format)
        } catch {
            throw Documents.error(error)
        }
    }

    static func resolveLanguage(_ requested: String?, _ t: ParsedTranscript) throws -> LanguageSupport.Resolution {
        let tag = requested ?? LanguageDetector.detect(String(t.plainText.prefix(4000))).code
        guard let r = LanguageSupport.resolve(tag) else {
            throw ErrorMapping.unsupportedLanguage(tag, supported: LanguageSupport.supported)
        }
        return r
    }
}

enum Languages {
    static func name(_ tag: String) -> String {
        let names = ["en": "English", "fr": "French", "de": "German", "it": "Italian", "pt": "Portuguese", "es": "Spanish",
                     "zh": "Chinese", "ja": "Japanese", "ko": "Korean"]
        let base = String(tag.split(separator: "-").first ?? "en")
        var n = names[base] ?? "English"
        if tag == "en-gb" { n = "British English" }
        if tag == "pt-br" { n = "Brazilian Portuguese" }
        if tag == "zh-hans" { n = "Simplified Chinese" }
        return n
    }
}

/// The system prompt shared by every analysis, so a document's prompt prefix (system +
/// transcript) is evaluated once and reused across methods by the engine's prefix cache.
enum AnalysisPrompt {
    static let system = """
        You are Parlance, a precise assistant that analyses transcripts. Use only what the transcript says. \
        Answer with JSON only.
        """

    static func messages(_ input: AnalysisInput, body: String? = nil, task: String) -> [ChatMessage] {
        [ChatMessage(.system, system),
         ChatMessage(.user, "Transcript:\n\(body ?? input.promptText)\n\n---\n\(task) Write in \(input.languageName).")]
    }
}

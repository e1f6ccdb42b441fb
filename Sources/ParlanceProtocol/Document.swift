import ParlanceJSON
import ParlanceSchema

/// Per-document transcript cache. A document is parsed once (SRT, WebVTT or plain text)
/// into segments with times; analyses and questions refer to it by `uri`.
public enum DocumentFormat: String, Codable, Sendable, SchemaEnum { case srt, vtt, text }

public struct ParseWarningInfo: Codable, Sendable, Hashable, Schematic {
    public var line: Int
    public var message: String
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
}

public struct DocumentInfo: Codable, Sendable, Schematic {
    public var uri: String
    public var version: Int
    public var format: DocumentFormat
    public var segments: Int
    public var durationSeconds: Double?
    /// Each person once, by canonical name (the first full form the transcript used).
    public var speakers: [String]
    /// The same people with the other labels the transcript used for them.
    public var people: [SpeakerInfo]
    public var tokens: Int?
    public var bytes: Int
    public var language: String
    public var contentHash: String
    public var warnings: [ParseWarningInfo]
    public init(uri: String, version: Int, format: DocumentFormat, segments: Int, durationSeconds: Double?, people: [SpeakerInfo],
                tokens: Int?, bytes: Int, language: String, contentHash: String, warnings: [ParseWarningInfo]) {
        self.uri = uri
        self.version = version
        self.format = format
        self.segments = segments
        self.durationSeconds = durationSeconds
        self.speakers = people.map(\.name)
        self.people = people
        self.tokens = tokens
        self.bytes = bytes
        self.language = language
        self.contentHash = contentHash
        self.warnings = warnings
    }
    public static let schemaHints: [String: SchemaHint] = [
        "speakers": SchemaHint(description: "Each person once, in order of first appearance, by the name segments carry: a first name used after a full name (\"Bekah\" after \"Bekah Hawrot Weigel\") is the same person, listed once under the full name."),
        "people": SchemaHint(description: "`speakers` with the other labels the transcript used for each person (`aliases`), as document/segments lists them."),
        "tokens": SchemaHint(description: "Token count from the model's own tokenizer (absent when no model is loaded)."),
        "language": SchemaHint(description: "Detected (or given) language of the text."),
        "warnings": SchemaHint(description: "Malformed cues, with 1-based line numbers; parsing continued past them."),
    ]
}

public enum DocumentOpen: RPCMethod {
    public static let name = "document/open"
    public static let summary = "Open a transcript (SRT, WebVTT or plain text) and parse it into timed segments."
    public struct Params: Codable, Sendable, Schematic {
        public var uri: String
        public var text: String
        public var format: DocumentFormat?
        public var language: String?
        public static let schemaHints: [String: SchemaHint] = [
            "uri": SchemaHint(description: "Any client-chosen identifier, e.g. file:///talk.srt.", minLength: 1, maxLength: 2048),
            "format": SchemaHint(description: "Default: detected from the text."),
        ]
    }
    public typealias Result = DocumentInfo
}

public enum DocumentChange: RPCMethod {
    public static let name = "document/change"
    public static let summary = "Replace an open document's text; cached analyses of the old text no longer apply."
    public static let errors: [ProtocolError] = [.notFound]
    public typealias Params = DocumentOpen.Params
    public typealias Result = DocumentInfo
}

public enum DocumentClose: RPCMethod {
    public static let name = "document/close"
    public static let summary = "Close a document."
    public static let errors: [ProtocolError] = [.notFound]
    public struct Params: Codable, Sendable, Schematic { public var uri: String }
    public typealias Result = Empty
}

public enum DocumentList: RPCMethod {
    public static let name = "document/list"
    public static let summary = "The open documents."
    public typealias Params = Empty
    public struct Result: Codable, Sendable, Schematic {
        public var documents: [DocumentInfo]
        public init(documents: [DocumentInfo]) { self.documents = documents }
    }
}

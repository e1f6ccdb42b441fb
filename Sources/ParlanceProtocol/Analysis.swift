import ParlanceJSON
import ParlanceSchema

/// Structured analyses of a transcript (the podcast seed's EpisodeTags, EpisodeEntities,
/// EpisodeHighlights, EpisodeContentAnalysis, MultiEpisodeAnalysis, and WorthIt's
/// analysis). Fields that point into the transcript carry segment (cue) ids and times taken
/// from the parsed segments, never from the model's text.

// What the analyses share: their params, segment references and result hints. Each method
// has a file of its own: Tags, Entities, Highlights, ContentAnalysis, Compare, WorthIt.

/// Params of the single-document analyses.
public typealias AnalysisParams = GenerationParams<DocumentInput>

/// A document to analyse: by `text` or by `uri` (an open document), and the output language.
public struct DocumentInput: GenerationInput {
    public var text: String?
    public var uri: String?
    public var language: String?
    public var languageFallback: LanguageFallback?
    public var instructions: String?
    public init(text: String? = nil, uri: String? = nil, language: String? = nil, instructions: String? = nil) {
        self.text = text
        self.uri = uri
        self.language = language
        self.instructions = instructions
    }
    public static let schemaHints: [String: SchemaHint] = [
        "text": SchemaHint(description: "The transcript (SRT and WebVTT are recognised; plain text is split into paragraphs). Give text or uri."),
        "uri": SchemaHint(description: "An open document (document/open)."),
        "language": SchemaHint(description: "Output language (BCP-47). Default: detected from the input; one the model does not write well falls back, reported in fallbackFrom (see languageFallback)."),
        "languageFallback": .languageFallback,
        "instructions": .analysisInstructions,
        "workDoneToken": SchemaHint(description: "LSP work-done token: progress percentages and streamed output arrive as $/progress."),
    ]
}

extension SchemaHint {
    /// `instructions` on every single-document analysis: said once, limited as compose's are.
    public static let analysisInstructions = SchemaHint(description: """
        What to focus on or how to write, in your words, e.g. "focus on what is said about pricing" (at most 1000 characters). \
        Added to the task after the transcript, so the transcript's evaluated prefix stays shared with other analyses; part of \
        the cache key; list items that only repeat it fail their checks. Blank is the same as none.
        """, maxLength: 1000)
}

/// A segment of the transcript: its id (1-based, document order) and times in seconds
/// (absent for plain text).
public struct SegmentRef: Codable, Sendable, Hashable, Schematic {
    public var segmentId: Int
    public var start: Double?
    public var end: Double?
    public var startOffset: Int?
    public var endOffset: Int?
    public init(segmentId: Int, start: Double?, end: Double?, startOffset: Int? = nil, endOffset: Int? = nil) {
        self.segmentId = segmentId
        self.start = start
        self.end = end
        self.startOffset = startOffset
        self.endOffset = endOffset
    }
    public static let schemaHints: [String: SchemaHint] = sourceOffsetHints
}

/// Where a plain-text segment lies in the document's text (transcripts have times instead).
public let sourceOffsetHints: [String: SchemaHint] = [
    "startOffset": SchemaHint(description: "Plain text only: where the text starts in the document as sent, in UTF-16 code units (LSP's position encoding)."),
    "endOffset": SchemaHint(description: "Plain text only: where the text ends (exclusive) in the document as sent, in UTF-16 code units."),
]

let analysisMetaHints: [String: SchemaHint] = [
    "language": SchemaHint(description: "The output language (one of the supported languages)."),
    "fallbackFrom": SchemaHint(description: "The requested or detected language, when it was not supported and `language` was used instead."),
    "chunks": SchemaHint(description: "Parts of the transcript the model read separately (1 = the whole transcript in one pass)."),
    "cached": SchemaHint(description: "True when served from the analysis cache."),
    "verification": SchemaHint(description: "The result checked against the transcript: no duplicate or near-duplicate list items, no prompt labels or bare names where a sentence is asked for, a targetAudience that describes people. Failing items are dropped and the list topped up from another attempt (another seed, a stricter prompt), up to maxAttempts."),
]

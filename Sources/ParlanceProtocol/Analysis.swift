import ParlanceJSON
import ParlanceSchema

/// Structured analyses of a transcript (the podcast seed's EpisodeTags, EpisodeEntities,
/// EpisodeHighlights, EpisodeContentAnalysis, MultiEpisodeAnalysis, and WorthIt's
/// analysis). Fields that point into the transcript carry segment (cue) ids and times taken
/// from the parsed segments, never from the model's text.

/// Params of the single-document analyses.
public struct AnalysisParams: Codable, Sendable, Schematic {
    /// Either `text` or `uri` (an open document).
    public var text: String?
    public var uri: String?
    public var language: String?
    public var temperature: Double?
    public var seed: Int?
    public var deterministic: Bool? = nil
    public var verify: Bool? = nil
    public var maxAttempts: Int? = nil
    public var workDoneToken: JSONValue?
    public var model: String? = nil
    public init(text: String? = nil, uri: String? = nil, language: String? = nil, temperature: Double? = nil, seed: Int? = nil,
                workDoneToken: JSONValue? = nil) {
        self.text = text
        self.uri = uri
        self.language = language
        self.temperature = temperature
        self.seed = seed
        self.workDoneToken = workDoneToken
    }
    public static let schemaHints: [String: SchemaHint] = [
        "model": .model,
        "text": SchemaHint(description: "The transcript (SRT and WebVTT are recognised; plain text is split into paragraphs). Give text or uri."),
        "uri": SchemaHint(description: "An open document (document/open)."),
        "language": SchemaHint(description: "Output language (BCP-47). Default: detected from the input; unsupported ones fall back, reported in fallbackFrom."),
        "temperature": SchemaHint(minimum: 0, maximum: 2),
        "seed": SchemaHint(minimum: 0, maximum: 4_294_967_295),
        "deterministic": .deterministic,
        "verify": .verify,
        "maxAttempts": .maxAttempts,
        "workDoneToken": SchemaHint(description: "LSP work-done token: progress percentages and streamed output arrive as $/progress."),
    ]
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

let metaHints: [String: SchemaHint] = [
    "language": SchemaHint(description: "The output language (one of the supported languages)."),
    "fallbackFrom": SchemaHint(description: "The requested or detected language, when it was not supported and `language` was used instead."),
    "chunks": SchemaHint(description: "Parts of the transcript the model read separately (1 = the whole transcript in one pass)."),
    "cached": SchemaHint(description: "True when served from the analysis cache."),
    "verification": SchemaHint(description: "The result checked against the transcript: no duplicate or near-duplicate list items, no prompt labels or bare names where a sentence is asked for, a targetAudience that describes people. Failing items are dropped and the list topped up from another attempt (another seed, a stricter prompt), up to maxAttempts."),
]

public enum Difficulty: String, Codable, Sendable, SchemaEnum { case beginner, intermediate, advanced }

public enum AnalyzeTags: RPCMethod {
    public static let name = "analysis/tags"
    public static let summary = "Tags, categories and difficulty of a transcript (the seed's EpisodeTags)."
    public static let errors: [ProtocolError] = [.modelUnavailable, .generationFailed, .remoteFailed, .notFound]
    public typealias Params = AnalysisParams
    public struct Result: Codable, Sendable, GeneratedResult {
        public var tags: [String]
        public var categories: [String]
        public var difficulty: Difficulty
        public var language: String
        public var fallbackFrom: String?
        public var chunks: Int
        public var cached: Bool
        public var verification: Verification
        public var usage: Usage
        public var provenance: Provenance
        public static let generatedFields = ["tags", "categories", "difficulty"]
        public static let schemaHints: [String: SchemaHint] = metaHints.merging([
            "tags": SchemaHint(description: "3-8 short lowercase tags.", minItems: 3, maxItems: 8, minLength: 2, maxLength: 40),
            "categories": SchemaHint(description: "1-3 broad categories (e.g. Technology, Business).", minItems: 1, maxItems: 3, minLength: 3, maxLength: 40),
        ]) { a, _ in a }
    }
}

/// A named entity and every segment whose text mentions it.
public struct NamedEntity: Codable, Sendable, Hashable, Schematic {
    public var name: String
    public var occurrences: [SegmentRef]
    public static let schemaHints: [String: SchemaHint] = [
        "occurrences": SchemaHint(description: "Segments whose text contains the name (case- and accent-insensitive, whole words), in order."),
    ]
}

public enum AnalyzeEntities: RPCMethod {
    public static let name = "analysis/entities"
    public static let summary = "People, organizations, products, locations and resources named in a transcript, each with the segments where it occurs."
    public static let errors: [ProtocolError] = [.modelUnavailable, .generationFailed, .remoteFailed, .notFound]
    public typealias Params = AnalysisParams
    public struct Result: Codable, Sendable, Schematic {
        public var people: [NamedEntity]
        public var organizations: [NamedEntity]
        public var products: [NamedEntity]
        public var locations: [NamedEntity]
        public var resources: [NamedEntity]
        public var unverified: [String]
        public var language: String
        public var fallbackFrom: String?
        public var chunks: Int
        public var cached: Bool
        public var verification: Verification
        public var usage: Usage
        public var provenance: Provenance
        public static let schemaHints: [String: SchemaHint] = metaHints.merging([
            "resources": SchemaHint(description: "Books, papers, talks, websites and tools mentioned."),
            "unverified": SchemaHint(description: "Names the model proposed that occur nowhere in the transcript: dropped from the lists above."),
        ]) { a, _ in a }
    }
}

/// A key moment: a real segment (id, times and text from the transcript) and a title.
public struct KeyMoment: Codable, Sendable, Hashable, Schematic {
    public var title: String
    public var segmentId: Int
    public var start: Double?
    public var end: Double?
    public var speaker: String?
    public var text: String
    public var startOffset: Int?
    public var endOffset: Int?
    public static let schemaHints: [String: SchemaHint] = sourceOffsetHints.merging([
        "text": SchemaHint(description: "The segment's text, verbatim."),
    ]) { a, _ in a }
}

/// A quotation: whole segments of the transcript, verbatim.
public struct NotableQuote: Codable, Sendable, Hashable, Schematic {
    public var text: String
    public var speaker: String?
    public var segmentIds: [Int]
    public var start: Double?
    public var end: Double?
    public var startOffset: Int?
    public var endOffset: Int?
    public static let schemaHints: [String: SchemaHint] = sourceOffsetHints
}

/// Where a plain-text segment lies in the document's text (transcripts have times instead).
public let sourceOffsetHints: [String: SchemaHint] = [
    "startOffset": SchemaHint(description: "Plain text only: where the text starts in the document as sent, in UTF-16 code units (LSP's position encoding)."),
    "endOffset": SchemaHint(description: "Plain text only: where the text ends (exclusive) in the document as sent, in UTF-16 code units."),
]

public enum AnalyzeHighlights: RPCMethod {
    public static let name = "analysis/highlights"
    public static let summary = "Key moments (with times from real segments), verbatim quotes and action items (the seed's EpisodeHighlights)."
    public static let errors: [ProtocolError] = [.modelUnavailable, .generationFailed, .remoteFailed, .notFound]
    public typealias Params = AnalysisParams
    public struct Result: Codable, Sendable, Schematic {
        public var keyMoments: [KeyMoment]
        public var quotes: [NotableQuote]
        public var actionItems: [String]
        public var language: String
        public var fallbackFrom: String?
        public var chunks: Int
        public var cached: Bool
        public var verification: Verification
        public var usage: Usage
        public var provenance: Provenance
        public static let schemaHints: [String: SchemaHint] = metaHints.merging([
            "keyMoments": SchemaHint(description: "In transcript order; the model picks segment ids from this document only."),
            "quotes": SchemaHint(description: "Each the full text of one or more consecutive segments (extended to the end of the sentence)."),
        ]) { a, _ in a }
    }
}

public enum ContentStyle: String, Codable, Sendable, SchemaEnum {
    case conversational, interview, lecture, tutorial, narrative, debate, panel, monologue, news
}

public enum ContentTone: String, Codable, Sendable, SchemaEnum {
    case casual, friendly, formal, enthusiastic, serious, humorous, informative, critical, inspirational, neutral
}

public enum ComplexityLevel: String, Codable, Sendable, SchemaEnum { case low, medium, high }

public enum AnalyzeContent: RPCMethod {
    public static let name = "analysis/content"
    public static let summary = "Style, tone and complexity of a transcript (the seed's EpisodeContentAnalysis)."
    public static let errors: [ProtocolError] = [.modelUnavailable, .generationFailed, .remoteFailed, .notFound]
    public typealias Params = AnalysisParams
    public struct Result: Codable, Sendable, GeneratedResult {
        public var style: ContentStyle
        public var tone: ContentTone
        public var complexity: ComplexityLevel
        public var notes: String
        public var language: String
        public var fallbackFrom: String?
        public var chunks: Int
        public var cached: Bool
        public var verification: Verification
        public var usage: Usage
        public var provenance: Provenance
        public static let generatedFields = ["style", "tone", "complexity", "notes"]
        public static let schemaHints: [String: SchemaHint] = metaHints.merging([
            "complexity": SchemaHint(description: "How demanding the content is for a listener."),
            "notes": SchemaHint(description: "One or two sentences on style, tone and complexity.", minLength: 10, maxLength: 300),
        ]) { a, _ in a }
    }
}

// MARK: - Several documents

public struct CompareDocument: Codable, Sendable, Schematic {
    public var uri: String?
    public var text: String?
    public var title: String?
    public init(uri: String? = nil, text: String? = nil, title: String? = nil) {
        self.uri = uri
        self.text = text
        self.title = title
    }
    public static let schemaHints: [String: SchemaHint] = [
        "title": SchemaHint(description: "How the result names this document. Default: its uri, or \"Document N\".", minLength: 1, maxLength: 120),
    ]
}

public struct DocumentInsight: Codable, Sendable, Hashable, Schematic {
    public var document: String
    public var insight: String
}

public struct ComparedDocument: Codable, Sendable, Hashable, Schematic {
    public var title: String
    public var uri: String?
    public var contentHash: String
    public var chunks: Int
}

public enum AnalyzeCompare: RPCMethod {
    public static let name = "analysis/compare"
    public static let summary = "Compare several transcripts: common themes, evolution, unique insights per document, recommended order, narrative (the seed's MultiEpisodeAnalysis)."
    public static let errors: [ProtocolError] = [.modelUnavailable, .generationFailed, .remoteFailed, .notFound]
    public struct Params: Codable, Sendable, Schematic {
        public var documents: [CompareDocument]
        public var language: String?
        public var temperature: Double?
        public var seed: Int?
        public var deterministic: Bool? = nil
        public var verify: Bool? = nil
        public var maxAttempts: Int? = nil
        public var workDoneToken: JSONValue?
        public var model: String? = nil
        public static let schemaHints: [String: SchemaHint] = [
            "documents": SchemaHint(description: "2-8 documents, each by uri or text.", minItems: 2, maxItems: 8),
            "language": AnalysisParams.schemaHints["language"]!,
            "model": .model,
            "temperature": SchemaHint(minimum: 0, maximum: 2),
            "seed": SchemaHint(minimum: 0, maximum: 4_294_967_295),
            "deterministic": .deterministic,
            "verify": .verify,
            "maxAttempts": .maxAttempts,
        ]
    }
    public struct Result: Codable, Sendable, Schematic {
        public var commonThemes: [String]
        public var evolution: String
        public var uniqueInsights: [DocumentInsight]
        public var recommendedOrder: [String]
        public var narrative: String
        public var documents: [ComparedDocument]
        public var language: String
        public var fallbackFrom: String?
        public var cached: Bool
        public var verification: Verification
        public var usage: Usage
        public var provenance: Provenance
        public static let schemaHints: [String: SchemaHint] = metaHints.merging([
            "uniqueInsights": SchemaHint(description: "One per document, in the order given."),
            "recommendedOrder": SchemaHint(description: "Every document title exactly once."),
            "documents": SchemaHint(description: "The documents compared (each summarized first; summaries are cached)."),
        ]) { a, _ in a }
    }
}

// MARK: - WorthIt

public enum CommentCategory: String, Codable, Sendable, SchemaEnum { case humor, insightful, controversial, spam, neutral }

public struct CommentTheme: Codable, Sendable, Hashable, Schematic {
    public var theme: String
    public var exampleComment: String
    public var exampleCommentIndex: Int
    public static let schemaHints: [String: SchemaHint] = [
        "exampleComment": SchemaHint(description: "One of the given comments, verbatim."),
        "exampleCommentIndex": SchemaHint(description: "Its 0-based index in `comments`."),
    ]
}

public struct CategorizedComment: Codable, Sendable, Hashable, Schematic {
    public var index: Int
    public var comment: String
    public var category: CommentCategory
}

public struct CommentInsights: Codable, Sendable, Hashable, Schematic {
    public var overallCommentSentimentScore: Double
    public var sentimentSummary: String
    public var themes: [CommentTheme]
    public var categorizedComments: [CategorizedComment]
    public static let schemaHints: [String: SchemaHint] = [
        "overallCommentSentimentScore": SchemaHint(description: "0 = hostile, 1 = enthusiastic.", minimum: 0, maximum: 1),
    ]
}

public struct ScoreBreakdown: Codable, Sendable, Hashable, Schematic {
    public var contentDepthScore: Double
    public var commentSentimentScore: Double?
    public var depthWeight: Double
    public var sentimentWeight: Double
    public var baseScore: Int
    public var adjustment: Int
    public var adjustmentReasons: [String]
    public var finalScore: Int
    public var usedComments: Bool
    public var note: String?
    public init(contentDepthScore: Double, commentSentimentScore: Double?, depthWeight: Double, sentimentWeight: Double, baseScore: Int,
                adjustment: Int, adjustmentReasons: [String], finalScore: Int, usedComments: Bool, note: String?) {
        self.contentDepthScore = contentDepthScore
        self.commentSentimentScore = commentSentimentScore
        self.depthWeight = depthWeight
        self.sentimentWeight = sentimentWeight
        self.baseScore = baseScore
        self.adjustment = adjustment
        self.adjustmentReasons = adjustmentReasons
        self.finalScore = finalScore
        self.usedComments = usedComments
        self.note = note
    }
    public static let schemaHints: [String: SchemaHint] = [
        "baseScore": SchemaHint(description: "round(100 × (0.6 × depth + 0.4 × sentiment)), or round(100 × depth) without comments."),
        "adjustment": SchemaHint(description: "+5 when depth ≥ 0.8 and sentiment ≥ 0.8; −10 when depth < 0.3."),
        "usedComments": SchemaHint(description: "False when no comments were given: the score is content depth alone."),
    ]
}

public enum QuestionSource: String, Codable, Sendable, SchemaEnum { case model, fallback, mixed }

public enum AnalyzeWorthIt: RPCMethod {
    public static let name = "analysis/worthIt"
    public static let summary = "Is it worth watching? Content depth, long summary, takeaways, gems of wisdom, comment insights and a 0-100 score (the WorthIt seed)."
    public static let errors: [ProtocolError] = [.modelUnavailable, .generationFailed, .remoteFailed, .notFound]
    public struct Params: Codable, Sendable, Schematic {
        public var text: String?
        public var uri: String?
        public var comments: [String]?
        public var language: String?
        public var temperature: Double?
        public var seed: Int?
        public var deterministic: Bool? = nil
        public var verify: Bool? = nil
        public var maxAttempts: Int? = nil
        public var workDoneToken: JSONValue?
        public var model: String? = nil
        public static let schemaHints: [String: SchemaHint] = AnalysisParams.schemaHints.merging([
            "comments": SchemaHint(description: "Up to 50 viewer comments (the seed's top comments).", maxItems: 50, minLength: 1, maxLength: 2000),
        ]) { a, _ in a }
    }
    public struct Result: Codable, Sendable, Schematic {
        public var score: Int
        public var scoreBreakdown: ScoreBreakdown
        public var contentDepthScore: Double
        public var longSummary: String
        public var takeaways: [String]
        public var gemsOfWisdom: [String]
        public var suggestedQuestions: [String]
        public var suggestedQuestionsSource: QuestionSource
        public var commentInsights: CommentInsights?
        public var language: String
        public var fallbackFrom: String?
        public var chunks: Int
        public var cached: Bool
        public var verification: Verification
        public var usage: Usage
        public var provenance: Provenance
        public static let schemaHints: [String: SchemaHint] = metaHints.merging([
            "score": SchemaHint(description: "0-100; see scoreBreakdown.", minimum: 0, maximum: 100),
            "contentDepthScore": SchemaHint(description: "0 = shallow, 1 = deep.", minimum: 0, maximum: 1),
            "suggestedQuestions": SchemaHint(description: "2-4 questions to ask (ask/stream).", minItems: 2, maxItems: 4),
            "suggestedQuestionsSource": SchemaHint(description: "fallback: the model gave fewer than 2, so language-aware templates filled in."),
            "commentInsights": SchemaHint(description: "Absent when no comments were given."),
        ]) { a, _ in a }
    }
}

import ParlanceJSON
import ParlanceSchema

// Several documents at once: analysis/compare.

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

public enum AnalyzeCompare: GeneratingMethod {
    public static let name = "analysis/compare"
    public static let summary = "Compare several transcripts: common themes, evolution, unique insights per document, recommended order, narrative (the seed's MultiEpisodeAnalysis)."
    public struct Input: GenerationInput {
        public var documents: [CompareDocument]
        public var language: String?
        public var languageFallback: LanguageFallback?
        public static let schemaHints: [String: SchemaHint] = [
            "documents": SchemaHint(description: "2-8 documents, each by uri or text.", minItems: 2, maxItems: 8),
            "language": DocumentInput.schemaHints["language"]!,
            "languageFallback": .languageFallback,
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
        public static let schemaHints: [String: SchemaHint] = analysisMetaHints.merging([
            "uniqueInsights": SchemaHint(description: "One per document, in the order given."),
            "recommendedOrder": SchemaHint(description: "Every document title exactly once."),
            "documents": SchemaHint(description: "The documents compared (each summarized first; summaries are cached)."),
        ]) { a, _ in a }
    }
}

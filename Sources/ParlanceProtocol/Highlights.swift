import ParlanceSchema

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

public enum AnalyzeHighlights: DocumentAnalysis {
    public static let name = "analysis/highlights"
    public static let summary = "Key moments (with times from real segments), verbatim quotes and action items (the seed's EpisodeHighlights)."
    public typealias Input = DocumentInput
    public struct Fields: AnalysisFields {
        public var keyMoments: [KeyMoment]
        public var quotes: [NotableQuote]
        public var actionItems: [String]
        public static let schemaHints: [String: SchemaHint] = [
            "keyMoments": SchemaHint(description: "In transcript order; the model picks segment ids from this document only."),
            "quotes": SchemaHint(description: "Each the full text of one or more consecutive segments (extended to the end of the sentence)."),
        ]
    }
}

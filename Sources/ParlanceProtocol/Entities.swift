import ParlanceSchema

/// A named entity and every segment whose text mentions it.
public struct NamedEntity: Codable, Sendable, Hashable, Schematic {
    public var name: String
    public var occurrences: [SegmentRef]
    public static let schemaHints: [String: SchemaHint] = [
        "occurrences": SchemaHint(description: "Segments whose text contains the name (case- and accent-insensitive, whole words), in order."),
    ]
}

public enum AnalyzeEntities: DocumentAnalysis {
    public static let name = "analysis/entities"
    public static let summary = "People, organizations, products, locations and resources named in a transcript, each with the segments where it occurs."
    public typealias Input = DocumentInput
    public struct Fields: AnalysisFields {
        public var people: [NamedEntity]
        public var organizations: [NamedEntity]
        public var products: [NamedEntity]
        public var locations: [NamedEntity]
        public var resources: [NamedEntity]
        public var unverified: [String]
        public static let schemaHints: [String: SchemaHint] = [
            "resources": SchemaHint(description: "Books, papers, talks, websites and tools mentioned."),
            "unverified": SchemaHint(description: "Names the model proposed that occur nowhere in the transcript: dropped from the lists above."),
        ]
    }
}

import ParlanceSchema

public enum ContentStyle: String, Codable, Sendable, SchemaEnum {
    case conversational, interview, lecture, tutorial, narrative, debate, panel, monologue, news
}

public enum ContentTone: String, Codable, Sendable, SchemaEnum {
    case casual, friendly, formal, enthusiastic, serious, humorous, informative, critical, inspirational, neutral
}

public enum ComplexityLevel: String, Codable, Sendable, SchemaEnum { case low, medium, high }

public enum AnalyzeContent: DocumentAnalysis {
    public static let name = "analysis/content"
    public static let summary = "Style, tone and complexity of a transcript (the seed's EpisodeContentAnalysis)."
    public typealias Input = DocumentInput
    public struct Fields: AnalysisFields, GeneratedResult {
        public var style: ContentStyle
        public var tone: ContentTone
        public var complexity: ComplexityLevel
        public var notes: String
        public static let generatedFields = ["style", "tone", "complexity", "notes"]
        public static let schemaHints: [String: SchemaHint] = [
            "complexity": SchemaHint(description: "How demanding the content is for a listener."),
            "notes": SchemaHint(description: "One or two sentences on style, tone and complexity.", minLength: 10, maxLength: 300),
        ]
    }
}

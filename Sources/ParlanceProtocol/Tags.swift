import ParlanceSchema

public enum Difficulty: String, Codable, Sendable, SchemaEnum { case beginner, intermediate, advanced }

public enum AnalyzeTags: DocumentAnalysis {
    public static let name = "analysis/tags"
    public static let summary = "Tags, categories and difficulty of a transcript (the seed's EpisodeTags)."
    public typealias Input = DocumentInput
    public struct Fields: AnalysisFields, GeneratedResult {
        public var tags: [String]
        public var categories: [String]
        public var difficulty: Difficulty
        public static let generatedFields = ["tags", "categories", "difficulty"]
        public static let schemaHints: [String: SchemaHint] = [
            "tags": SchemaHint(description: "3-8 short lowercase tags.", minItems: 3, maxItems: 8, minLength: 2, maxLength: 40),
            "categories": SchemaHint(description: "1-3 broad categories (e.g. Technology, Business).", minItems: 1, maxItems: 3, minLength: 3, maxLength: 40),
        ]
    }
}

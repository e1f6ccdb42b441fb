import ParlanceJSON
import ParlanceSchema

public enum Summarize: DocumentAnalysis {
    public static let name = "analysis/summarize"
    public static let summary = "Summarize a text or an open document of any length (hierarchically when it does not fit)."

    public struct Input: GenerationInput {
        /// Either `text` or `uri` (an open document).
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
        public static let controls: [GenerationControls.Key] = [
            .maxTokens, .temperature, .topP, .topK, .minP, .seed, .deterministic, .verify, .maxAttempts, .model, .refresh, .workDoneToken,
        ]
        public static let schemaHints: [String: SchemaHint] = [
            "text": SchemaHint(description: "The text to summarize (SRT and WebVTT are recognised). Give text or uri."),
            "uri": SchemaHint(description: "An open document (document/open)."),
            "language": SchemaHint(description: "Output language (BCP-47). Default: detected from the input."),
            "languageFallback": .languageFallback,
            "instructions": .analysisInstructions,
            "maxTokens": SchemaHint(description: "Upper bound on generated tokens for the summary.", minimum: 64, maximum: 2048),
        ]
    }

    /// The seed's `EpisodeSummary`; the result adds how it was made (`AnalysisMeta`).
    public struct Fields: AnalysisFields, GeneratedResult {
        public var summary: String
        public var mainTopics: [String]
        public var keyTakeaways: [String]
        public var targetAudience: String
        public var engagementLevel: EngagementLevel

        public static let generatedFields = ["summary", "mainTopics", "keyTakeaways", "targetAudience", "engagementLevel"]
        public static let schemaHints: [String: SchemaHint] = [
            "summary": SchemaHint(description: "Concise 2-3 sentence summary.", minLength: 20, maxLength: 800),
            "mainTopics": SchemaHint(description: "3-5 main topics (no more than the transcript has sentences; phrases of its own when it has fewer than five).", minItems: 1, maxItems: 5, minLength: 2, maxLength: 80),
            "keyTakeaways": SchemaHint(description: "3-5 key takeaways; a transcript of fewer than five sentences gets its own sentences, as written.", minItems: 1, maxItems: 5, minLength: 5, maxLength: 200),
            "targetAudience": SchemaHint(description: "Who this is for.", minLength: 3, maxLength: 120),
        ]
        public static let metaHints: [String: SchemaHint] = [
            "fallbackFrom": SchemaHint(description: "The requested or detected language, when it was not supported."),
            "chunks": SchemaHint(description: "Chunks summarized (1 = a single pass)."),
            "cached": SchemaHint(description: "True when served from the analysis cache."),
            "verification": SchemaHint(description: "The summary checked: no duplicate or near-duplicate topics or takeaways, no prompt labels or bare names as takeaways, a targetAudience that describes people rather than naming someone in the transcript."),
        ]
    }

    public enum EngagementLevel: String, Codable, Sendable, SchemaEnum { case low, medium, high }
}

import ParlanceJSON
import ParlanceSchema

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

public enum AnalyzeWorthIt: DocumentAnalysis {
    public static let name = "analysis/worthIt"
    public static let summary = "Is it worth watching? Content depth, long summary, takeaways, gems of wisdom, comment insights and a 0-100 score (the WorthIt seed)."
    public struct Input: GenerationInput {
        public var text: String?
        public var uri: String?
        public var comments: [String]?
        public var language: String?
        public var languageFallback: LanguageFallback?
        public var instructions: String?
        public static let schemaHints: [String: SchemaHint] = DocumentInput.schemaHints.merging([
            "comments": SchemaHint(description: "Up to 50 viewer comments (the seed's top comments).", maxItems: 50, minLength: 1, maxLength: 2000),
        ]) { a, _ in a }
    }
    public struct Fields: AnalysisFields {
        public var score: Int
        public var scoreBreakdown: ScoreBreakdown
        public var contentDepthScore: Double
        public var longSummary: String
        public var takeaways: [String]
        public var gemsOfWisdom: [String]
        public var suggestedQuestions: [String]
        public var suggestedQuestionsSource: QuestionSource
        public var commentInsights: CommentInsights?
        public static let schemaHints: [String: SchemaHint] = [
            "score": SchemaHint(description: "0-100; see scoreBreakdown.", minimum: 0, maximum: 100),
            "contentDepthScore": SchemaHint(description: "0 = shallow, 1 = deep.", minimum: 0, maximum: 1),
            "takeaways": SchemaHint(description: "3-5 concrete lessons; a transcript of fewer than five sentences gets its own sentences, as written."),
            "suggestedQuestions": SchemaHint(description: "2-4 questions to ask (ask/stream).", minItems: 2, maxItems: 4),
            "suggestedQuestionsSource": SchemaHint(description: "fallback: the model gave fewer than 2, so language-aware templates filled in."),
            "commentInsights": SchemaHint(description: "Absent when no comments were given."),
        ]
    }
}

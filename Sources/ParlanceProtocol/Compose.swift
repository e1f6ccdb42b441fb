import ParlanceJSON
import ParlanceSchema

/// The Context Composer seed for any editor: rewrite a selection in several tones for an
/// audience, streamed, each rewrite with a word diff against the selection and a checked
/// list of the key points it kept; refine a rewrite; a history of past compositions.

public enum Sentiment: String, Codable, Sendable, CaseIterable, SchemaEnum { case positive, neutral, negative, mixed }

/// What the selection says, found by deterministic text analysis (no model call).
public struct ComposeAnalysis: Codable, Sendable, Hashable, Schematic {
    public var sentiment: Sentiment
    public var detectedAudience: Audience
    public var keyPoints: [String]
    public init(sentiment: Sentiment, detectedAudience: Audience, keyPoints: [String]) {
        self.sentiment = sentiment
        self.detectedAudience = detectedAudience
        self.keyPoints = keyPoints
    }
    public static let schemaHints: [String: SchemaHint] = [
        "sentiment": SchemaHint(description: "Lexicon-based, with negation: positive, neutral, negative or mixed."),
        "detectedAudience": SchemaHint(description: "The audience the selection reads as written for (cue words; peer when nothing stands out)."),
        "keyPoints": SchemaHint(description: "1-5 informative sentences or clauses of the selection, in order; every variation is checked against them."),
    ]
}

/// One replaced span: `original[originalStart..<originalEnd]` becomes `replacement`,
/// which sits at `replacementStart..<replacementEnd` in the variation. Offsets count
/// UTF-16 code units, like LSP positions.
public struct DiffHunk: Codable, Sendable, Hashable, Schematic {
    public var originalStart: Int
    public var originalEnd: Int
    public var replacementStart: Int
    public var replacementEnd: Int
    public var original: String
    public var replacement: String
    public init(originalStart: Int, originalEnd: Int, replacementStart: Int, replacementEnd: Int, original: String, replacement: String) {
        self.originalStart = originalStart
        self.originalEnd = originalEnd
        self.replacementStart = replacementStart
        self.replacementEnd = replacementEnd
        self.original = original
        self.replacement = replacement
    }
}

/// A word-level diff of a variation against the selection. Applying every hunk to the
/// selection (from the last to the first) gives the variation's text exactly.
public struct WordDiffResult: Codable, Sendable, Hashable, Schematic {
    public var hunks: [DiffHunk]
    public var wordsKept: Int
    public var wordsRemoved: Int
    public var wordsAdded: Int
    public var similarity: Double
    public init(hunks: [DiffHunk], wordsKept: Int, wordsRemoved: Int, wordsAdded: Int, similarity: Double) {
        self.hunks = hunks
        self.wordsKept = wordsKept
        self.wordsRemoved = wordsRemoved
        self.wordsAdded = wordsAdded
        self.similarity = similarity
    }
    public static let schemaHints: [String: SchemaHint] = [
        "hunks": SchemaHint(description: "Changed spans in order; offsets are UTF-16 code units into the selection and into the variation."),
        "similarity": SchemaHint(description: "2 x words kept / (words in selection + words in variation).", minimum: 0, maximum: 1),
    ]
}

public struct ComposeVariation: Codable, Sendable, Hashable, Schematic {
    public var id: String
    public var tone: Tone
    public var audience: Audience
    public var text: String
    public var formalityScore: Double
    public var keyPointsPreserved: [String]
    public var keyPointsMissing: [String]
    public var diff: WordDiffResult
    public var parentId: String?
    public var instruction: String?
    public var seed: Int
    public var finishReason: String
    public var usage: Usage
    /// Absent only in history entries stored before verification existed.
    public var verification: Verification?
    public init(id: String, tone: Tone, audience: Audience, text: String, formalityScore: Double, keyPointsPreserved: [String],
                keyPointsMissing: [String], diff: WordDiffResult, parentId: String? = nil, instruction: String? = nil,
                seed: Int, finishReason: String, usage: Usage, verification: Verification?) {
        self.verification = verification
        self.id = id
        self.tone = tone
        self.audience = audience
        self.text = text
        self.formalityScore = formalityScore
        self.keyPointsPreserved = keyPointsPreserved
        self.keyPointsMissing = keyPointsMissing
        self.diff = diff
        self.parentId = parentId
        self.instruction = instruction
        self.seed = seed
        self.finishReason = finishReason
        self.usage = usage
    }
    public static let schemaHints: [String: SchemaHint] = [
        "id": SchemaHint(description: "<entry id>.<n>: names this variation in $/progress `part`, compose/refine and the history."),
        "formalityScore": SchemaHint(description: "0 (very casual) to 1 (very formal): a deterministic lexical measure (contractions, slang, formal connectives, word and sentence length, articles and prepositions; in Spanish, French, German, Italian, Portuguese and Norwegian the formal and the informal address and the words of letters and of chat instead of the first three, and no word length).", minimum: 0, maximum: 1),
        "keyPointsPreserved": SchemaHint(description: "The analysis' key points this text keeps, checked: every number and at least half the content words of the point occur in it."),
        "keyPointsMissing": SchemaHint(description: "The key points it does not keep."),
        "parentId": SchemaHint(description: "The variation this one refines (compose/refine)."),
        "instruction": SchemaHint(description: "The refine instruction that produced it."),
        "seed": SchemaHint(description: "The sampling seed of the attempt kept: seed + i for variation i's first attempt, then 7919 more per further attempt (verification); 104729 more again when it was generated anew because it read like another tone."),
        "finishReason": SchemaHint(description: "stop (the model ended) or length (maxTokens reached).", enumValues: ["stop", "length"]),
        "verification": SchemaHint(description: "This variation checked against the selection: no refusal, no echo of the instructions, not the selection unchanged, every number and name kept, the requested language, a sane length. A variation that only left facts out gets the selection's sentences that carry them added (local models); one failing otherwise is generated again (another seed, a stricter prompt) within maxAttempts; `passed: false` when none passed. Always present in new results; absent in history entries stored by older versions."),
        "usage": SchemaHint(description: "Summed over this variation's attempts."),
    ]
}

public enum ComposeVariations: GeneratingMethod {
    public static let name = "compose/variations"
    public static let summary = "Rewrite a selection in several tones for an audience, concurrently in one batch, streamed per variation, each with a word diff and checked key points."
    public static let errors: [ProtocolError] = .generating

    public struct Input: GenerationInput {
        public var text: String
        public var tones: [Tone]?
        public var audience: Audience?
        public var count: Int?
        public var instructions: String?
        public var language: String?
        public var languageFallback: LanguageFallback? = nil
        public var exactFacts: Bool? = nil
        public var ephemeral: Bool?
        public init(text: String, tones: [Tone]? = nil, audience: Audience? = nil, count: Int? = nil, instructions: String? = nil,
                    language: String? = nil) {
            self.text = text
            self.tones = tones
            self.audience = audience
            self.count = count
            self.instructions = instructions
            self.language = language
        }
        /// Every control but `refresh`: nothing of compose's is served from a cache.
        public static let controls = GenerationControls.Key.allCases.filter { $0 != .refresh }
        public static let schemaHints: [String: SchemaHint] = [
            "text": SchemaHint(description: "The selection to rewrite.", minLength: 1),
            "tones": SchemaHint(description: "Tones, one variation each (repeat a tone for alternatives). Default: formal, casual, diplomatic (the first `count` of formal, casual, diplomatic, empathetic, direct).", minItems: 1, maxItems: 8),
            "audience": SchemaHint(description: "Who the rewrites are for. Default: the detected audience."),
            "count": SchemaHint(description: "How many variations (default: one per tone). More than the tones cycles through them with new seeds; fewer is an error.", minimum: 1, maximum: 8),
            "instructions": SchemaHint(description: "Extra instructions for every variation, e.g. \"mention the new date\".", maxLength: 1000),
            "language": SchemaHint(description: "Output language (BCP-47). Default: detected from the text."),
            "languageFallback": .languageFallback,
            "maxTokens": SchemaHint(description: "Upper bound on generated tokens per variation. Default: 1.5 x the selection + 32 tokens, at least 64, shrunk so all variations fit the context together.", minimum: 16, maximum: 2048),
            "temperature": SchemaHint(description: "Default 0.4 (the small default model stays closer to the facts when cool).", minimum: 0, maximum: 2),
            "seed": SchemaHint(description: "Base seed (variation i uses seed + i). Same input and seed = same output; a new seed gives alternatives (redo).", minimum: 0, maximum: 4_294_967_295),
            "exactFacts": SchemaHint(description: "While a variation is generated, a fact of the selection (an amount, a number with its unit, a name, an identifier) that the output has begun is finished exactly as the selection writes it: the model may leave a fact out but cannot change one it started; it writes no number that neither the selection nor `instructions` has, nor stops one of two digits or more partway, nor a weekday or month they do not name (local models; a remote model gets the facts spelled out in the prompt). Default true; false generates exactly as without it."),
            "ephemeral": SchemaHint(description: "Do not store this composition in the history (it stays refinable until the daemon exits)."),
            "workDoneToken": SchemaHint(description: "$/progress reports: the analysis (part \"analysis\"), each variation's streamed deltas (part = variation id), then each finished variation (phase done, in `partial`)."),
        ]
    }

    public struct Result: Codable, Sendable, Schematic {
        public var id: String
        public var analysis: ComposeAnalysis
        public var variations: [ComposeVariation]
        public var audience: Audience
        public var language: String
        public var fallbackFrom: String?
        public var stored: Bool
        public var sharedPrefixTokens: Int
        public var usage: Usage
        public var provenance: Provenance
        public init(id: String, analysis: ComposeAnalysis, variations: [ComposeVariation], audience: Audience, language: String,
                    fallbackFrom: String?, stored: Bool, sharedPrefixTokens: Int, usage: Usage, provenance: Provenance) {
            self.id = id
            self.analysis = analysis
            self.variations = variations
            self.audience = audience
            self.language = language
            self.fallbackFrom = fallbackFrom
            self.stored = stored
            self.sharedPrefixTokens = sharedPrefixTokens
            self.usage = usage
            self.provenance = provenance
        }
        public static let schemaHints: [String: SchemaHint] = [
            "id": SchemaHint(description: "The history entry id (also the prefix of every variation id)."),
            "audience": SchemaHint(description: "The audience written for (given or detected)."),
            "stored": SchemaHint(description: "True when written to the history."),
            "sharedPrefixTokens": SchemaHint(description: "Prompt tokens shared by every variation: evaluated once, then copied to each variation's sequence."),
            "usage": SchemaHint(description: "Summed over the shared prefix and every variation."),
        ]
    }

    public static var example: (params: JSONValue, result: JSONValue)? {
        (["text": "We have to move the launch to March because the battery tests failed twice. Marketing needs the new date by Friday.",
          "tones": ["formal", "casual"], "audience": "team"],
         ["id": "cmp-3f9a1c2e", "analysis": ["sentiment": "negative", "detectedAudience": "team",
                                             "keyPoints": ["We have to move the launch to March because the battery tests failed twice.", "Marketing needs the new date by Friday."]],
          "variations": [["id": "cmp-3f9a1c2e.1", "tone": "formal", "audience": "team",
                          "text": "The launch will be moved to March because the battery tests failed twice. Marketing requires the new date by Friday.",
                          "formalityScore": 0.74, "keyPointsPreserved": ["We have to move the launch to March because the battery tests failed twice.", "Marketing needs the new date by Friday."],
                          "keyPointsMissing": [], "diff": ["hunks": [["originalStart": 0, "originalEnd": 19, "replacementStart": 0, "replacementEnd": 30,
                                                                     "original": "We have to move the", "replacement": "The launch will be moved to"]],
                                                           "wordsKept": 16, "wordsRemoved": 5, "wordsAdded": 6, "similarity": 0.76],
                          "seed": 42, "finishReason": "stop", "usage": ["promptTokens": 112, "cachedPromptTokens": 104, "generatedTokens": 27, "firstTokenMs": 31.5, "totalMs": 420.2]]],
          "audience": "team", "language": "en", "stored": true, "sharedPrefixTokens": 104,
          "usage": ["promptTokens": 328, "cachedPromptTokens": 208, "generatedTokens": 55, "firstTokenMs": 88.1, "totalMs": 980.4],
          "provenance": ["modelSha256": "…", "templateSha256": "…", "sampler": ["temperature": 0.4, "topP": 0.95, "topK": 40, "minP": 0.05, "repeatPenalty": 1.1, "maxTokens": 96], "seed": 42]])
    }
}

public enum ComposeRefine: GeneratingMethod {
    public static let name = "compose/refine"
    public static let summary = "Continue from a variation with an instruction (\"shorter\", \"warmer\", free text); the conversation so far stays cached."

    public struct Input: GenerationInput {
        public var variationId: String
        public var instruction: String
        public var ephemeral: Bool?
        public static let controls = ComposeVariations.Input.controls
        public static let schemaHints: [String: SchemaHint] = [
            "variationId": SchemaHint(description: "A variation id from compose/variations, compose/refine or the history.", minLength: 1),
            "instruction": SchemaHint(description: "shorter, longer, warmer, more formal, or free text.", minLength: 1, maxLength: 1000),
            "maxTokens": SchemaHint(minimum: 16, maximum: 2048),
            "ephemeral": SchemaHint(description: "Do not add the refined variation to the history entry."),
        ]
    }

    public struct Result: Codable, Sendable, Schematic {
        public var id: String
        public var variation: ComposeVariation
        public var stored: Bool
        public var provenance: Provenance
        public init(id: String, variation: ComposeVariation, stored: Bool, provenance: Provenance) {
            self.id = id
            self.variation = variation
            self.stored = stored
            self.provenance = provenance
        }
        public static let schemaHints: [String: SchemaHint] = [
            "id": SchemaHint(description: "The history entry the variation belongs to."),
            "variation": SchemaHint(description: "The refined variation (parentId names the one it continues); diff and key points are against the original selection."),
        ]
    }
}

// MARK: - History

/// One composition as stored on disk: the input, the analysis and every variation
/// (refinements included, with their parentId).
public struct ComposeHistoryEntry: Codable, Sendable, Hashable, Schematic {
    public var id: String
    public var createdAt: String
    public var text: String
    public var instructions: String?
    public var audience: Audience
    public var language: String
    public var analysis: ComposeAnalysis
    public var variations: [ComposeVariation]
    public init(id: String, createdAt: String, text: String, instructions: String?, audience: Audience, language: String,
                analysis: ComposeAnalysis, variations: [ComposeVariation]) {
        self.id = id
        self.createdAt = createdAt
        self.text = text
        self.instructions = instructions
        self.audience = audience
        self.language = language
        self.analysis = analysis
        self.variations = variations
    }
    public static let schemaHints: [String: SchemaHint] = ["createdAt": SchemaHint(description: "ISO 8601, UTC.")]
}

public struct ComposeHistorySummary: Codable, Sendable, Hashable, Schematic {
    public var id: String
    public var createdAt: String
    public var preview: String
    public var audience: Audience
    public var tones: [Tone]
    public var variations: Int
    public init(id: String, createdAt: String, preview: String, audience: Audience, tones: [Tone], variations: Int) {
        self.id = id
        self.createdAt = createdAt
        self.preview = preview
        self.audience = audience
        self.tones = tones
        self.variations = variations
    }
    public static let schemaHints: [String: SchemaHint] = ["preview": SchemaHint(description: "The selection's first 80 characters.")]
}

public enum ComposeHistoryList: RPCMethod {
    public static let name = "compose/history/list"
    public static let summary = "Stored compositions, newest first."
    public struct Params: Codable, Sendable, Schematic {
        public var limit: Int?
        public var offset: Int?
        public init(limit: Int? = nil, offset: Int? = nil) {
            self.limit = limit
            self.offset = offset
        }
        public static let schemaHints: [String: SchemaHint] = [
            "limit": SchemaHint(description: "Default 50.", minimum: 1, maximum: 1000),
            "offset": SchemaHint(minimum: 0),
        ]
    }
    public struct Result: Codable, Sendable, Schematic {
        public var entries: [ComposeHistorySummary]
        public var total: Int
        public var enabled: Bool
        public init(entries: [ComposeHistorySummary], total: Int, enabled: Bool) {
            self.entries = entries
            self.total = total
            self.enabled = enabled
        }
        public static let schemaHints: [String: SchemaHint] = [
            "enabled": SchemaHint(description: "False when the daemon runs with --no-history."),
        ]
    }
}

public enum ComposeHistoryGet: RPCMethod {
    public static let name = "compose/history/get"
    public static let summary = "One stored composition with all its variations."
    public static let errors: [ProtocolError] = [.notFound]
    public struct Params: Codable, Sendable, Schematic {
        public var id: String
        public init(id: String) { self.id = id }
    }
    public typealias Result = ComposeHistoryEntry
}

public enum ComposeHistoryDelete: RPCMethod {
    public static let name = "compose/history/delete"
    public static let summary = "Delete one stored composition."
    public static let errors: [ProtocolError] = [.notFound]
    public typealias Params = ComposeHistoryGet.Params
    public typealias Result = Empty
}

public enum ComposeHistoryClear: RPCMethod {
    public static let name = "compose/history/clear"
    public static let summary = "Delete every stored composition."
    public typealias Params = Empty
    public struct Result: Codable, Sendable, Schematic {
        public var deleted: Int
        public init(deleted: Int) { self.deleted = deleted }
    }
}

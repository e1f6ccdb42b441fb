/// Values that cross the engine's boundary: requests in, events and errors out.

public struct SamplingOptions: Sendable, Hashable, Codable {
    public var temperature: Double
    public var topP: Double
    public var topK: Int
    public var minP: Double
    public var repeatPenalty: Double

    public init(temperature: Double = 0.7, topP: Double = 0.9, topK: Int = 40, minP: Double = 0.05, repeatPenalty: Double = 1.1) {
        self.temperature = temperature
        self.topP = topP
        self.topK = topK
        self.minP = minP
        self.repeatPenalty = repeatPenalty
    }
}

/// How much a sequence's KV cache is worth keeping after its request ends. Idle sequences
/// are evicted lowest priority first, then least recently used.
public enum CachePriority: Int, Sendable, Comparable {
    case normal = 0
    case document = 1
    case session = 2
    public static func < (a: CachePriority, b: CachePriority) -> Bool { a.rawValue < b.rawValue }
}

/// How one generation runs, whoever asks for it and whichever engine runs it: sampling, seed,
/// length, what its cache is worth, drafting and the repeat guard. Features resolve it from a
/// request's options (`ResolvedOptions`), hand it to a model (`ModelRequest`), and the engine
/// runs it (`GenerationRequest`): one set of fields, read through all three by name.
public struct GenerationSettings: Sendable {
    public var sampling: SamplingOptions
    public var seed: UInt32
    /// 0 evaluates the prompt only (prewarm): its KV state stays cached for reuse.
    public var maxTokens: Int
    public var cachePriority: CachePriority
    /// Runs alone, from an empty KV cache, its prompt in fixed chunks: the same request
    /// gives the same output whatever else the engine has done or is doing.
    public var deterministic: Bool
    /// Output text includes special tokens' text (a model whose vocabulary holds
    /// `<tool_call>` as one control token writes it as that token).
    public var renderSpecial: Bool
    /// Speculative decoding drafted from the text (nil: the engine's setting; a remote
    /// engine: the server's). The output is the same either way; only its speed differs.
    public var speculative: Bool?
    /// Requests of one group (the variations of one composition) draft from each other's
    /// output as well as their own; 0: no group.
    public var draftGroup: UInt64
    /// The output is expected to copy runs of the prompt's text (a selection rewritten, a
    /// variation refined, segments quoted). With `speculative` nil, the engine drafts for
    /// these requests only: elsewhere a draft has no reason to be taken, and on a CPU a
    /// verified token costs nearly a step.
    public var copiesText: Bool
    /// A run of this many output tokens is never written twice (`RepeatGuard`); nil: no
    /// guard, generation as without it, token for token.
    public var noRepeatRun: Int?
    /// With a grammar: a string closed where the model meant to go on is reopened
    /// (`SpillGuard`); false: generation as without it, token for token.
    public var spillGuard = true

    public init(sampling: SamplingOptions = .init(), seed: UInt32 = 0, maxTokens: Int = 256, cachePriority: CachePriority = .normal,
                deterministic: Bool = false, renderSpecial: Bool = false, speculative: Bool? = nil, draftGroup: UInt64 = 0,
                copiesText: Bool = false, noRepeatRun: Int? = nil) {
        (self.sampling, self.seed, self.maxTokens, self.cachePriority) = (sampling, seed, maxTokens, cachePriority)
        (self.deterministic, self.renderSpecial, self.speculative) = (deterministic, renderSpecial, speculative)
        (self.draftGroup, self.copiesText, self.noRepeatRun) = (draftGroup, copiesText, noRepeatRun)
    }
}

/// A type that carries `GenerationSettings` and reads them as its own fields
/// (`request.maxTokens`).
public protocol CarriesGenerationSettings {
    var settings: GenerationSettings { get set }
}

extension CarriesGenerationSettings {
    public subscript<T>(dynamicMember field: WritableKeyPath<GenerationSettings, T>) -> T {
        get { settings[keyPath: field] }
        set { settings[keyPath: field] = newValue }
    }
}

/// What the engine runs: tokens, settings, and the constraints it compiled for them.
@dynamicMemberLookup
public struct GenerationRequest: Sendable, CarriesGenerationSettings {
    public var prompt: [Token]
    public var settings: GenerationSettings
    /// A GBNF grammar (root rule `root`) constraining the output.
    public var grammar: String?
    /// Facts of the source to finish exactly once the output starts one (`FactGuard`; with a
    /// grammar, as far as it accepts). nil: generation as without it, token for token.
    public var factGuard: FactGuard?
    /// The output writes no number that the guard's source does not begin (`NumberGuard`);
    /// nil: no guard, generation as without it, token for token.
    public var numberGuard: NumberGuard?
    /// Words the output never writes (`WordGuard`); nil: no guard, generation as without it.
    public var wordGuard: WordGuard?

    public init(prompt: [Token], settings: GenerationSettings = .init(), grammar: String? = nil, factGuard: FactGuard? = nil,
                numberGuard: NumberGuard? = nil, wordGuard: WordGuard? = nil) {
        (self.prompt, self.settings, self.grammar) = (prompt, settings, grammar)
        (self.factGuard, self.numberGuard, self.wordGuard) = (factGuard, numberGuard, wordGuard)
    }
}

public enum FinishReason: String, Sendable, Codable {
    /// The model ended its turn (or the grammar completed).
    case stop
    /// `maxTokens` reached.
    case length
    /// Prompt evaluated only (prewarm).
    case prompt
}

/// Measured by the engine, never estimated.
public struct GenerationStats: Sendable, Hashable {
    public var promptTokens: Int
    public var cachedPromptTokens: Int
    public var generatedTokens: Int
    public var queuedMs: Double
    public var firstTokenMs: Double
    public var totalMs: Double
    /// Token counts are estimates (a remote server that reported no usage).
    public var estimated: Bool = false
    /// Tokens drafted from the text and verified (speculative decoding), and how many of
    /// them the model's own sampling agreed with.
    public var draftTokens: Int = 0
    public var acceptedDraftTokens: Int = 0
    /// Strings the grammar closed while the model meant to go on, reopened (`SpillGuard`).
    public var spillsUndone: Int = 0

    public init(promptTokens: Int, cachedPromptTokens: Int, generatedTokens: Int, queuedMs: Double, firstTokenMs: Double, totalMs: Double,
                estimated: Bool = false) {
        self.promptTokens = promptTokens
        self.cachedPromptTokens = cachedPromptTokens
        self.generatedTokens = generatedTokens
        self.queuedMs = queuedMs
        self.firstTokenMs = firstTokenMs
        self.totalMs = totalMs
        self.estimated = estimated
    }
}

public struct GenerationResult: Sendable {
    public var text: String
    public var tokens: [Token]
    public var finishReason: FinishReason
    public var stats: GenerationStats

    public init(text: String, tokens: [Token], finishReason: FinishReason, stats: GenerationStats) {
        self.text = text
        self.tokens = tokens
        self.finishReason = finishReason
        self.stats = stats
    }
}

public enum GenerationEvent: Sendable {
    /// Waiting for a free sequence slot; `position` is 1-based.
    case queued(position: Int)
    /// Prompt evaluation progress.
    case prompt(evaluated: Int, total: Int, cached: Int)
    /// Newly generated text (whole UTF-8 characters only).
    case text(String)
    case done(GenerationResult)
}

public enum EngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `searched`: where the default model was looked for, in order (empty for a path given).
    case modelNotFound(path: String, searched: [String] = [])
    case invalidModelFile(path: String, reason: String)
    case contextCreationFailed(String)
    case contextTooSmall(requested: Int, minimum: Int)
    case exceededContextWindowSize(promptTokens: Int, maxTokens: Int, contextSize: Int)
    case decodingFailure(String)
    case grammarRejected(String)
    case queueFull(capacity: Int)
    /// Cancelled; carries the text generated so far.
    case cancelled(partial: String, generatedTokens: Int)
    case shutDown
    /// A store name (`ollama:…`, `hf:…`, `lmstudio:…`) that names no model on disk now.
    /// `reason`: notDownloaded, invalidName or incomplete; `message` says what was looked for.
    case notOnDisk(name: String, reason: String, message: String, suggestions: [String], pullCommand: String?)

    public var description: String {
        switch self {
        case .modelNotFound(let p, let searched):
            return searched.count > 1 ? "default model not found; looked in: \(searched.joined(separator: ", ")) (install it, or pass --model PATH)" : "model file not found: \(p)"
        case .invalidModelFile(let p, let r): return "invalid model file \(p): \(r)"
        case .contextCreationFailed(let r): return "could not create a context: \(r)"
        case .contextTooSmall(let r, let m): return "context size \(r) is too small (minimum \(m))"
        case .exceededContextWindowSize(let p, let m, let c):
            return "prompt of \(p) tokens plus up to \(m) generated tokens exceeds the context window of \(c) tokens"
        case .decodingFailure(let r): return "decoding failed: \(r)"
        case .grammarRejected(let r): return "grammar rejected: \(r)"
        case .queueFull(let c): return "the request queue is full (\(c) waiting); retry later"
        case .cancelled: return "request cancelled"
        case .shutDown: return "the engine is shutting down"
        case .notOnDisk(_, _, let message, let suggestions, let pull):
            var s = message
            if !suggestions.isEmpty { s += "; closest on disk: " + suggestions.joined(separator: ", ") }
            if let pull { s += "; to download it: \(pull)" }
            return s
        }
    }
}

/// A snapshot of the scheduler, for `model/status`, tests (slot leaks) and the benchmark.
public struct EngineStats: Sendable, Codable, Hashable {
    public var sequenceSlots: Int
    public var freeSlots: Int
    public var activeRequests: Int
    public var queuedRequests: Int
    public var maxQueue: Int
    public var cachedSequences: Int
    public var cachedTokens: Int
    public var contextSize: Int
}

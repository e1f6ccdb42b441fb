import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// A request's generation settings after defaults (as provenance reports them), read as its
/// own fields (`options.seed`), with the facts a local engine holds the output to.
@dynamicMemberLookup
public struct ResolvedOptions: Sendable, CarriesGenerationSettings {
    /// Each call sets its own `cachePriority` and `renderSpecial` (`Generation.run`, the tool loop).
    public var settings: GenerationSettings
    /// Facts of the source the output finishes exactly once started (`FactGuard`).
    public var exactFacts: [String] = []
    /// The output writes no number this text does not have (`NumberGuard`); nil: any.
    public var numbersFrom: String? = nil
    /// Words the output never writes (`WordGuard`).
    public var bannedWords: [String] = []
    /// The request's `refresh`: every analysis cache read it would make is skipped (its
    /// results are still written).
    public var refresh = false
    /// The request kept a language its model does not write well (`provenance.languageRisk`).
    public var languageRisk: LanguageRisk? = nil

    public init(_ o: GenerationOptions?, defaultTemperature: Double = 0.3, defaultMaxTokens: Int = 512, seed defaultSeed: UInt32 = 42) {
        let d = SamplingOptions()
        let sampling = SamplingOptions(
            temperature: o?.temperature ?? defaultTemperature, topP: o?.topP ?? d.topP, topK: o?.topK ?? d.topK,
            minP: o?.minP ?? d.minP, repeatPenalty: o?.repeatPenalty ?? d.repeatPenalty)
        settings = GenerationSettings(sampling: sampling, seed: o?.seed.map { UInt32(truncatingIfNeeded: $0) } ?? defaultSeed,
                                      maxTokens: o?.maxTokens ?? defaultMaxTokens, deterministic: o?.deterministic ?? false,
                                      speculative: o?.speculative)
    }

    /// A generating request's controls: its sampling read as a session's options are (the
    /// same names, ranges and defaults), `maxTokens` and `seed` as the method decides them.
    init(_ c: GenerationControls, maxTokens: Int?, seed: Int? = nil, defaultTemperature: Double) {
        self.init(GenerationOptions(temperature: c.temperature, topP: c.topP, topK: c.topK, minP: c.minP, seed: seed ?? c.seed,
                                    maxTokens: maxTokens, deterministic: c.deterministic, speculative: c.speculative),
                  defaultTemperature: defaultTemperature)
        refresh = c.refresh ?? false
    }

    /// topP, topK and minP where they differ from the defaults, for cache keys that list
    /// their settings: a request at the defaults names the entry it always named.
    var chosenSampling: JSONObject {
        let d = SamplingOptions(), s = settings.sampling
        var o = JSONObject()
        if s.topP != d.topP { o["topP"] = .double(s.topP) }
        if s.topK != d.topK { o["topK"] = .int(s.topK) }
        if s.minP != d.minP { o["minP"] = .double(s.minP) }
        return o
    }

    func provenance(_ engine: any LanguageModel) -> Provenance {
        let s = settings
        var p = Provenance(modelSha256: "", templateSha256: "",
                           sampler: SamplerSettings(temperature: s.sampling.temperature, topP: s.sampling.topP, topK: s.sampling.topK,
                                                    minP: s.sampling.minP, repeatPenalty: s.sampling.repeatPenalty, maxTokens: s.maxTokens),
                           seed: Int(s.seed))
        if s.deterministic { p.deterministic = true }
        p.languageRisk = languageRisk
        p.model = engine.name
        engine.describe(&p)
        return p
    }
}

/// One model call's output.
public struct Generated: Sendable {
    public var text: String
    public var json: JSONValue?
    public var tokens: [Token]
    public var prompt: ModelPrompt
    public var usage: Usage
    public var finishReason: FinishReason
    /// What stopped the generation while it streamed (`StreamWatch`); nil: it ended by itself.
    public var stoppedBy: Finding? = nil
}

extension Usage {
    init(_ s: GenerationStats) {
        self.init(promptTokens: s.promptTokens, cachedPromptTokens: s.cachedPromptTokens, generatedTokens: s.generatedTokens,
                  firstTokenMs: (s.firstTokenMs * 10).rounded() / 10, totalMs: (s.totalMs * 10).rounded() / 10)
        if s.estimated { estimated = true } else if s.generatedTokens > 0 {
            draftTokens = s.draftTokens
            acceptedDraftTokens = s.acceptedDraftTokens
        }
    }
}

public enum Generation {
    /// Runs one generation, streaming progress, optionally constrained by a JSON Schema (or,
    /// for free text on a local engine, a GBNF `grammar`).
    /// With a schema the output is parsed and validated; a violation the grammar cannot
    /// express (rare) is retried once with another seed, then reported. Output cut off by
    /// `maxTokens` mid-JSON is retried under grammars fitted to the budget: first at a
    /// typical 2.5 characters per token, then at one character per token, which ASCII
    /// output cannot overrun (each token writes at least one character; only byte-level
    /// tokens of non-ASCII text can).
    public static func run(
        _ engine: any LanguageModel, prompt: ModelPrompt, schema: JSONValue? = nil, grammar: String? = nil, options: ResolvedOptions,
        cachePriority: CachePriority = .normal, progress: ProgressReporter, part: String? = nil, watch: StreamWatch? = nil
    ) async throws -> Generated {
        // Checked once here (a bad schema is -32602 before any generation).
        if let schema { _ = try GrammarBuilder.gbnf(for: schema) }
        // A GBNF grammar (local engines only) constrains free text; a schema takes precedence.
        var constraint: ModelRequest.Constraint = schema.map { .schema($0) } ?? grammar.map { .grammar($0) } ?? .none
        var seed = options.seed
        var total = Usage.zero
        var fittings = [options.maxTokens * 5 / 2, options.maxTokens][...]
        var retried = false
        while true {
            var request = ModelRequest(prompt: prompt, settings: options.settings, constraint: constraint)
            request.seed = seed
            request.cachePriority = cachePriority
            request.exactFacts = options.exactFacts
            request.numbersFrom = options.numbersFrom
            request.bannedWords = options.bannedWords
            let out = try await stream(engine, request, structured: schema != nil, progress: progress, part: part, watch: watch)
            total = total + out.usage
            // Stopped while it streamed: what it wrote is judged as it is, never retried here.
            if let stop = out.stoppedBy {
                return Generated(text: out.text, json: nil, tokens: out.tokens, prompt: prompt, usage: total, finishReason: out.finishReason, stoppedBy: stop)
            }
            guard let schema else {
                return Generated(text: out.text, json: nil, tokens: out.tokens, prompt: prompt, usage: total, finishReason: out.finishReason, stoppedBy: out.stoppedBy)
            }
            let parsed = try? JSONParser.parse(out.text)
            let violations = parsed.map { SchemaValidator.validate($0, against: schema) } ?? []
            if let parsed, violations.isEmpty {
                return Generated(text: out.text, json: parsed, tokens: out.tokens, prompt: prompt, usage: total, finishReason: out.finishReason)
            }
            let truncated = parsed == nil && out.finishReason == FinishReason.length
            seed = seed &+ 7919
            // Generated again here: the client drops what streamed so far (`restart: true`), or
            // the two streams join into text that is neither (a cut "medi" then "{ …").
            if truncated, let chars = fittings.popFirst() {
                constraint = .schema(SchemaBudget.fitting(schema, chars: chars))
                progress(.init(kind: .report, message: "the JSON was cut at maxTokens (\(options.maxTokens)); generating it again to fit",
                               phase: .generating, part: part, restart: true))
                continue
            }
            if !truncated, !retried {
                retried = true
                progress(.init(kind: .report, message: "the output did not match the schema; generating it again", phase: .generating, part: part,
                               restart: true))
                continue
            }
            let detail: String
            if parsed == nil {
                detail = truncated ? "output truncated at maxTokens (\(options.maxTokens)) before the JSON was complete" : "output is not valid JSON"
            } else {
                detail = violations.map { $0.description }.joined(separator: "; ")
            }
            throw ResponseError(ErrorCode(rawValue: ProtocolError.generationFailed.code), "the model's output did not match the schema: \(detail)",
                                data: ["error": "decodingFailure", "detail": .string(detail)])
        }
    }

    struct StreamOut {
        var text: String
        var tokens: [Token]
        var usage: Usage
        var finishReason: FinishReason
        /// What stopped the stream before its end (`StreamWatch`); nil: it ended by itself.
        var stoppedBy: Finding? = nil
    }

    /// Streams one generation's progress. `holdBack(textSoFar)` keeps deltas back while it
    /// is true (output that may turn out to be a tool call, which is not answer text); once it
    /// is false, what was held is sent as one delta and the rest streams as it comes.
    /// `watch`: checks on the growing text; when one fails the generation is stopped there
    /// (the engine frees its slot within a step) and the text so far is returned with the
    /// finding in `stoppedBy`.
    static func stream(_ engine: any LanguageModel, _ request: ModelRequest, structured: Bool, progress: ProgressReporter, part: String?,
                       holdBack: ((String) -> Bool)? = nil, watch: StreamWatch? = nil) async throws -> StreamOut {
        var text = ""
        var holding = holdBack != nil
        let started = ContinuousClock.now
        var tokens = 0
        // What a stopped stream reports as its usage: the engine's own figures come with `.done` only.
        var cachedTokens = 0
        var firstToken: ContinuousClock.Instant? = nil
        do {
            for try await event in engine.generate(request) {
                switch event {
                case .queued(let position):
                    progress(.init(kind: .report, message: "queued (position \(position))", phase: .queued, part: part, queuePosition: position))
                case .prompt(let evaluated, let total, let cached):
                    cachedTokens = cached
                    progress(.init(kind: .report, message: "prompt \(evaluated)/\(total) tokens (\(cached) cached)", phase: .prompt, part: part,
                                   promptTokens: total, evaluatedTokens: evaluated, cachedTokens: cached))
                case .text(var delta):
                    text += delta
                    tokens += 1
                    if firstToken == nil { firstToken = .now }
                    if let watch, let finding = watch.check(text, delta: delta) {
                        // Leaving the loop drops the stream: the engine cancels the request.
                        var usage = Usage.zero
                        usage.promptTokens = request.prompt.tokens.count
                        usage.cachedPromptTokens = cachedTokens
                        usage.generatedTokens = tokens
                        usage.firstTokenMs = firstToken.map { ($0 - started).inMilliseconds } ?? 0
                        usage.totalMs = (ContinuousClock.now - started).inMilliseconds
                        return StreamOut(text: text, tokens: [], usage: usage, finishReason: .stop, stoppedBy: finding)
                    }
                    if holding {
                        if holdBack?(text) == true { continue }
                        holding = false
                        delta = text
                    }
                    progress(.init(kind: .report, phase: .generating, delta: delta, part: part,
                                   partial: structured ? PartialJSON.complete(text) : nil))
                case .done(let r):
                    return StreamOut(text: r.text, tokens: r.tokens, usage: Usage(r.stats), finishReason: r.finishReason)
                }
            }
        }
        // The stream ended without a result: this task was cancelled.
        throw EngineError.cancelled(partial: text, generatedTokens: 0)
    }
}

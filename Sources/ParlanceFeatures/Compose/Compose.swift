import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// compose/variations and compose/refine.
///
/// Variations: the selection is analysed (deterministically, see `ComposeAnalyzer`), the
/// prompts of all variations are built so they differ only in a short tail (the tone),
/// the shared prefix is evaluated once (a prompt-only request), then every variation is
/// submitted at once: the scheduler admits them together, copies the prefix into each
/// sequence (`llama_memory_seq_cp`) and decodes them in one batch. Each streams its
/// deltas under its own id; each finished variation gets a formality score, a checked
/// key-point list and a word diff against the selection.
public enum Compose {
    static let toneOrder: [Tone] = [.formal, .casual, .diplomatic, .empathetic, .direct]
    static let defaultCount = 3

    /// Claims the entry's id and its place in the history (its creation time) when the
    /// request arrives; the variations are the work.
    public static func variations(_ p: ComposeVariations.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> ComposeVariations.Result {
        let entryId = ComposeHistory.newEntryId()
        let createdAt = ComposeHistory.timestamp()
        return { try await variations(p, ctx, entryId: entryId, createdAt: createdAt) }
    }

    static func variations(_ p: ComposeVariations.Params, _ ctx: RequestContext, entryId: String, createdAt: String) async throws -> ComposeVariations.Result {
        let started = ContinuousClock.now
        let selection = try nonEmpty(p.text)
        let tones = try plan(tones: p.tones, count: p.count)
        let languages = ctx.services.models.languages(try ctx.modelName())
        let language = try resolveLanguage(p.language, selection, languages: languages, fallback: p.languageFallback)
        let analysis = ComposeAnalyzer.analyze(p.text)
        let audience = p.audience ?? analysis.detectedAudience
        let engine = try await ctx.engine()
        let languageName = LanguageSupport.displayName(language.language)
        let prompts = self.prompts(selection: selection, tones: tones, audience: audience, instructions: p.instructions,
                                   languageName: languageName, engine: engine)
        let shared = prompts.count > 1 ? commonPrefix(prompts) : 0
        let maxTokens = try budget(p.maxTokens, selection: selection, prompts: prompts, shared: shared, engine: engine)
        let baseSeed = UInt32(truncatingIfNeeded: p.seed ?? 42)
        var baseOptions = options(p, seed: baseSeed, maxTokens: maxTokens, selection: selection)
        baseOptions.languageRisk = language.risk(source: languages.source)
        ctx.progress(.init(kind: .report, message: "analysed the selection", phase: .prompt, part: "analysis",
                           partial: try? JSONValue(encoding: analysis)))

        let prefixUsage = try await evaluatePrefix(prompts, shared: shared, engine: engine, progress: ctx.progress)
        let prefixDone = ContinuousClock.now

        let store = ctx.services.composeHistory
        let originalText = p.text
        let keyPoints = analysis.keyPoints
        let attempts = Attempts(verify: p.verify, maxAttempts: p.maxAttempts)
        let facts = Facts.extract(selection).map(\.text)
        var results = try await withThrowingTaskGroup(of: (Int, ComposeVariation, [Token]).self) { group in
            for (i, tone) in tones.enumerated() {
                let id = "\(entryId).\(i + 1)"
                var options = baseOptions
                options.seed = baseSeed &+ UInt32(i)
                let firstPrompt = prompts[i]
                group.addTask {
                    let instructions = ComposePrompt.instructionTexts(tone: tone, audience: audience, languageName: languageName)
                    let (v, tokens) = try await rewrite(id: id, tone: tone, audience: audience, original: originalText, keyPoints: keyPoints,
                                                        language: language.language, instructions: instructions, attempts: attempts,
                                                        options: options, engine: engine, ctx: ctx) { attempt, toneHint, examples in
                        attempt == 1 ? firstPrompt : engine.render(ComposePrompt.messages(
                            text: selection, tone: tone, audience: audience, instructions: p.instructions, languageName: languageName,
                            strict: facts, toneHint: toneHint, examples: examples))
                    }
                    ctx.progress(.init(kind: .report, message: "variation \(id) done", phase: .done, part: id, partial: try? JSONValue(encoding: v)))
                    return (i, v, tokens)
                }
            }
            var all: [(Int, ComposeVariation, [Token])] = []
            for try await r in group { all.append(r) }
            return all.sorted { $0.0 < $1.0 }
        }
        if attempts.verify {
            // Two tones that came back alike fail together; the one whose markers miss is
            // generated again, opening with a phrase of its tone.
            try await separateTones(&results, original: originalText, language: language.language) { v, seed in
                var options = baseOptions
                options.seed = seed
                return try await rewrite(id: v.id, tone: v.tone, audience: audience, original: originalText, keyPoints: keyPoints,
                                         language: language.language, instructions: ComposePrompt.instructionTexts(tone: v.tone, audience: audience, languageName: languageName),
                                         attempts: Attempts(verify: true, maxAttempts: 1), options: options, engine: engine, ctx: ctx,
                                         opening: distinctOpeners(v.tone, language: language.language)) { _, toneHint, _ in
                    engine.render(ComposePrompt.messages(text: selection, tone: v.tone, audience: audience, instructions: p.instructions,
                                                         languageName: languageName, strict: facts, toneHint: toneHint))
                }
            } report: { v in reportRegenerated(v, ctx.progress) }
        }
        let variations = results.map(\.1)

        let entry = ComposeHistoryEntry(id: entryId, createdAt: createdAt, text: p.text, instructions: p.instructions,
                                        audience: audience, language: language.language, analysis: analysis, variations: variations)
        let stored = await store.save(entry, persist: !(p.ephemeral ?? false))
        for r in results { await store.remember(r.2, model: engine.name, for: r.1.id) }

        let usage = total(prefix: prefixUsage, variations: variations, prefixMs: milliseconds(prefixDone - started),
                          totalMs: milliseconds(ContinuousClock.now - started))
        return .init(id: entryId, analysis: analysis, variations: variations, audience: audience, language: language.language,
                     fallbackFrom: language.fallbackFrom, stored: stored, sharedPrefixTokens: shared, usage: usage,
                     provenance: baseOptions.provenance(engine))
    }

    /// The selection without its surrounding whitespace; an empty one is refused.
    private static func nonEmpty(_ text: String) throws -> String {
        let selection = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !selection.isEmpty else {
            throw ResponseError.invalidParams("text: the selection is empty (only whitespace)", data: ["path": "text", "keyword": "minLength"])
        }
        return selection
    }

    /// The options every variation starts from (each then takes its own seed).
    private static func options(_ p: ComposeVariations.Params, seed: UInt32, maxTokens: Int, selection: String) -> ResolvedOptions {
        var o = ResolvedOptions(p.controls, maxTokens: maxTokens, seed: Int(seed), defaultTemperature: 0.4)
        // Five tones of one selection share most of their words: each variation drafts from
        // the others' output too.
        o.draftGroup = UInt64.random(in: 1...UInt64.max)
        o.copiesText = true
        if p.exactFacts ?? true {
            o.exactFacts = Facts.exactSpans(selection)
            o.numbersFrom = selection + "\n" + (p.instructions ?? "")
            // Nor a weekday or a month that the selection does not say ("Tuesday" for "tomorrow"),
            // nor a name of the prompt's worked examples ("Dr. Okafor") that it does not say.
            o.bannedWords = Facts.absentCalendarWords(o.numbersFrom ?? "") + ComposePrompt.exampleNames(absentFrom: o.numbersFrom ?? "")
        }
        return o
    }

    /// A variation generated again because it read like another tone: its new text replaces
    /// the old (`restart`), then it is done again.
    private static func reportRegenerated(_ v: ComposeVariation, _ progress: ProgressReporter) {
        progress(.init(kind: .report, message: "variation \(v.id) generated again: it read like another tone", phase: .verifying,
                       delta: v.text, part: v.id, restart: true))
        progress(.init(kind: .report, message: "variation \(v.id) done", phase: .done, part: v.id, partial: try? JSONValue(encoding: v)))
    }

    /// The shared prefix evaluated once (a prompt-only request): every variation then
    /// starts from a copy of it.
    static func evaluatePrefix(_ prompts: [ModelPrompt], shared: Int, engine: any LanguageModel, progress: ProgressReporter) async throws -> Usage {
        guard shared > 0 else { return .zero }
        return try await Generation.run(engine, prompt: prompts[0].prefix(shared), options: ResolvedOptions(nil, defaultMaxTokens: 0),
                                        progress: progress, part: "prefix").usage
    }

    /// The usage of a whole compose/variations: the prefix's and every variation's tokens; the
    /// first token when the prefix was done and the first variation's first token came.
    static func total(prefix: Usage, variations: [ComposeVariation], prefixMs: Double, totalMs: Double) -> Usage {
        let firstVariationMs = variations.map(\.usage.firstTokenMs).filter { $0 > 0 }.min() ?? 0
        return Usage(
            promptTokens: prefix.promptTokens + variations.reduce(0) { $0 + $1.usage.promptTokens },
            cachedPromptTokens: prefix.cachedPromptTokens + variations.reduce(0) { $0 + $1.usage.cachedPromptTokens },
            generatedTokens: variations.reduce(0) { $0 + $1.usage.generatedTokens },
            firstTokenMs: round1(prefixMs + firstVariationMs),
            totalMs: round1(totalMs),
            draftTokens: variations.reduce(nil) { Usage.sum($0, $1.usage.draftTokens) },
            acceptedDraftTokens: variations.reduce(nil) { Usage.sum($0, $1.usage.acceptedDraftTokens) })
    }

    /// Claims, in arrival order, the variation refined (as it is now), its KV history and
    /// the new variation's id; the rewrite is the work.
    public static func refine(_ p: ComposeRefine.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> ComposeRefine.Result {
        let store = ctx.services.composeHistory
        let instruction = p.instruction.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !instruction.isEmpty else {
            throw ResponseError.invalidParams("instruction: empty (only whitespace)", data: ["path": "instruction", "keyword": "minLength"])
        }
        guard let (entry, parent) = await store.variation(p.variationId) else { throw ErrorMapping.notFound("variation", p.variationId) }
        // The variation's tokens continue the conversation only on the model that made them.
        let history = await store.tokens(for: parent.id, model: try ctx.modelName())
        guard let id = await store.nextVariationId(entry.id) else { throw ErrorMapping.notFound("variation", p.variationId) }
        return { try await refine(p, ctx, instruction: instruction, entry: entry, parent: parent, history: history, id: id) }
    }

    static func refine(_ p: ComposeRefine.Params, _ ctx: RequestContext, instruction: String, entry: ComposeHistoryEntry,
                       parent: ComposeVariation, history: [Token]?, id: String) async throws -> ComposeRefine.Result {
        let store = ctx.services.composeHistory
        let engine = try await ctx.engine()
        let messages = ComposePrompt.conversation(for: parent, in: entry)
            + [ChatMessage(.assistant, parent.text), ChatMessage(.user, ComposePrompt.refinement(instruction))]
        let prompt = engine.render(messages, history: history, after: messages.count - 2)
        let maxTokens = p.maxTokens ?? min(1024, max(64, engine.countTokens(parent.text) * 3 / 2 + 32))
        guard prompt.count + maxTokens <= engine.contextSize else {
            throw tooLong(promptTokens: prompt.count, selectionTokens: engine.countTokens(entry.text), maxTokens: maxTokens, engine: engine)
        }
        var options = ResolvedOptions(p.controls, maxTokens: maxTokens, seed: p.seed ?? parent.seed, defaultTemperature: 0.4)
        options.copiesText = true  // the refined variation
        // The entry's language goes on as it was written; kept in a language this model does
        // not write well, the refinement says so too.
        let languages = ctx.services.models.languages(engine.name)
        options.languageRisk = try OutputLanguage.resolve(entry.language, languages: languages, fallback: .keep).risk(source: languages.source)
        let attempts = Attempts(verify: p.verify, maxAttempts: p.maxAttempts)
        let languageName = LanguageSupport.displayName(entry.language)
        let facts = Facts.extract(entry.text).map(\.text)
        let instructions = ComposePrompt.instructionTexts(tone: parent.tone, audience: parent.audience, languageName: languageName)
            + [ComposePrompt.refinement(instruction)]
        var (v, tokens) = try await rewrite(id: id, tone: parent.tone, audience: parent.audience, original: entry.text, keyPoints: entry.analysis.keyPoints,
                                            language: entry.language, instructions: instructions, attempts: attempts, options: options,
                                            engine: engine, ctx: ctx, previous: parent.text, lengthBounds: 0.15...3.5) { attempt, _, _ in
            guard attempt > 1 else { return prompt }
            // Later attempts: the same conversation, the revision request with a stricter line.
            var strict = messages
            strict[strict.count - 1] = ChatMessage(.user, ComposePrompt.refinement(instruction) + "\n" + ComposePrompt.stricter(facts: facts))
            return engine.render(strict, history: history, after: strict.count - 2)
        }
        v.parentId = parent.id
        v.instruction = instruction
        let stored = await store.add(v, to: entry.id, persist: !(p.ephemeral ?? false))
        await store.remember(tokens, model: engine.name, for: id)
        return .init(id: entry.id, variation: v, stored: stored, provenance: options.provenance(engine))
    }

    /// Evaluates the part of a rewrite's prompt that every tone shares (instructions,
    /// worked examples, the selection), so that when a tone is chosen only its short tail
    /// is left: an editor calls this when the user opens the code-action menu. Cancelling
    /// the task stops it; what was evaluated stays cached for the rewrite.
    public static func prewarm(_ p: ComposeVariations.Params, _ ctx: RequestContext) async throws -> Usage {
        let selection = p.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !selection.isEmpty else { return .zero }
        let languages = ctx.services.models.languages(try ctx.modelName())
        let language = try resolveLanguage(p.language, selection, languages: languages, fallback: p.languageFallback)
        let audience = p.audience ?? ComposeAnalyzer.analyze(p.text).detectedAudience
        let engine = try await ctx.engine()
        let prompts = self.prompts(selection: selection, tones: [.formal, .casual], audience: audience, instructions: p.instructions,
                                   languageName: LanguageSupport.displayName(language.language), engine: engine)
        return try await evaluatePrefix(prompts, shared: commonPrefix(prompts), engine: engine, progress: .none)
    }

    // MARK: Steps

    /// Each tone's prompt tokens; they differ only in their tail.
    static func prompts(selection: String, tones: [Tone], audience: Audience, instructions: String?, languageName: String,
                        engine: any LanguageModel) -> [ModelPrompt] {
        tones.map { tone in
            engine.render(ComposePrompt.messages(text: selection, tone: tone, audience: audience,
                                                             instructions: instructions, languageName: languageName))
        }
    }

    /// The tone of each variation: the given tones cycled to `count`, or the first
    /// `count` of the default order.
    static func plan(tones: [Tone]?, count: Int?) throws -> [Tone] {
        guard let tones else {
            let n = count ?? defaultCount
            return (0..<n).map { toneOrder[$0 % toneOrder.count] }
        }
        let n = count ?? tones.count
        guard n >= tones.count else {
            throw ResponseError.invalidParams("count: \(n) is less than the \(tones.count) tones requested (count must be at least the number of tones, at most 8)",
                                              data: ["path": "count", "keyword": "minimum", "minimum": .int(tones.count)])
        }
        return (0..<n).map { tones[$0 % tones.count] }
    }

    static func resolveLanguage(_ requested: String?, _ text: String, languages: ModelLanguages,
                                fallback: LanguageFallback?) throws -> LanguageSupport.Resolution {
        try OutputLanguage.resolve(requested ?? LanguageDetector.detect(String(text.prefix(4000))).code, languages: languages, fallback: fallback)
    }

    /// maxTokens per variation, checked before any generation: each prompt plus its
    /// budget must fit the context. The default (about twice the selection) shrinks so
    /// all variations fit beside each other.
    static func budget(_ requested: Int?, selection: String, prompts: [ModelPrompt], shared: Int, engine: any LanguageModel) throws -> Int {
        let context = engine.contextSize
        let longest = prompts.map(\.count).max() ?? 0
        var maxTokens: Int
        if let requested {
            maxTokens = requested
        } else {
            maxTokens = min(1024, max(64, engine.countTokens(selection) * 3 / 2 + 32))
            let tails = prompts.map { $0.count - shared }.max() ?? 0
            let perVariation = (context - shared) / max(1, prompts.count) - tails
            if perVariation >= 64 { maxTokens = min(maxTokens, perVariation) }
            maxTokens = min(maxTokens, max(16, context - longest))
        }
        guard longest + maxTokens <= context else {
            throw tooLong(promptTokens: longest, selectionTokens: engine.countTokens(selection), maxTokens: maxTokens, engine: engine)
        }
        return maxTokens
    }

    static func tooLong(promptTokens: Int, selectionTokens: Int, maxTokens: Int, engine: any LanguageModel) -> ResponseError {
        let context = engine.contextSize
        let detail = "the selection is \(selectionTokens) tokens; with the instructions the prompt is \(promptTokens) tokens, plus up to \(maxTokens) generated tokens, which exceeds the context window of \(context) tokens"
        return ResponseError(ErrorCode(rawValue: ProtocolError.generationFailed.code), "text too long: " + detail,
                             data: ["error": "exceededContextWindowSize", "promptTokens": .int(promptTokens), "maxTokens": .int(maxTokens),
                                    "contextSize": .int(context), "detail": .string(detail)])
    }

    /// Tokens every prompt starts with (0 for a remote model: it has no tokens here).
    static func commonPrefix(_ prompts: [ModelPrompt]) -> Int {
        guard var n = prompts.first?.tokens.count else { return 0 }
        for p in prompts.dropFirst().map(\.tokens) {
            var i = 0
            while i < min(n, p.count), p[i] == prompts[0].tokens[i] { i += 1 }
            n = i
        }
        return n
    }

    static func milliseconds(_ d: Duration) -> Double {
        d.inMilliseconds
    }

    static func round1(_ x: Double) -> Double { (x * 10).rounded() / 10 }
}

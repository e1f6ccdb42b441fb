import Foundation
import ParlanceEngine
import ParlanceProtocol

/// One variation generated, verified and, while it fails, generated again under the
/// `RetryPolicy`.
extension Compose {
    /// One attempt at a variation: the model's output and the text kept from it (cleaned,
    /// and with verification on, repaired), with what the checks found.
    struct Attempt: Sendable {
        var out: Generated
        var seed: UInt32
        /// 1-based.
        var attempt: Int
        /// The output cleaned, and repaired when verification repairs.
        var text: String
        /// What verification found in `text`, repairs included.
        var findings: [Finding]
        /// `text` is not what the model wrote (its tokens no longer say it).
        var repaired: Bool
        /// Facts of the selection `text` still lacks.
        var missingFacts: Int
        /// Generated under a grammar (facts forced, or a tone's opener).
        var constrained: Bool
        /// Generated with the stronger tone line.
        var toneRetried: Bool
        /// The last attempt's text with a sentence carrying its missing facts (`FactInsertion`).
        var inserted = false
    }

    /// When a failing variation is generated again, and how each later attempt differs from
    /// the first (another seed always; the rest here).
    struct RetryPolicy: Sendable {
        let tone: Tone
        /// The tone the variation is held to: nil for a refinement, which may change the tone on purpose.
        let checkedTone: Tone?
        let maxAttempts: Int
        /// Grammars may force what the last attempt lacked: verification is on, there are
        /// retries, and the engine takes grammars (local models).
        let grammars: Bool
        let selection: String
        let units: [FactGrammar.Unit]
        /// Phrases the first attempt must open with (a variation regenerated because it read
        /// like another tone); under a grammar where the engine takes one.
        var opening: [String] = []
        let acceptsGrammar: Bool
        /// The selection is English: a sentence in a tone's marker phrases (`FactGrammar.mendingOpeners`) can mend it.
        let english: Bool
        /// Phrases a retry whose tone was off opens with: English's for empathetic and
        /// diplomatic (`FactGrammar.openers`); the selection's language's for formal and
        /// casual where it has its own formality markers (`Compose.localOpeners`).
        let markerOpeners: [String]

        /// Later attempts sample at most this hot: a small model copies facts more faithfully cooler.
        static let laterTemperature = 0.2
        /// A grammar attempt never writes a run of this many of its tokens twice
        /// (`RepeatGuard`): its gaps had filled with the sentence before them again.
        static let grammarRepeatRun = 6

        init(tone: Tone, refinement: Bool, attempts: Attempts, acceptsGrammar: Bool, selection: String, language: String = "en") {
            self.tone = tone
            english = language.split(separator: "-").first == "en"
            markerOpeners = english ? FactGrammar.openers(for: tone)
                : FormalityMarkers.of(language) != nil && (tone == .formal || tone == .casual) ? Compose.distinctOpeners(tone, language: language) : []
            checkedTone = refinement ? nil : tone
            maxAttempts = attempts.maxAttempts
            grammars = attempts.verify && attempts.maxAttempts > 1 && acceptsGrammar
            self.selection = selection
            self.acceptsGrammar = acceptsGrammar
            units = FactGrammar.units(selection)
        }

        /// How one attempt is asked.
        struct Plan {
            /// A stronger tone line for the prompt.
            var toneHint: String?
            /// A grammar the output must follow.
            var grammar: String?
            /// Facts to put back into the last attempt (`FactInsertion`: the selection's
            /// sentences that carry them) instead of generating a new variation.
            var insert: [FactGrammar.Unit] = []
            /// The tone the sentences putting them back mend too (they open with a marker of
            /// it); without facts to put back, a sentence mending it alone.
            var mending: Tone?
            /// The last attempt is continued (`FactInsertion`), not generated again.
            var continues: Bool { !insert.isEmpty || mending != nil }
        }

        /// Findings a sentence with the missing facts mends, or that nothing mends better
        /// (a tone: a whole new variation fixed it in 6 of 40, eval 2026-11-27).
        static let insertable: Set<VerificationIssueCode> = [.factMissing, .toneMismatch]

        /// The facts `last` lacks, when nothing else is wrong with it but the tone and the
        /// engine takes grammars; empty otherwise.
        func lacking(_ last: Attempt) -> [FactGrammar.Unit] {
            guard grammars, !Ablation.off("compose.insertion"), Set(last.findings.filter(\.isOpen).map(\.code)).isSubset(of: Self.insertable) else { return [] }
            return FactGrammar.missing(units, in: last.text)
        }

        /// The facts the sentences put back after `last` should carry (`lacking`, of the
        /// first `FactInsertion.maxSentences` of the selection's sentences that carry any):
        /// none when `last` is an insertion itself.
        func insertion(after last: Attempt) -> [FactGrammar.Unit] {
            guard !last.inserted else { return [] }
            return FactInsertion.sayable(lacking(last), in: selection)
        }

        /// Attempt `attempt`, after `last`: facts it lacks (and nothing worse) are put back
        /// by sentences continuing it, opening with a marker of its tone when that was off
        /// too (empathetic, diplomatic); such a tone off alone gets one sentence with a
        /// marker phrase; otherwise a new variation, with a stronger tone line when the tone
        /// was off, and a tone with a marker phrase (empathetic, diplomatic) opening with
        /// one by grammar.
        func plan(attempt: Int, after last: Attempt?) -> Plan {
            if attempt == 1, !opening.isEmpty {
                return Plan(toneHint: ToneCheck.instruction(tone),
                            grammar: acceptsGrammar ? FactGrammar.opening(selection: selection, openers: opening) : nil)
            }
            guard attempt > 1, let last else { return Plan() }
            let toneOff = last.findings.contains { $0.isOpen && $0.code == .toneMismatch }
            let marked = grammars && toneOff && checkedTone != nil && !markerOpeners.isEmpty
            let insert = insertion(after: last)
            // The tone off too: the sentences open with a marker of it. A casual variation's
            // always do: the selection's sentences pull it toward the selection's register, and
            // "In addition," adds formality and none of casual's markers (a contraction, "you").
            if !insert.isEmpty { return Plan(insert: insert, mending: mendable(last) || casualLead ? tone : nil) }
            // The tone off and nothing else: one sentence opening with a marker phrase.
            if mendable(last), last.findings.filter(\.isOpen).allSatisfy({ $0.code == .toneMismatch }), !last.inserted { return Plan(mending: tone) }
            let grammar = FactGrammar.opening(selection: selection, openers: marked ? markerOpeners : [])
            return Plan(toneHint: toneOff ? ToneCheck.instruction(tone) : nil, grammar: grammar)
        }

        /// Whether to try again after `a` (which failed). Missing facts alone (a tone aside):
        /// by insertion, after any attempt but an insertion (a grammar attempt may leave a fact
        /// out: the model chooses where its gaps end). Anything else: not after a grammar
        /// attempt or an insertion, nothing does better.
        /// Not for a tone alone that only a free retry could change: formal and casual have
        /// had their lexical repairs, direct has none, and a tone a stronger line did not fix
        /// is reported. Empathetic and diplomatic get one sentence added, opening with a
        /// marker phrase (`FactInsertion.toneGrammar`). Anything worse (an echo, a refusal,
        /// an invented fact, a loop) gets one new variation, not two: a second rescued
        /// almost none (eval, 2026-11-27).
        func worthRetrying(_ a: Attempt, _ findings: [Finding]) -> Bool {
            if a.inserted { return false }
            // Facts alone: sentences carrying them.
            if !lacking(a).isEmpty { return !insertion(after: a).isEmpty }
            if a.constrained { return false }
            let toneOnly = findings.filter(\.isOpen).allSatisfy { $0.code == .toneMismatch }
            // A formal or casual tone off in another language: one new variation, opening with
            // a phrase of its address (`markerOpeners`); English's are mended by a sentence.
            let reopened = grammars && !english && !markerOpeners.isEmpty
            if toneOnly && (a.toneRetried || !(mendable(a) || reopened)) { return false }
            return a.attempt == 1
        }

        /// The sentences putting facts back into a casual English variation open with a casual
        /// marker ("Just so you know,") whatever its tone scored.
        var casualLead: Bool { grammars && english && checkedTone == .casual }

        /// `a`'s tone is off in a way a sentence of marker phrases mends: the engine takes
        /// grammars, the tone is held to and has such phrases, the selection is English and a
        /// message to a reader (`FactInsertion.addressesReader`: a sentence such as "Let me
        /// know if you've any questions" belongs in nothing else), and
        /// every marker missed is one a sentence adds (a formality score, an acknowledgement,
        /// a hedge, casual's contraction and "you"), not a fragment or a contraction to take out.
        func mendable(_ a: Attempt) -> Bool {
            guard grammars, english, let checkedTone, !FactGrammar.mendingOpeners(for: checkedTone).isEmpty,
                  FactInsertion.addressesReader(selection) else { return false }
            let failures = a.findings.filter { $0.isOpen && $0.code == .toneMismatch }.flatMap { f -> [ToneCheck.Failure] in
                if case .tone(_, let failures) = f.subject { return failures }
                return []
            }
            return !failures.isEmpty && failures.allSatisfy {
                switch $0 {
                case .readsCasual, .readsFormal, .notConversational, .noAcknowledgement, .noHedge: true
                default: false
                }
            }
        }

        /// Failing attempts ranked (lower is better): missing facts weigh most.
        func rank(_ a: Attempt, _ findings: [Finding]) -> Int {
            RewriteVerifier.severity(findings, missingFacts: a.missingFacts)
        }
    }

    /// One variation: generated, repaired where that is safe and checked against the
    /// selection (`RewriteVerifier.verify`), and while it still fails, generated again as
    /// `RetryPolicy` says. `prompt(n, toneHint, examples)` is attempt n's prompt; once an
    /// attempt has copied the worked examples (the small model takes a request whose frame is
    /// the example's own for a repeat of it), later ones are asked without them. Returns the
    /// variation (usage summed over its attempts) and the tokens of the attempt kept, for
    /// refinements (none when its text was repaired: the tokens no longer say it).
    static func rewrite(id: String, tone: Tone, audience: Audience, original: String, keyPoints: [String], language: String, instructions: [String],
                        attempts: Attempts, options: ResolvedOptions, engine: any LanguageModel, ctx: RequestContext, previous: String? = nil,
                        lengthBounds: ClosedRange<Double> = 0.3...3.0, opening: [String] = [],
                        prompt: (Int, String?, Bool) -> ModelPrompt) async throws -> (ComposeVariation, [Token]) {
        var usage = Usage.zero
        var policy = RetryPolicy(tone: tone, refinement: previous != nil, attempts: attempts, acceptsGrammar: engine.acceptsGrammar, selection: original,
                                 language: language)
        policy.opening = opening
        let facts = Facts.extract(original)
        var last: Attempt?
        var examples = true
        // With verify on, an attempt going wrong is stopped as it streams and the next begins.
        let watch = attempts.verify ? StreamWatch(instructions: instructions, source: original + (previous.map { "\n" + $0 } ?? ""),
                                                   language: language.split(separator: "-").first.map(String.init) ?? language) : nil
        let (best, verification) = try await attempts.run(progress: ctx.progress, part: id, { attempt in
            let plan = policy.plan(attempt: attempt, after: last)
            var o = options
            o.seed = Attempts.seed(options.seed, attempt: attempt)
            if attempt > 1 { o.sampling.temperature = min(o.sampling.temperature, RetryPolicy.laterTemperature) }
            let out: Generated, cleaned: String, constrained: Bool
            if plan.continues, let last {
                // The last attempt continued with its missing facts; when the sentence did not end, its text as it was.
                let ins = try await FactInsertion.run(plan.insert, mending: plan.mending, selection: original, language: language, into: last,
                                                      engine: engine, options: o, ctx: ctx, part: id)
                (out, cleaned, constrained) = (ins.out, ins.text ?? last.text, true)
            } else {
                (out, constrained) = try await generate(engine, prompt: prompt(attempt, plan.toneHint, examples), grammar: plan.grammar, options: o,
                                                        ctx: ctx, part: id, watch: watch)
                cleaned = ComposePrompt.clean(out.text)
            }
            usage = usage + out.usage
            let verified = RewriteVerifier.verify(.init(original: original, rewrite: cleaned, instructions: instructions, language: language,
                                                        lengthBounds: lengthBounds, previous: previous, examples: ComposePrompt.exampleTexts,
                                                        tone: policy.checkedTone), mode: attempts.mode)
            if !Facts.borrowed(from: ComposePrompt.exampleTexts, in: verified.value, original: original).isEmpty { examples = false }
            // A stopped stream's finding comes first; its tokens are not the whole output.
            let stop = out.stoppedBy.map { watch?.settled($0, kept: verified.value) ?? $0 }
            let a = Attempt(out: out, seed: o.seed, attempt: attempt, text: verified.value, findings: (stop.map { [$0] } ?? []) + verified.findings,
                            repaired: verified.value != cleaned || out.stoppedBy != nil || plan.continues,
                            missingFacts: Facts.missing(facts, in: verified.value).count, constrained: constrained, toneRetried: plan.toneHint != nil,
                            inserted: plan.continues)
            last = a
            return a
        }, check: \.findings, rank: policy.rank, worthRetrying: policy.worthRetrying)
        var v = finish(id: id, tone: tone, audience: audience, raw: best.out, text: best.text, original: original, keyPoints: keyPoints, seed: best.seed,
                       language: language, verification: verification)
        if best.attempt != verification.attempts || best.repaired {
            // An earlier attempt was better than the last one streamed, or the text was repaired: stream it again.
            ctx.progress(.init(kind: .report, message: best.repaired ? "attempt \(best.attempt) repaired" : "attempt \(best.attempt) kept",
                               phase: .verifying, delta: v.text, part: id, attempt: best.attempt, restart: true))
        }
        v.usage = Usage(promptTokens: usage.promptTokens, cachedPromptTokens: usage.cachedPromptTokens, generatedTokens: usage.generatedTokens,
                        firstTokenMs: best.out.usage.firstTokenMs, totalMs: usage.totalMs,
                        draftTokens: usage.draftTokens, acceptedDraftTokens: usage.acceptedDraftTokens)
        return (v, best.repaired ? [] : best.out.prompt.tokens + best.out.tokens)
    }

    /// One attempt's generation: under `grammar` when there is one; when the grammar does not
    /// build or leads to a dead end, freely (the attempt is then a free one).
    static func generate(_ engine: any LanguageModel, prompt: ModelPrompt, grammar: String?, options: ResolvedOptions, ctx: RequestContext,
                         part: String, watch: StreamWatch?) async throws -> (out: Generated, constrained: Bool) {
        guard let grammar else {
            return (try await Generation.run(engine, prompt: prompt, grammar: nil, options: options, progress: ctx.progress, part: part, watch: watch), false)
        }
        do {
            // The grammar's free gaps may not fill with a sentence already written.
            var o = options
            o.noRepeatRun = RetryPolicy.grammarRepeatRun
            return (try await Generation.run(engine, prompt: prompt, grammar: grammar, options: o, progress: ctx.progress, part: part, watch: watch), true)
        } catch let e as EngineError {
            if case .cancelled = e { throw e }
            return (try await Generation.run(engine, prompt: prompt, options: options, progress: ctx.progress, part: part, watch: watch), false)
        }
    }

    static func finish(id: String, tone: Tone, audience: Audience, raw: Generated, text: String, original: String, keyPoints: [String], seed: UInt32,
                       language: String, verification: Verification) -> ComposeVariation {
        let (kept, missing) = ComposeAnalyzer.check(keyPoints, against: text)
        return ComposeVariation(id: id, tone: tone, audience: audience, text: text, formalityScore: Formality.score(text, language: language),
                                keyPointsPreserved: kept, keyPointsMissing: missing, diff: WordDiff.diff(original, text),
                                seed: Int(seed), finishReason: raw.finishReason.rawValue, usage: raw.usage, verification: verification)
    }
}

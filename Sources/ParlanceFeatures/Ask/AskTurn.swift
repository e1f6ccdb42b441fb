import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// One question answered, as steps: the cache, retrieve (what the model is shown),
/// generate (attempts, each checked), decide (the outcome) and record (the session, the
/// conversation and the cache).
extension Ask {
    /// A question's state while it is answered.
    struct Turn {
        let question: String
        let number: Int
        /// The previous question, which a follow-up's retrieval also reads.
        let previous: String
        var convo: Conversation
        let cacheKey: AnalysisCache.Key
        /// The answerability model fitted for this model file, else the default's.
        let profile: AnswerabilityProfile
    }

    /// What retrieval found: the segments to show, or nothing relevant.
    enum Retrieved {
        case shown(Shown)
        case nothing(AskStream.Retrieval)
        var retrieval: AskStream.Retrieval {
            switch self {
            case .shown(let s): s.retrieval
            case .nothing(let r): r
            }
        }
    }

    /// What the model is shown for the question.
    struct Shown {
        var segments: [Segment]
        var ids: [Int]
        var prompt: ModelPrompt
        var userContent: String
        var retrieval: AskStream.Retrieval
        /// The question's terms found in the document (the first answerability feature).
        var coverage: Double
    }

    /// The best of the model's attempts, with what the checks found.
    struct Attempted {
        var out: Generated
        var user: String
        var verdict: Repaired<AnswerVerifier.Verdict>
        var attempt: Int
        /// The answer is the output cut at its last finished sentence (`maxTokens` ended it
        /// in the middle of one): it differs from what streamed.
        var cut = false
        /// This attempt or another of the same turn gave no answer of its own
        /// (`AnswerVerifier.givesNoAnswer`): what answerability reads as `modelSaysNotFound`.
        var noAnswerSeen = false
    }

    /// What the question gets: the model's answer (its citations checked), not found (the
    /// model or the evidence says the document does not answer), or the passage quoted that
    /// holds the answer where no model answer was usable.
    enum Outcome { case answered, notFound, extractive }

    struct Decision {
        var outcome: Outcome
        var answer: String
        var citations: [Segment]
        var verification: Verification
        var answerability: AskStream.Answerability
    }

    static func answer(_ p: AskStream.Params, input: AnalysisInput, engine: any LanguageModel, options: ResolvedOptions, session s: inout SessionState,
                       ctx: RequestContext) async throws -> AskStream.Result {
        // A second attempt rarely beats the extractive fallback by much: the budget allows about one.
        let attempts = Attempts(verify: p.verify, maxAttempts: p.maxAttempts, budgetFactor: 1.5)
        var turn = await begin(p, input: input, engine: engine, options: options, attempts: attempts, session: s)
        if s.turns.isEmpty, !options.refresh, let hit = try await cached(&turn, session: &s, ctx: ctx) { return hit }
        ctx.progress.report("retrieving", 2, phase: .tokenizing)
        let retrieved = await retrieve(&turn, input: input, engine: engine, options: options, session: &s)
        var meta = Meta(sessionId: s.id, turn: turn.number, input: input, provenance: options.provenance(engine), retrieval: retrieved.retrieval)
        let nothing = Verification(passed: true, attempts: 0, issues: [], fallback: .notFound)
        guard case .shown(let shown) = retrieved else { return await notFound(&turn, input: input, meta: meta, verification: nothing, session: &s, ctx: ctx) }
        let evidence = Answerability.evidence(question: turn.question, segments: shown.segments, language: input.language.language,
                                              openings: input.openings)
        let unasked = features(evidence, coverage: shown.coverage, passed: false, saysNotFound: false, support: 0, profile: turn.profile)
        if attempts.verify, !Ablation.off("answer.answerability"), Answerability.ceiling(unasked, turn.profile) < turn.profile.threshold {
            // No answer the model could write would outweigh the evidence that the document
            // never gives what is asked: not found, with no model call.
            var v = nothing
            v.issues = [Finding(.notAnswered, .notInDocument(expects: evidence.expects, answerability: unasked.probability), path: "answer",
                                action: .replaced(by: .notFound)).issue]
            return await notFound(&turn, input: input, meta: meta, answerability: unasked, verification: v, session: &s, ctx: ctx)
        }
        let (best, checked, usage) = try await generate(turn, shown: shown, evidence: evidence, language: input.language.language, engine: engine,
                                                        options: options, attempts: attempts, session: s, ctx: ctx)
        // Described again once generated: a pool's provenance names the endpoint that served.
        meta.provenance = options.provenance(engine)
        let decision = decide(best, checked: checked, turn: turn, shown: shown, evidence: evidence, input: input, verify: attempts.verify, ctx: ctx)
        let result = record(decision, best: best, turn: &turn, meta: meta, usage: usage, session: &s)
        s.conversation = turn.convo
        if turn.number == 1 {
            await ctx.services.analysisCache.put(turn.cacheKey, CachedAnswer(result: try JSONValue(encoding: result), user: best.user, raw: best.out.text,
                                                                             shown: turn.convo.shown.sorted()))
        }
        return result
    }

    /// The conversation this question continues (a new one when the document changed) and
    /// the key of its first answer in the cache.
    static func begin(_ p: AskStream.Params, input: AnalysisInput, engine: any LanguageModel, options: ResolvedOptions, attempts: Attempts,
                      session s: SessionState) async -> Turn {
        let known = s.conversation
        let convo = known.flatMap { $0.contentHash == input.contentHash ? $0 : nil }
            ?? Conversation(contentHash: input.contentHash, uri: input.uri, uris: input.documents?.parts.map(\.uri), shown: [],
                            exchanges: known?.exchanges ?? [])
        let question = p.question.trimmingCharacters(in: .whitespacesAndNewlines)
        var settings: JSONObject = [
            "question": .string(question), "seed": .int(Int(options.seed)), "deterministic": .bool(options.deterministic),
            "temperature": .double(options.sampling.temperature), "maxTokens": .int(options.maxTokens), "verify": .bool(attempts.verify),
            "maxAttempts": .int(attempts.maxAttempts), "answerability": 1,
        ]
        for (k, v) in options.chosenSampling { settings[k] = v }
        if options.languageRisk != nil { settings["languageFallback"] = "keep" }
        return Turn(question: question, number: s.turns.count / 2 + 1, previous: convo.exchanges.last?.question ?? "", convo: convo,
                    cacheKey: AnalysisCache.Key(method: AskStream.name, content: input.contentHash, settings: settings,
                                                language: input.language.language, model: engine.identity, uri: input.uri, modelName: engine.name),
                    profile: AnswerabilityProfile.of(model: engine.identity))
    }

    /// A first question answered before: the session continues from the cached exchange.
    static func cached(_ turn: inout Turn, session s: inout SessionState, ctx: RequestContext) async throws -> AskStream.Result? {
        guard let hit: CachedAnswer = await ctx.services.analysisCache.get(turn.cacheKey), case .object(var o) = hit.result else { return nil }
        s.turns = [ChatMessage(.user, hit.user), ChatMessage(.assistant, hit.raw)]
        s.history = []
        turn.convo.shown = Set(hit.shown)
        let answer = o["answer"]?.stringValue ?? ""
        turn.convo.exchanges.append((turn.question, answer))
        s.conversation = turn.convo
        ctx.progress(.init(kind: .report, message: "served from the analysis cache", percentage: 100, phase: .done, delta: answer))
        o["sessionId"] = .string(s.id)
        o["cached"] = true
        return try JSONValue.object(o).decode()
    }

    /// The segments to show (the whole document when it is short, else the best BM25
    /// segments not shown before) and the prompt; nil when nothing is relevant. A
    /// conversation that no longer fits starts its context again from this question's
    /// excerpts and a digest of the earlier exchanges.
    static func retrieve(_ turn: inout Turn, input: AnalysisInput, engine: any LanguageModel, options: ResolvedOptions,
                         session s: inout SessionState) async -> Retrieved {
        let query = turn.question + " " + turn.previous
        let qa = TokenBudget.qa.scaled(toContext: engine.contextSize)
        // The whole document is shown when it is short: beyond the retrieval budget a small
        // model answers no better from all of it than from its best segments, only slower.
        let wholeBudget = min(qa.input, Ask.retrievalBudget, engine.contextSize - options.maxTokens - 400)
        let whole = s.turns.isEmpty && input.promptText.utf8.count <= wholeBudget * 8 && engine.countTokens(input.promptText) <= wholeBudget
        let sel = await Retrieval.select(query, coverageQuery: turn.number == 1 ? turn.question : query, input: input, excluding: turn.convo.shown,
                                         budget: s.turns.isEmpty ? min(qa.input, Ask.retrievalBudget) : 500, tokenCount: engine.countTokens)
        var retrieval = AskStream.Retrieval(method: "bm25", wholeDocument: whole && sel.found, segmentsSearched: input.transcript.segments.count,
                                            segmentsUsed: [], topScore: (sel.topScore * 1000).rounded() / 1000,
                                            termCoverage: (sel.coverage * 100).rounded() / 100, documents: input.documents?.retrieval(used: []))
        guard sel.found else { return .nothing(retrieval) }
        let shownNow = whole ? input.transcript.segments : sel.segments
        let body = whole ? input.promptText : Retrieval.render(sel.segments, of: input)
        let taskText = "Question: \(turn.question)\n\(task)"
        var prompt: ModelPrompt
        var userContent: String
        if s.turns.isEmpty {
            let messages = AnalysisPrompt.messages(input, body: body, task: taskText)
            userContent = messages[1].content
            prompt = engine.render([ChatMessage(.system, AnalysisPrompt.system), messages[1]])
        } else {
            let more = shownNow.isEmpty ? "" : "More of the transcript:\n\(body)\n\n---\n"
            userContent = "\(more)Follow-up \(taskText) Write in \(input.languageName)."
            prompt = Sessions.prompt(for: s, adding: userContent, engine: engine)
        }
        turn.convo.shown.formUnion(shownNow.map(\.id))
        if prompt.count + options.maxTokens > engine.contextSize {
            let fresh = await Retrieval.select(query, coverageQuery: query, input: input, excluding: [],
                                               budget: min(qa.input, Ask.retrievalBudget), tokenCount: engine.countTokens)
            let earlier = turn.convo.exchanges.suffix(3).map { "Q: \($0.question)\nA: \($0.answer)" }.joined(separator: "\n")
            let messages = AnalysisPrompt.messages(input, body: Retrieval.render(fresh.segments, of: input), task: "Earlier in this conversation:\n\(earlier)\n\n\(taskText)")
            userContent = messages[1].content
            s.turns = []
            s.history = []
            prompt = engine.render([ChatMessage(.system, AnalysisPrompt.system), messages[1]])
            turn.convo.shown = Set(fresh.segments.map(\.id))
        }
        let ids = turn.convo.shown.sorted()
        if let docs = input.documents {
            retrieval.documents = docs.retrieval(used: ids)  // ids are per document: the set's own numbering stays inside
        } else {
            retrieval.segmentsUsed = ids
        }
        return .shown(Shown(segments: ids.compactMap { input.segment($0) }, ids: ids, prompt: prompt, userContent: userContent,
                            retrieval: retrieval, coverage: sel.coverage))
    }

    /// Nothing relevant, or evidence no answer could outweigh (`answerability`): say so, with
    /// no model call and no citation.
    static func notFound(_ turn: inout Turn, input: AnalysisInput, meta: Meta, answerability: AskStream.Answerability? = nil, verification: Verification,
                         session s: inout SessionState, ctx: RequestContext) async -> AskStream.Result {
        let text = Retrieval.notFound(input.language.language)
        s.turns += [ChatMessage(.user, "Question: \(turn.question)"), ChatMessage(.assistant, text)]
        s.history = []
        turn.convo.exchanges.append((turn.question, text))
        s.conversation = turn.convo
        ctx.progress(.init(kind: .report, message: answerability == nil ? nil : "the document does not answer the question", percentage: 100,
                           phase: .done, delta: text))
        let score = answerability.map { ((1 - $0.probability) * 1000).rounded() / 1000 }
        return meta.result(answer: text, found: false, citations: [], confidence: confidence(score ?? 0), score: score, answerability: answerability,
                           topics: [], usage: .zero, verification: verification)
    }

    /// The answerability features of this question's evidence and an answer's checks, with
    /// the calibrated probability read from them.
    static func features(_ evidence: Answerability.Evidence, coverage: Double, passed: Bool, saysNotFound: Bool, support: Double,
                         profile: AnswerabilityProfile) -> AskStream.Answerability {
        var f = Answerability.Features(expects: evidence.expects, questionCoverage: (coverage * 100).rounded() / 100,
                                       focusCoverage: (evidence.focusCoverage * 100).rounded() / 100,
                                       typedCoverage: (evidence.typedCoverage * 100).rounded() / 100,
                                       typeMissing: evidence.expects != nil && evidence.passage.isEmpty, modelPassed: passed,
                                       modelSaysNotFound: saysNotFound, answerSupport: (support * 100).rounded() / 100)
        f.sentenceCoverage = (evidence.sentenceCoverage * 100).rounded() / 100
        f.relationMissing = evidence.relationMissing ? true : nil
        f.probability = (Answerability.probability(f, profile) * 1000).rounded() / 1000
        return f
    }

    /// The model's attempts at the answer, as plain prose, each checked against the segments
    /// shown; later attempts add a stricter last line to the same prompt (the transcript
    /// before it stays cached). Then, for the answer kept, its fields (`fields`).
    static func generate(_ turn: Turn, shown: Shown, evidence: Answerability.Evidence, language: String, engine: any LanguageModel, options: ResolvedOptions,
                         attempts: Attempts, session s: SessionState, ctx: RequestContext) async throws -> (best: Attempted, checked: Verification, usage: Usage) {
        let instructions = [task, fieldsTask, AnalysisPrompt.system, stricter, "Question:", "Transcript:"]
        let passages = AnswerVerifier.Passages(shown.segments)
        var usage = Usage.zero
        // With verify on, an answer that starts to loop, echo the prompt or invent a fact is stopped as it streams.
        let watch = attempts.verify ? StreamWatch(instructions: instructions, source: turn.question + "\n" + shown.userContent,
                                                   facts: .init(scope: .segments, sources: AnswerVerifier.factSources(question: turn.question, segments: shown.segments)))
            : nil
        var o = options
        o.maxTokens = min(options.maxTokens, answerTokens)
        let grammar = engine.acceptsGrammar ? answerGrammar : nil
        var noAnswerSeen = false
        var (best, checked) = try await attempts.run(progress: ctx.progress, { attempt in
            o.seed = Attempts.seed(options.seed, attempt: attempt)
            let user = attempt == 1 ? shown.userContent : shown.userContent + "\n" + stricter
            let tokens = attempt == 1 ? shown.prompt
                : s.turns.isEmpty ? engine.render([ChatMessage(.system, AnalysisPrompt.system), ChatMessage(.user, user)])
                : Sessions.prompt(for: s, adding: user, engine: engine)
            var out = try await Generation.run(engine, prompt: tokens, grammar: grammar,
                                               options: o, cachePriority: .session,
                                               progress: answerStream(ctx.progress.scaled(attempt == 1 ? 10...95 : 95...95, expectedChars: 300)),
                                               watch: watch)
            usage = usage + out.usage
            var answer = out.text.trimmingCharacters(in: .whitespacesAndNewlines)
            let finished = StreamWatch.finishedSentences(answer + " ").trimmingCharacters(in: .whitespaces)
            let cut = out.finishReason == .length && !finished.isEmpty && finished != answer
            if cut { answer = finished }
            out.json = ["answer": .string(answer), "citations": [], "relatedTopics": []]
            // The answer's own checks; its citations are judged once the fields are written.
            let verdict = AnswerVerifier.check(question: turn.question, answer: answer, cited: [], passages: passages, instructions: instructions,
                                               mode: attempts.mode, language: language)
            noAnswerSeen = noAnswerSeen || AnswerVerifier.givesNoAnswer(verdict)
            return Attempted(out: out, user: user, verdict: verdict, attempt: attempt, cut: cut)
        }, check: { (a: Attempted) -> [Finding] in (a.out.stoppedBy.map { [$0] } ?? []) + a.verdict.findings.filter { $0.path != "citations" } })
        best.noAnswerSeen = noAnswerSeen
        guard best.out.stoppedBy == nil, !attempts.verify || (checked.passed && !best.verdict.saysNotFound) else { return (best, checked, usage) }
        // Only an answer that may be returned gets its fields.
        var kept = best
        var verification = checked
        var d: JSONValue = [:]
        do {
            let fields = try await Self.fields(of: best, shown: shown, engine: engine, options: options, ctx: ctx)
            usage = usage + fields.usage
            d = fields.json ?? [:]
        } catch let e as ResponseError where e.data?["error"] == "decodingFailure" {
            // The fields never matched their schema: the answer stands, cited as the repair finds.
        }
        let answer = best.out.json?["answer"]?.stringValue ?? ""
        let cited = d["citations"]?.arrayValue?.compactMap(\.intValue) ?? []
        kept.out.json = ["answer": .string(answer), "citations": .array(cited.map { .int($0) }), "relatedTopics": d["relatedTopics"] ?? []]
        kept.verdict = AnswerVerifier.check(question: turn.question, answer: answer, cited: cited, passages: passages, instructions: instructions,
                                            mode: attempts.mode, evidence: evidence.expects == nil ? [] : evidence.quote, language: language)
        let findings = kept.verdict.findings
        verification.issues = findings.map(\.issue)
        verification.passed = !findings.contains(where: \.isOpen)
        return (kept, verification, usage)
    }

    /// The answer's fields, `citations` (of the segments shown) and `relatedTopics`,
    /// generated under their schema as the next turn of the answer's own conversation: the
    /// prompt is the answer's prompt and tokens (in the cache already) and a short user turn,
    /// so only that turn is evaluated, on the endpoint that wrote the answer.
    static func fields(of best: Attempted, shown: Shown, engine: any LanguageModel, options: ResolvedOptions, ctx: RequestContext) async throws -> Generated {
        let answer = best.out.json?["answer"]?.stringValue ?? ""
        let messages = best.out.prompt.messages + [ChatMessage(.assistant, best.cut ? answer : best.out.text), ChatMessage(.user, fieldsTask)]
        // A cut answer is not the tokens generated: it is rendered again (its prompt still shares the cache).
        let prompt = engine.render(messages, history: best.cut ? nil : best.out.prompt.tokens + best.out.tokens, after: messages.count - 2)
        var o = options
        o.seed = Attempts.seed(options.seed, attempt: best.attempt)
        o.maxTokens = min(options.maxTokens, 80)
        return try await Generation.run(engine, prompt: prompt, schema: fieldsSchema(ids: shown.ids), options: o, cachePriority: .session,
                                        progress: withoutText(ctx.progress.scaled(96...99)))
    }
}

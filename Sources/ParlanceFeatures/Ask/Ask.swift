import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// `ask/stream`: retrieval (BM25) picks the segments to show, the model answers in JSON
/// whose `citations` the grammar limits to ids of segments it was shown, the answer text
/// streams as `$/progress` deltas, and the conversation lives in a session (the seed's
/// chained `previous_response_id`): a follow-up appends only its new tokens to the
/// session's KV history.
public enum Ask {
    /// What a conversation has shown the model, beside the session's own state.
    struct Conversation: Sendable {
        var contentHash: String
        /// The open document asked about, so a follow-up may give `sessionId` alone.
        var uri: String?
        var shown: Set<Int>
        var exchanges: [(question: String, answer: String)]
    }

    actor Conversations {
        static let shared = Conversations()
        private var items: [String: Conversation] = [:]
        private var order: [String] = []
        func get(_ id: String) -> Conversation? { items[id] }
        func set(_ id: String, _ c: Conversation) {
            if items.updateValue(c, forKey: id) == nil { order.append(id) }
            while order.count > 1024 { items[order.removeFirst()] = nil }
        }
    }

    /// A first answer as cached: the result and what the session needs to continue from it.
    struct CachedAnswer: Codable, Sendable {
        var result: JSONValue
        var user: String
        var raw: String
        var shown: [Int]
    }

    /// Tokens of transcript shown for a first question.
    static let retrievalBudget = 1200

    static let task = """
        Answer the question from the transcript only. Give answer (a few sentences), citations (the [id]s of the \
        lines that support it), confidence (low, medium or high) and relatedTopics (up to 4 short topics).
        """

    static func schema(ids: [Int], maxTokens: Int) -> JSONValue {
        let cite: JSONValue = ids.isEmpty ? ["type": "integer", "enum": [0]] : ["type": "integer", "enum": .array(ids.map { .int($0) })]
        return [
            "type": "object",
            "properties": [
                "answer": ["type": "string", "minLength": 1, "maxLength": .int(min(300, maxTokens * 2))],
                "citations": ["type": "array", "items": cite, "maxItems": ids.isEmpty ? 0 : 3],
                "confidence": ["type": "string", "enum": ["low", "medium", "high"]],
                "relatedTopics": ["type": "array", "items": ["type": "string", "minLength": 2, "maxLength": 40], "maxItems": 4],
            ],
            "required": ["answer", "citations", "confidence", "relatedTopics"],
            "additionalProperties": false,
        ]
    }

    /// Claims, in arrival order, the document asked about (its text as it is now) and the
    /// conversation's session (a follow-up while the previous question runs is refused);
    /// retrieval and the answer run as the work.
    public static func ask(_ p: AskStream.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> AskStream.Result {
        var uri = p.uri
        if let sid = p.sessionId, let m = p.model, let s = try? await ctx.services.sessions.get(sid), s.model != m {
            throw ResponseError.invalidParams("conversation \(sid) runs on model '\(s.model)' (its history is that model's tokens), not '\(m)'",
                                              data: ["error": "modelMismatch", "path": "/model", "model": .string(m), "sessionModel": .string(s.model)])
        }
        if let sid = p.sessionId, p.text == nil, uri == nil {
            // A follow-up by sessionId alone continues on the conversation's document.
            _ = try await ctx.services.sessions.get(sid)
            uri = await Conversations.shared.get(sid)?.uri
        }
        // Bad input is refused before a session is created for it.
        try AnalysisInput.checkSource(text: p.text, uri: uri)
        let ctx = await ctx.claimDocuments(uri.map { [$0] } ?? [])
        if let uri, await ctx.document(uri) == nil { throw ErrorMapping.notFound("document", uri) }
        let store = ctx.services.sessions
        let sessionId: String
        if let sid = p.sessionId { sessionId = sid } else {
            sessionId = await store.create(model: try ctx.modelName(), instructions: AnalysisPrompt.system, options: nil, trimming: .none)
        }
        let claimed = try await store.acquire(sessionId)
        return { [uri] in
            var session = claimed
            do {
                let input = try await AnalysisInput.resolve(text: p.text, uri: uri, language: p.language, ctx: ctx)
                let engine = try await ctx.engine(model: session.model)
                var options = ResolvedOptions(GenerationOptions(temperature: p.temperature, seed: p.seed, maxTokens: p.maxTokens ?? 200, deterministic: p.deterministic,
                                                                speculative: p.speculative),
                                              defaultTemperature: 0.2)
                options.copiesText = true  // quotes the segments shown
                let result = try await answer(p, input: input, engine: engine, options: options, session: &session, ctx: ctx)
                await store.release(session)
                return result
            } catch {
                await store.release(claimed)  // a failed or cancelled turn leaves the session as it was
                throw error
            }
        }
    }

    static func answer(_ p: AskStream.Params, input: AnalysisInput, engine: any LanguageModel, options: ResolvedOptions, session s: inout SessionState,
                       ctx: RequestContext) async throws -> AskStream.Result {
        let known = await Conversations.shared.get(s.id)
        var convo = known.flatMap { $0.contentHash == input.contentHash ? $0 : nil }
            ?? Conversation(contentHash: input.contentHash, uri: input.uri, shown: [], exchanges: known?.exchanges ?? [])
        let turn = s.turns.count / 2 + 1
        let question = p.question.trimmingCharacters(in: .whitespacesAndNewlines)
        // A second attempt rarely beats the extractive fallback by much: the budget allows about one.
        var attempts = Attempts(verify: p.verify, maxAttempts: p.maxAttempts, budgetFactor: 1.5)
        let cacheKey = [AskStream.name, input.contentHash, question, input.language.language, engine.identity, "\(options.seed)", "\(options.deterministic)",
                        "\(options.sampling.temperature)", "\(options.maxTokens)", "verify=\(attempts.verify)/\(attempts.maxAttempts)", "answerability=1"].joined(separator: "|")
        if s.turns.isEmpty, let hit: CachedAnswer = await ctx.services.analysisCache.get(cacheKey), case .object(var o) = hit.result {
            s.turns = [ChatMessage(.user, hit.user), ChatMessage(.assistant, hit.raw)]
            s.history = []
            convo.shown = Set(hit.shown)
            let answer = o["answer"]?.stringValue ?? ""
            convo.exchanges.append((question, answer))
            await Conversations.shared.set(s.id, convo)
            ctx.progress(.init(kind: .report, message: "served from the analysis cache", percentage: 100, phase: .done, delta: answer))
            o["sessionId"] = .string(s.id)
            o["cached"] = true
            return try JSONValue.object(o).decode()
        }
        let previous = convo.exchanges.last?.question ?? ""
        let qa = TokenBudget.qa.scaled(toContext: engine.contextSize)
        // The whole document is shown when it is short: beyond the retrieval budget a small
        // model answers no better from all of it than from its best segments, only slower.
        let wholeBudget = min(qa.input, Ask.retrievalBudget, engine.contextSize - options.maxTokens - 400)
        let whole = s.turns.isEmpty && input.promptText.utf8.count <= wholeBudget * 8 && engine.countTokens(input.promptText) <= wholeBudget
        ctx.progress.report("retrieving", 2, phase: .tokenizing)
        let sel = await Retrieval.select(question + " " + previous, coverageQuery: turn == 1 ? question : question + " " + previous,
                                         input: input, excluding: convo.shown, budget: s.turns.isEmpty ? min(qa.input, Ask.retrievalBudget) : 500,
                                         tokenCount: engine.countTokens)
        var meta: JSONObject = [
            "sessionId": .string(s.id), "turn": .int(turn), "language": .string(input.language.language), "cached": false,
            "provenance": try JSONValue(encoding: options.provenance(engine)),
        ]
        if let f = input.language.fallbackFrom { meta["fallbackFrom"] = .string(f) }
        var retrieval: JSONObject = [
            "method": "bm25", "wholeDocument": .bool(whole && sel.found), "segmentsSearched": .int(input.transcript.segments.count),
            "segmentsUsed": [], "topScore": .double((sel.topScore * 1000).rounded() / 1000), "termCoverage": .double((sel.coverage * 100).rounded() / 100),
        ]

        guard sel.found else {
            // Nothing relevant: say so, with no model call and no citation.
            let text = Retrieval.notFound(input.language.language)
            s.turns += [ChatMessage(.user, "Question: \(question)"), ChatMessage(.assistant, text)]
            s.history = []
            convo.exchanges.append((question, text))
            await Conversations.shared.set(s.id, convo)
            ctx.progress(.init(kind: .report, percentage: 100, phase: .done, delta: text))
            meta["retrieval"] = .object(retrieval)
            return try build(meta, answer: text, found: false, citations: [], confidence: "low", topics: [], usage: .zero,
                             verification: Verification(passed: true, attempts: 0, issues: [], fallback: .notFound))
        }

        let shownNow = whole ? input.transcript.segments : sel.segments
        let body = whole ? input.promptText : Retrieval.render(sel.segments)
        let taskText = "Question: \(question)\n\(task)"
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
        convo.shown.formUnion(shownNow.map(\.id))
        if prompt.count + options.maxTokens > engine.contextSize {
            // The conversation no longer fits: start its context again from this question's
            // excerpts and a digest of the earlier exchanges.
            let fresh = await Retrieval.select(question + " " + previous, coverageQuery: question + " " + previous, input: input, excluding: [],
                                               budget: min(qa.input, Ask.retrievalBudget), tokenCount: engine.countTokens)
            let excerpts = Retrieval.render(fresh.segments)
            let earlier = convo.exchanges.suffix(3).map { "Q: \($0.question)\nA: \($0.answer)" }.joined(separator: "\n")
            let messages = AnalysisPrompt.messages(input, body: excerpts, task: "Earlier in this conversation:\n\(earlier)\n\n\(taskText)")
            userContent = messages[1].content
            s.turns = []
            s.history = []
            prompt = engine.render([ChatMessage(.system, AnalysisPrompt.system), messages[1]])
            convo.shown = Set(fresh.segments.map(\.id))
        }
        let ids = convo.shown.sorted()
        retrieval["segmentsUsed"] = .array(ids.map { .int($0) })
        meta["retrieval"] = .object(retrieval)

        let shown = ids.compactMap { input.segment($0) }
        let passages = AnswerVerifier.Passages(shown)
        let evidence = Answerability.evidence(question: question, segments: shown)
        func features(passed: Bool, saysNotFound: Bool, support: Double) -> Answerability.Features {
            var f = Answerability.Features(expects: evidence.expects, questionCoverage: (sel.coverage * 100).rounded() / 100,
                                           focusCoverage: (evidence.focusCoverage * 100).rounded() / 100,
                                           typedCoverage: (evidence.typedCoverage * 100).rounded() / 100,
                                           typeMissing: evidence.expects != nil && evidence.passage.isEmpty, modelPassed: passed,
                                           modelSaysNotFound: saysNotFound, answerSupport: (support * 100).rounded() / 100)
            f.probability = (Answerability.probability(f) * 1000).rounded() / 1000
            return f
        }
        if features(passed: true, saysNotFound: false, support: 1).probability < Answerability.threshold {
            // Even a passing, supported answer would not outweigh the evidence that the
            // document never gives what is asked: one attempt, no retries.
            attempts.maxAttempts = 1
        }
        let instructions = [task, AnalysisPrompt.system, stricter, "Question:", "Transcript:"]
        var usage = Usage.zero
        let (best, firstVerification) = try await attempts.run(progress: ctx.progress, { attempt in
            var o = options
            o.seed = Attempts.seed(options.seed, attempt: attempt)
            // Later attempts: the same prompt with a stricter last line (the transcript before it stays cached).
            let user = attempt == 1 ? userContent : userContent + "\n" + stricter
            let tokens = attempt == 1 ? prompt
                : s.turns.isEmpty ? engine.render([ChatMessage(.system, AnalysisPrompt.system), ChatMessage(.user, user)])
                : Sessions.prompt(for: s, adding: user, engine: engine)
            let out = try await Generation.run(engine, prompt: tokens, schema: schema(ids: ids, maxTokens: options.maxTokens), options: o,
                                               cachePriority: .session, progress: answerStream(ctx.progress.scaled(attempt == 1 ? 10...99 : 99...99, expectedChars: 500)))
            usage = usage + out.usage
            let d = out.json ?? [:]
            let verdict = AnswerVerifier.check(question: question, answer: d["answer"]?.stringValue ?? "",
                                               cited: d["citations"]?.arrayValue?.compactMap(\.intValue) ?? [], passages: passages, instructions: instructions,
                                               mode: attempts.mode)
            return (out: out, user: user, verdict: verdict, attempt: attempt)
        }, check: { $0.verdict.findings })
        let out = best.out
        let d = out.json ?? [:]
        var verification = firstVerification
        let modelAnswer = d["answer"]?.stringValue ?? ""
        var answer = modelAnswer
        var found = !best.verdict.saysNotFound
        let answerability = features(passed: best.verdict.answerPassed, saysNotFound: best.verdict.saysNotFound,
                                     support: found ? Answerability.answerTermsFound(answer: modelAnswer, question: question, segments: shown) : 0)
        let answers = answerability.probability >= Answerability.threshold
        // verify: false: the model's own citations (of segments it was shown), as before the checks.
        var citations = attempts.verify ? best.verdict.citations.compactMap { input.segment($0) }
            : (d["citations"]?.arrayValue ?? []).compactMap { $0.intValue }.filter(convo.shown.contains).compactMap { input.segment($0) }
        citations = citations.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
        if attempts.verify, !answers, found || !verification.passed {
            // The evidence says the document does not give what is asked: whatever the model
            // answered (an unrelated quote, a near miss, an invented figure) is not an answer.
            let failed = verification.issues.map { i -> VerificationIssue in var r = i; r.repaired = true; return r }
            answer = Retrieval.notFound(input.language.language)
            found = false
            citations = []
            verification = Verification(passed: true, attempts: verification.attempts,
                                        issues: failed + [Finding(.notAnswered, .notInDocument(expects: evidence.expects, answerability: answerability.probability),
                                                                  path: "answer", action: .replaced(by: .notFound)).issue],
                                        fallback: .notFound)
            ctx.progress(.init(kind: .report, message: "the document does not answer the question", phase: .verifying, delta: answer,
                               attempt: verification.attempts, restart: true))
        } else if attempts.verify, answers, !verification.passed || !found {
            // No usable model answer (or the model said "not mentioned" where the evidence
            // holds the answer): quote the passage that holds it.
            let failed = verification.issues.map { i -> VerificationIssue in var r = i; r.repaired = true; return r }
            let quoted = extractive(question: question, evidence: evidence, passages: passages)
            let repaired = best.verdict.citations.compactMap { input.segment($0) }
            citations = quoted + repaired.filter { !quoted.contains($0) }.prefix(max(0, 3 - quoted.count))
            answer = quoted.map { quote($0) }.joined(separator: " ")
            found = true
            verification = Verification(passed: true, attempts: verification.attempts, issues: failed, fallback: .extractive)
            ctx.progress(.init(kind: .report, message: "no model answer passed verification: extractive answer", phase: .verifying,
                               delta: answer, attempt: verification.attempts, restart: true))
        }
        if found, verification.fallback == nil, best.attempt != verification.attempts {
            // An earlier attempt was better than the last one streamed: stream its answer again.
            ctx.progress(.init(kind: .report, message: "attempt \(best.attempt) kept", phase: .verifying, delta: answer,
                               attempt: best.attempt, restart: true))
        }
        if !found {
            citations = []
            if verification.fallback == nil {
                // The model said the document does not say: in the daemon's words, not its own.
                answer = Retrieval.notFound(input.language.language)
                ctx.progress(.init(kind: .report, message: "the model found no answer in the document", phase: .verifying, delta: answer,
                                   attempt: verification.attempts, restart: true))
            }
        }
        citations.sort { $0.id < $1.id }
        let score = found ? answerability.probability : 1 - answerability.probability
        let confidence = score >= 0.8 ? "high" : score >= 0.5 ? "medium" : "low"
        if answer == modelAnswer {
            s.turns += [ChatMessage(.user, best.user), ChatMessage(.assistant, out.text)]
            s.history = out.prompt.tokens + out.tokens
        } else {
            // The answer returned replaced the model's: the conversation goes on from what the
            // user was given (re-rendered next turn), not from the model's failed text.
            s.turns += [ChatMessage(.user, best.user), ChatMessage(.assistant, JSONValue.object(["answer": .string(answer)]).serialized())]
            s.history = []
        }
        convo.exchanges.append((question, answer))
        await Conversations.shared.set(s.id, convo)
        let topics = Analyses.dedupe(d["relatedTopics"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        var scored = meta
        scored["confidenceScore"] = .double((score * 1000).rounded() / 1000)
        scored["answerability"] = try JSONValue(encoding: answerability)
        let result = try build(scored, answer: answer, found: found, citations: citations, confidence: confidence, topics: found ? topics : [],
                               usage: usage, verification: verification)
        if turn == 1 {
            await ctx.services.analysisCache.put(cacheKey, CachedAnswer(result: try JSONValue(encoding: result), user: best.user, raw: out.text,
                                                                        shown: convo.shown.sorted()))
        }
        return result
    }

    /// The line added to the task from the second attempt on.
    static let stricter = "Answer in one or two plain sentences using only facts from the transcript above; if it does not say, answer that it is not mentioned."

    /// The extractive fallback: the passage the evidence found holding the question's subject
    /// and an answer of the kind asked for (the reply when it is an interviewer's question),
    /// else the shown segment that best matches the question.
    static func extractive(question: String, evidence: Answerability.Evidence, passages: AnswerVerifier.Passages) -> [Segment] {
        let held = evidence.passage.compactMap { id in passages.segments.first { $0.id == id } }
            .filter { !$0.text.trimmingCharacters(in: .whitespaces).hasSuffix("?") }
        if !held.isEmpty { return Array(held.prefix(2)) }
        let ranked = AnswerVerifier.relevant(question: question, passages: passages)
        let replies = ranked.filter { !$0.text.trimmingCharacters(in: .whitespaces).hasSuffix("?") }
        return Array(replies.prefix(1))
    }

    /// A segment quoted with its speaker and start time: “…” (Ana, 02:13).
    static func quote(_ s: Segment) -> String {
        var about: [String] = []
        if let sp = s.speaker { about.append(sp) }
        if let t = s.start { about.append(String(format: "%02d:%02d", Int(t) / 60, Int(t) % 60)) }
        return "\u{201C}\(s.text)\u{201D}" + (about.isEmpty ? "" : " (\(about.joined(separator: ", ")))")
    }

    static func build(_ meta: JSONObject, answer: String, found: Bool, citations: [Segment], confidence: String, topics: [String],
                      usage: Usage, verification: Verification) throws -> AskStream.Result {
        var o = meta
        o["verification"] = try JSONValue(encoding: verification)
        o["answer"] = .string(answer)
        o["found"] = .bool(found)
        o["citations"] = .array(citations.map { .object(Grounding.cited($0)) })
        o["confidence"] = .string(confidence)
        o["relatedTopics"] = .array(topics.map { .string($0) })
        if let span = Grounding.span(citations) { o["timestamp"] = .string(span) }
        o["usage"] = try JSONValue(encoding: usage)
        return try JSONValue.object(o).decode()
    }

    /// Streams the answer's text: each report's `delta` becomes the new characters of the
    /// JSON's `answer` string (the structured `partial` is kept). Deltas concatenate to
    /// the final answer.
    static func answerStream(_ outer: ProgressReporter) -> ProgressReporter {
        guard outer.isActive else { return outer }
        let state = Locked((raw: "", sent: ""))
        return ProgressReporter(token: outer.token) { v in
            guard case .object(var params) = v, case .object(var value)? = params["value"], let d = value["delta"]?.stringValue else {
                return outer.send(v)
            }
            let delta: String? = state.withLock { st in
                st.raw += d
                // Inside an escape the partial string is not final yet: wait for the next token.
                let trailing = st.raw.reversed().prefix { $0 == "\\" }.count
                guard trailing % 2 == 0, let answer = value["partial"]?["answer"]?.stringValue,
                      answer.hasPrefix(st.sent), answer.count > st.sent.count else { return nil }
                let new = String(answer.dropFirst(st.sent.count))
                st.sent = answer
                return new
            }
            value["delta"] = delta.map { .string($0) }
            params["value"] = .object(value)
            outer.send(.object(params))
        }
    }
}

import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// The last two steps of a question: decide what it gets, then record it.
extension Ask {
    /// The outcome from the best attempt, the checks and the answerability evidence. With
    /// `verify` on, an answer the evidence does not support becomes not found, and a failed
    /// or "not mentioned" answer where the evidence holds one becomes the passage quoted.
    /// Every change to what was streamed is streamed again (`restart`).
    static func decide(_ best: Attempted, checked: Verification, turn: Turn, shown: Shown, evidence: Answerability.Evidence,
                       input: AnalysisInput, verify: Bool, ctx: RequestContext) -> Decision {
        let d = best.out.json ?? [:]
        let modelAnswer = d["answer"]?.stringValue ?? ""
        let saysNotFound = best.verdict.saysNotFound
        let answerability = features(evidence, coverage: shown.coverage, passed: best.verdict.answerPassed,
                                     saysNotFound: best.noAnswerSeen || AnswerVerifier.givesNoAnswer(best.verdict),
                                     support: saysNotFound ? 0 : Answerability.answerTermsFound(answer: modelAnswer, question: turn.question,
                                                                                                 segments: shown.segments),
                                     profile: turn.profile)
        // verify: false: the model's own citations (of segments it was shown), as before the checks.
        let cited = verify ? best.verdict.citations.compactMap { input.segment($0) }
            : (d["citations"]?.arrayValue ?? []).compactMap { $0.intValue }.filter(Set(shown.ids).contains).compactMap { input.segment($0) }
        var decision = Decision(outcome: saysNotFound ? .notFound : .answered, answer: modelAnswer,
                                citations: cited.reduce(into: []) { if !$0.contains($1) { $0.append($1) } },
                                verification: checked, answerability: answerability)
        let answers = Ablation.off("answer.answerability") || answerability.probability >= turn.profile.threshold
        if verify, !answers, !saysNotFound || !checked.passed {
            decision = unanswerable(decision, evidence: evidence, input: input, ctx: ctx)
        } else if verify, answers, !checked.passed || saysNotFound, !Ablation.off("answer.extractive") {
            // Nothing to quote but the opening: the document does not give it after all.
            decision = quoted(decision, best: best, turn: turn, shown: shown, evidence: evidence, input: input, ctx: ctx)
                ?? unanswerable(decision, evidence: evidence, input: input, ctx: ctx)
        }
        if decision.outcome == .answered, decision.verification.fallback == nil, best.attempt != decision.verification.attempts || best.cut {
            // An earlier attempt was better than the last one streamed, or the answer was cut
            // at its last finished sentence: stream it again.
            let why = best.attempt != decision.verification.attempts ? "attempt \(best.attempt) kept" : "the answer ends at its last finished sentence"
            ctx.progress(.init(kind: .report, message: why, phase: .verifying, delta: decision.answer,
                               attempt: best.attempt, restart: true))
        }
        if decision.outcome == .notFound {
            decision.citations = []
            if decision.verification.fallback == nil {
                // The model said the document does not say: in the daemon's words, not its own.
                decision.answer = Retrieval.notFound(input.language.language)
                ctx.progress(.init(kind: .report, message: "the model found no answer in the document", phase: .verifying,
                                   delta: decision.answer, attempt: decision.verification.attempts, restart: true))
            }
        }
        decision.citations.sort { $0.id < $1.id }
        return decision
    }

    /// The evidence says the document does not give what is asked: whatever the model
    /// answered (an unrelated quote, a near miss, an invented figure) is not an answer.
    static func unanswerable(_ d: Decision, evidence: Answerability.Evidence, input: AnalysisInput, ctx: RequestContext) -> Decision {
        let failed = d.verification.issues.map { i -> VerificationIssue in var r = i; r.repaired = true; return r }
        let answer = Retrieval.notFound(input.language.language)
        let verification = Verification(passed: true, attempts: d.verification.attempts,
                                        issues: failed + [Finding(.notAnswered, .notInDocument(expects: evidence.expects, answerability: d.answerability.probability),
                                                                  path: "answer", action: .replaced(by: .notFound)).issue],
                                        fallback: .notFound)
        ctx.progress(.init(kind: .report, message: "the document does not answer the question", phase: .verifying, delta: answer,
                           attempt: verification.attempts, restart: true))
        return Decision(outcome: .notFound, answer: answer, citations: [], verification: verification, answerability: d.answerability)
    }

    /// No usable model answer (or the model said "not mentioned" where the evidence holds
    /// the answer): quote the passage that holds it; nil when there is none to quote.
    static func quoted(_ d: Decision, best: Attempted, turn: Turn, shown: Shown, evidence: Answerability.Evidence, input: AnalysisInput,
                       ctx: RequestContext) -> Decision? {
        let failed = d.verification.issues.map { i -> VerificationIssue in var r = i; r.repaired = true; return r }
        let quoted = extractive(question: turn.question, evidence: evidence, passages: AnswerVerifier.Passages(shown.segments),
                                openings: input.openings)
        guard !quoted.isEmpty else { return nil }
        let repaired = best.verdict.citations.compactMap { input.segment($0) }
        let citations = quoted + repaired.filter { !quoted.contains($0) }.prefix(max(0, 3 - quoted.count))
        let answer = quoted.map { quote($0, document: input.documents?.part(of: $0.id)?.title) }.joined(separator: " ")
        // A question that asks for no kind of value ("What did Pareto observe?"): the quote is
        // the passage that best matches its words, and nothing can tell whether it answers.
        // Said, and not passed; a quote holding the amount, time or name asked for passes.
        let unchecked = evidence.expects == nil
        let issues = failed + (unchecked ? [Finding(.notAnswered, .quoteUnchecked, path: "answer").issue] : [])
        let verification = Verification(passed: !unchecked, attempts: d.verification.attempts, issues: issues, fallback: .extractive)
        ctx.progress(.init(kind: .report, message: "no model answer passed verification: extractive answer", phase: .verifying,
                           delta: answer, attempt: verification.attempts, restart: true))
        return Decision(outcome: .extractive, answer: answer, citations: citations, verification: verification, answerability: d.answerability)
    }

    /// The session goes on from what the user was given; the conversation keeps the
    /// exchange; the result.
    static func record(_ d: Decision, best: Attempted, turn: inout Turn, meta: Meta, usage: Usage, session s: inout SessionState) -> AskStream.Result {
        let out = best.out
        if d.answer == out.json?["answer"]?.stringValue ?? "", !best.cut {
            s.turns += [ChatMessage(.user, best.user), ChatMessage(.assistant, out.text)]
            s.history = out.prompt.tokens + out.tokens
        } else {
            // The answer returned replaced the model's (or is its text cut short): the
            // conversation goes on from what the user was given (re-rendered next turn), not
            // from the model's failed text.
            s.turns += [ChatMessage(.user, best.user), ChatMessage(.assistant, d.answer)]
            s.history = []
        }
        turn.convo.exchanges.append((turn.question, d.answer))
        let found = d.outcome != .notFound
        let score = found ? d.answerability.probability : 1 - d.answerability.probability
        let topics = Analyses.dedupe(out.json?["relatedTopics"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        return meta.result(answer: d.answer, found: found, citations: d.citations, confidence: confidence(score),
                           score: (score * 1000).rounded() / 1000, answerability: d.answerability, topics: found ? topics : [],
                           usage: usage, verification: d.verification)
    }

    /// The confidence named by its score: high from 0.8, medium from 0.5.
    static func confidence(_ score: Double) -> AskStream.Confidence { score >= 0.8 ? .high : score >= 0.5 ? .medium : .low }

    /// What every result of a turn carries besides its answer.
    struct Meta {
        let sessionId: String
        let turn: Int
        let input: AnalysisInput
        var provenance: Provenance
        let retrieval: AskStream.Retrieval

        func result(answer: String, found: Bool, citations: [Segment], confidence: AskStream.Confidence, score: Double? = nil,
                    answerability: AskStream.Answerability? = nil, topics: [String], usage: Usage, verification: Verification) -> AskStream.Result {
            AskStream.Result(answer: answer, found: found, citations: cite(citations), confidence: confidence,
                             confidenceScore: score, answerability: answerability, relatedTopics: topics, timestamp: timestamp(citations),
                             sessionId: sessionId, turn: turn, retrieval: retrieval, language: input.language.language,
                             fallbackFrom: input.language.fallbackFrom, cached: false, verification: verification, usage: usage, provenance: provenance)
        }

        /// The cited segments as their documents have them (over `uris`, each named by its uri).
        func cite(_ segments: [Segment]) -> [AskStream.Citation] {
            guard let docs = input.documents else { return segments.map(Grounding.citation) }
            return segments.compactMap(docs.citation)
        }

        /// The cited span, when the citations are in one document (times of two recordings make no span).
        func timestamp(_ segments: [Segment]) -> String? {
            guard let docs = input.documents else { return Grounding.span(segments) }
            guard Set(segments.compactMap { docs.part(of: $0.id)?.uri }).count == 1 else { return nil }
            return Grounding.span(segments.compactMap { docs.local($0)?.segment })
        }
    }
}

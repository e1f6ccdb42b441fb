import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// `ask/stream`: retrieval (BM25) picks the segments to show, the model writes its answer as
/// prose (streamed as `$/progress` deltas), then the answer's `citations`, which the
/// grammar limits to ids of segments it was shown, and the conversation lives in a session (the seed's
/// chained `previous_response_id`): a follow-up appends only its new tokens to the
/// session's KV history.
public enum Ask {
    /// What a conversation has shown the model, beside the session's own state: kept in the
    /// session (`SessionState.conversation`), so it goes when the session does.
    struct Conversation: Sendable {
        var contentHash: String
        /// The open document (or documents, `uris`) asked about, so a follow-up may give `sessionId` alone.
        var uri: String?
        var uris: [String]?
        var shown: Set<Int>
        var exchanges: [(question: String, answer: String)]
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

    /// The answer's task: plain prose, where a small model writes it best (inside a JSON
    /// string it continues the task line, copies a transcript line or writes log timestamps).
    static let task = "Answer the question from the transcript only, in one to three plain sentences."

    /// The fields' task: the user's next turn, once the model has answered.
    static let fieldsTask = "Give citations (the [id]s of the transcript lines that support your answer) and relatedTopics (up to 4 short topics)."

    /// The answer is one paragraph of prose: no line break (a transcript line continued)
    /// and no brace (JSON imitated). Local engines only. (Ruling out the openings that copy
    /// the prompt, "Transcript: [1] …" or a line's "Sam: …", was tried: the model then
    /// wrote "Transcribed from the original text: Sam: …", which no check caught, where the
    /// copy it would have written fails the checks and is retried or quoted instead.)
    static let answerGrammar = #"root ::= [^\n{}]+"#

    /// Tokens the answer may take: a few sentences.
    static let answerTokens = 120

    /// The fields generated after the answer.
    static func fieldsSchema(ids: [Int]) -> JSONValue {
        let cite: JSONValue = ids.isEmpty ? ["type": "integer", "enum": [0]] : ["type": "integer", "enum": .array(ids.map { .int($0) })]
        return [
            "type": "object",
            "properties": [
                "citations": ["type": "array", "items": cite, "maxItems": ids.isEmpty ? 0 : 3],
                "relatedTopics": ["type": "array", "items": ["type": "string", "minLength": 2, "maxLength": 40], "maxItems": 4],
            ],
            "required": ["citations", "relatedTopics"],
            "additionalProperties": false,
        ]
    }

    /// Claims, in arrival order, the document asked about (its text as it is now) and the
    /// conversation's session (a follow-up while the previous question runs is refused);
    /// retrieval and the answer run as the work.
    public static func ask(_ p: AskStream.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> AskStream.Result {
        var uri = p.uri
        var uris = p.uris
        if let sid = p.sessionId, let m = p.model, let s = try? await ctx.services.sessions.get(sid), s.model != m {
            throw ResponseError.invalidParams("conversation \(sid) runs on model '\(s.model)' (its history is that model's tokens), not '\(m)'",
                                              data: ["error": "modelMismatch", "path": "/model", "model": .string(m), "sessionModel": .string(s.model)])
        }
        if let sid = p.sessionId, p.text == nil, uri == nil, uris == nil {
            // A follow-up by sessionId alone continues on the conversation's document or documents.
            let convo = try await ctx.services.sessions.get(sid).conversation
            uri = convo?.uri
            uris = convo?.uris
        }
        // Bad input is refused before a session is created for it.
        if uris == nil, uri == nil, p.text == nil {
            throw ResponseError.invalidParams("give 'uri', 'uris' or 'text'", data: ["path": "(root)", "keyword": "required"])
        }
        if let uris { try AskDocuments.check(uris: uris, uri: uri, text: p.text) } else { try AnalysisInput.checkSource(text: p.text, uri: uri) }
        let ctx = await ctx.claimDocuments(uris ?? uri.map { [$0] } ?? [])
        if let uri, await ctx.document(uri) == nil { throw ErrorMapping.notFound("document", uri) }
        for (i, u) in (uris ?? []).enumerated() where await ctx.document(u) == nil { throw AskDocuments.unknown(u, at: i) }
        let store = ctx.services.sessions
        let sessionId: String
        if let sid = p.sessionId { sessionId = sid } else {
            sessionId = await store.create(model: try ctx.modelName(), instructions: AnalysisPrompt.system, options: nil, trimming: .none)
        }
        let claimed = try await store.acquire(sessionId)
        return { [uri, uris] in
            var session = claimed
            do {
                let input = if let uris {
                    try await AskDocuments.input(uris: uris, language: p.language, fallback: p.languageFallback, model: session.model, ctx: ctx)
                } else {
                    try await AnalysisInput.resolve(text: p.text, uri: uri, language: p.language, fallback: p.languageFallback,
                                                    model: session.model, ctx: ctx)
                }
                let engine = try await ctx.engine(model: session.model)
                var options = ResolvedOptions(p.controls, maxTokens: p.maxTokens ?? 200, defaultTemperature: 0.2)
                options.languageRisk = input.languageRisk
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

    /// The line added to the task from the second attempt on.
    static let stricter = "Answer in one or two plain sentences using only facts from the transcript above; if it does not say, answer that it is not mentioned."

    /// The extractive fallback: of the passage the evidence found holding the question's subject
    /// and an answer of the kind asked for, the segments with the answer (the reply when it is an
    /// interviewer's question). Never a transcript's opening segment (`openings`, one per document:
    /// a welcome that names the topic shares the question's words and answers nothing); empty when
    /// nothing else is left, and then the answer is "not found".
    /// Until issue 77 it fell back further, to the shown segment that best matched the
    /// question's words: that quoted what does not answer ("What three changes did Fernhill
    /// make…?" got "Yes, and honestly it's the part we underestimated at Fernhill.", found:
    /// true), and on a capable model overrode its right "not found" with the talk's opening words.
    static func extractive(question: String, evidence: Answerability.Evidence, passages: AnswerVerifier.Passages, openings: Set<Int>) -> [Segment] {
        let quotable = { (s: Segment) in
            !openings.contains(s.id) && !s.text.trimmingCharacters(in: .whitespaces).hasSuffix("?") && addsToQuestion(s.text, question)
        }
        let held = evidence.quote.compactMap { id in passages.segments.first { $0.id == id } }.filter(quotable)
        return Array(held.prefix(2))
    }

    /// Content words a quote must have beyond the question's own to say anything: "There are
    /// three main sources of a discrimination." restates "What are the three main sources of
    /// discrimination…?" and answers nothing (a real talk's quote, once returned as found).
    static let quoteNewTerms = 2

    /// `text` says something the question does not: `quoteNewTerms` of its content terms
    /// (`TextChecks.terms`, stemmed: a plural and its singular are one) are not the question's.
    static func addsToQuestion(_ text: String, _ question: String) -> Bool {
        TextChecks.terms(text).subtracting(TextChecks.terms(question)).count >= quoteNewTerms
    }

    /// A segment quoted with its speaker and start time: “…” (Ana, 02:13); over several
    /// documents, with its document's title too: “…” (Ana, 02:13, ep12.srt).
    static func quote(_ s: Segment, document: String? = nil) -> String {
        var about: [String] = []
        if let sp = s.speaker { about.append(sp) }
        if let t = s.start { about.append(String(format: "%02d:%02d", Int(t) / 60, Int(t) % 60)) }
        if let document { about.append(document) }
        return "\u{201C}\(s.text)\u{201D}" + (about.isEmpty ? "" : " (\(about.joined(separator: ", ")))")
    }

    /// Streams the answer's text as the model writes it, without its leading and trailing
    /// white space (white space is held until text follows it), so the deltas concatenate to
    /// the answer returned.
    static func answerStream(_ outer: ProgressReporter) -> ProgressReporter {
        guard outer.isActive else { return outer }
        let held = Locked((started: false, pending: ""))
        return ProgressReporter(token: outer.token) { v in
            guard case .object(var params) = v, case .object(var value)? = params["value"], let d = value["delta"]?.stringValue else {
                return outer.send(v)
            }
            let delta: String? = held.withLock { st in
                var text = st.pending + d
                if !st.started { text = String(text.drop { $0.isWhitespace }) }
                let body = text.reversed().drop { $0.isWhitespace }
                st.pending = String(text.suffix(text.count - body.count))
                guard !body.isEmpty else { return nil }
                st.started = true
                return String(body.reversed())
            }
            value["delta"] = delta.map { .string($0) }
            params["value"] = .object(value)
            outer.send(.object(params))
        }
    }

    /// Reports without text: the fields' generation streams no delta (the answer streamed).
    static func withoutText(_ outer: ProgressReporter) -> ProgressReporter {
        guard outer.isActive else { return outer }
        return ProgressReporter(token: outer.token) { v in
            guard case .object(var params) = v, case .object(var value)? = params["value"] else { return outer.send(v) }
            value["delta"] = nil
            value["partial"] = nil
            params["value"] = .object(value)
            outer.send(.object(params))
        }
    }
}

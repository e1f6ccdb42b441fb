import Foundation
import ParlanceEngine
import ParlanceHash
import ParlanceJSON
import ParlanceProtocol
import ParlanceRemote
import Synchronization

/// A remote model's failure: which model, which endpoint, what went wrong, after how many
/// attempts. Mapped to `-32011 remoteFailed` (`ErrorMapping`).
public struct RemoteCallError: Error, Sendable {
    public var model: String
    public var host: String
    public var fault: RemoteFault
    public var attempts: Int
    /// The text streamed before a failure mid-stream (nil: none was).
    public var partial: String? = nil
    /// Why a pool could not serve it (`poolSaturated`, `poolUnavailable`) and its numbers,
    /// merged into the error's `data`.
    public var details: JSONObject = [:]
}

/// A model served by an OpenAI-compatible server (llama-server, vLLM, Ollama, a hosted
/// API): every feature's generations become `/chat/completions` calls, streamed. At most
/// `maxConcurrentRequests` calls are in flight (more wait, in arrival order); a call that
/// fails before its first token (no connection, timeout, 5xx, 429) is sent again with
/// backoff while the request's retry budget lasts.
public final class RemoteModel: LanguageModel {
    public let name: String
    public let client: OpenAIClient
    public var endpoint: OpenAIEndpoint { client.endpoint }
    let limiter: FIFOLimiter
    /// What the server told us (once it answered): its context, whether it counts tokens,
    /// characters per token measured by its tokenizer.
    private let learned = Mutex<Learned>(Learned())
    struct Learned {
        var contextSize: Int?
        var servedModel: String?
        var counts: Bool?
        var charsPerToken: Double?
        var checked = false
        /// The server took llama.cpp's and vLLM's sampler fields (top_k, min_p, repeat
        /// penalty); false once it refused them (a hosted API answers 400), then never sent.
        var samplerExtensions = true
    }

    /// Retries of a call that failed before its first token (after the first attempt).
    static let maxRetries = 2
    static let defaultContext = 4096
    /// How long `model/status` waits for the server before calling it unavailable.
    static let statusTimeout = Duration.seconds(5)

    public init(name: String, endpoint: OpenAIEndpoint, http: HTTPClient = .shared) {
        self.name = name
        client = OpenAIClient(endpoint, http: http)
        limiter = FIFOLimiter(endpoint.maxConcurrentRequests)
    }

    public var contextSize: Int { endpoint.contextSize ?? learned.withLock { $0.contextSize } ?? Self.defaultContext }
    public var parallel: Int { endpoint.maxConcurrentRequests }
    public var servedModel: String? { endpoint.servedModel ?? learned.withLock { $0.servedModel } }
    public var identity: String { "openai:\(endpoint.host)/\(servedModel ?? "")" }
    public var hasToolRole: Bool { false }
    public var acceptsGrammar: Bool { false }
    /// True once the server's `/tokenize` answered (token counts are calibrated by it).
    public var serverCountsTokens: Bool { learned.withLock { $0.counts } ?? false }
    public var activeCalls: Int { limiter.inUse }
    /// Whether the server answered what it serves.
    public var prepared: Bool { learned.withLock { $0.checked } }

    /// Asks the server what it serves (once, until it answers): the served model (the
    /// first one listed when none is configured), its context length, and its tokenizer's
    /// characters per token. Throws when the endpoint cannot be reached.
    public func prepare() async throws {
        if learned.withLock({ $0.checked }) { return }
        try await learn(timeout: nil)
    }

    /// Lists the server's models (within `timeout`, else the endpoint's) and learns from it;
    /// returns what it lists.
    @discardableResult
    private func learn(timeout: Duration?) async throws -> [String] {
        let listed: [(id: String, contextLength: Int?)]
        do { listed = try await client.models(timeout: timeout) } catch let f as RemoteFault { throw RemoteCallError(model: name, host: endpoint.host, fault: f, attempts: 1) }
        let served = endpoint.servedModel ?? listed.first?.id
        if let want = endpoint.servedModel, !listed.isEmpty, !listed.contains(where: { $0.id == want }) {
            throw RemoteCallError(model: name, host: endpoint.host, fault: RemoteFault(
                .remoteError, "\(endpoint.host) does not serve '\(want)'; it serves: \(listed.map(\.id).joined(separator: ", "))",
                status: 404, retryable: false), attempts: 1)
        }
        let slot = await client.contextPerSlot()
        let context = slot ?? listed.first(where: { $0.id == served })?.contextLength
        // Calibrate the estimate with the server's own tokenizer when it has one.
        let sample = Self.calibrationText
        let count = try? await client.tokenize(sample)
        learned.withLock {
            $0.servedModel = served
            $0.contextSize = context
            $0.counts = count != nil
            if let c = count, c > 0 { $0.charsPerToken = Double(sample.utf8.count) / Double(c) }
            $0.checked = true
        }
        return listed.map(\.id)
    }

    /// Checks the endpoint now (`model/status`): what it serves, or why it cannot be used.
    public func check() async -> Result<[String], RemoteCallError> {
        do {
            return .success(try await learn(timeout: min(endpoint.timeout, Self.statusTimeout)))
        } catch let e as RemoteCallError {
            return .failure(e)
        } catch {
            return .failure(RemoteCallError(model: name, host: endpoint.host, fault: RemoteFault(.remoteUnavailable, "\(error)", retryable: false), attempts: 1))
        }
    }

    static let calibrationText = """
        Parlance summarizes transcripts, rewrites a selection in another tone, and answers questions with citations. \
        The meeting on Tuesday covered the budget for 2027, three open hiring positions, and the launch plan.
        """

    /// Tokens in `text`: characters over the server tokenizer's measured characters per
    /// token (3.0 before it is measured, or when the server has no `/tokenize`), rounded up —
    /// an estimate, used for budgets; results take the server's own `usage`.
    public func countTokens(_ text: String) -> Int {
        let ratio = learned.withLock { $0.charsPerToken } ?? 3.0
        return Int((Double(text.utf8.count) / max(1, ratio)).rounded(.up))
    }

    func estimate(_ messages: [ChatMessage]) -> Int {
        messages.reduce(2) { $0 + countTokens($1.content) + 5 }
    }

    public func render(_ messages: [ChatMessage], addAssistant: Bool) -> ModelPrompt {
        ModelPrompt(messages: messages, tokens: [], count: estimate(messages))
    }

    public func render(_ messages: [ChatMessage], history: [Token], after index: Int, endingAtContentOf end: Int?) -> ModelPrompt {
        render(end.map { Array(messages[...$0]) } ?? messages, addAssistant: true)
    }

    public func render(_ messages: [ChatMessage], endingAtContentOf end: Int) -> ModelPrompt {
        render(Array(messages[...end]), addAssistant: false)
    }

    public func describe(_ p: inout Provenance) {
        p.modelSha256 = SHA256.hex(identity)
        p.templateSha256 = SHA256.hex("")
        p.endpoint = endpoint.host
        p.servedModel = servedModel
    }

    /// The `/chat/completions` body.
    func body(_ r: ModelRequest, extensions: Bool) -> JSONValue {
        var b: JSONObject = [
            "messages": .array(r.prompt.messages.map { ["role": .string($0.role == .tool ? "user" : $0.role.rawValue), "content": .string($0.content)] }),
            "stream": true,
            "stream_options": ["include_usage": true],
            "max_tokens": .int(r.maxTokens),
            "temperature": .double(r.sampling.temperature),
            "top_p": .double(r.sampling.topP),
            "seed": .int(Int(r.seed)),
        ]
        if let m = servedModel { b["model"] = .string(m) }
        if extensions {
            // llama-server reads top_k, min_p and repeat_penalty; vLLM top_k, min_p and
            // repetition_penalty; Ollama ignores them. The same sampler as a local model.
            b["top_k"] = .int(r.sampling.topK)
            b["min_p"] = .double(r.sampling.minP)
            b["repeat_penalty"] = .double(r.sampling.repeatPenalty)
            b["repetition_penalty"] = .double(r.sampling.repeatPenalty)
            // Speculative decoding is the server's own (llama-server: --spec-type,
            // --draft-max); a request that turns it off says so in the field llama-server
            // reads per request. Servers without it ignore the field.
            if r.speculative == false { b["speculative.n_max"] = .int(0) }
        }
        if case .schema(let s) = r.constraint {
            b["response_format"] = ["type": "json_schema", "json_schema": ["name": "output", "strict": true, "schema": s]]
        }
        if r.prompt.messages.last?.role == .assistant {
            // The reply so far, continued rather than answered (a pool's continuation): the
            // field llama-server and vLLM both read.
            b["continue_final_message"] = true
            b["add_generation_prompt"] = false
        }
        return .object(b)
    }

    public func generate(_ r: ModelRequest) -> AsyncThrowingStream<GenerationEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    continuation.yield(.done(try await self.run(r, continuation)))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private func run(_ r: ModelRequest, _ out: AsyncThrowingStream<GenerationEvent, any Error>.Continuation) async throws -> GenerationResult {
        let start = ContinuousClock.now
        if let done = try r.answeredBeforeSending() { return done }
        try await prepare()
        // Retries end by this deadline: twice the endpoint's timeout after the request began.
        let deadline = start + endpoint.timeout * 2
        var attempt = 0
        while true {
            attempt += 1
            try await limiter.acquire { position in out.yield(.queued(position: position)) }
            do {
                defer { limiter.release() }
                return try await call(r, start: start, out).result
            } catch let failed as AttemptFailure {
                let f = failed.fault
                // Only a call that wrote nothing yet is sent again (what streamed cannot be unsent).
                var wait = Duration.milliseconds(250 * (1 << (attempt - 1)))
                if let ms = f.retryAfterMs { wait = .milliseconds(ms) }
                guard f.retryable, failed.partial.isEmpty, attempt <= Self.maxRetries, .now + wait < deadline, !Task.isCancelled else {
                    throw RemoteCallError(model: name, host: endpoint.host, fault: f, attempts: attempt, partial: failed.partial.isEmpty ? nil : failed.partial)
                }
                try await Task.sleep(for: wait)
            }
        }
    }

    /// One call that failed: the fault, and the text it had streamed before (empty: none,
    /// so sending it again, here or elsewhere, repeats nothing).
    struct AttemptFailure: Error {
        var fault: RemoteFault
        var partial: String
    }

    /// What one call returned, with the cached prompt tokens as the server reported them
    /// (nil: it did not say, which is not 0).
    struct CallResult {
        var result: GenerationResult
        var reportedCached: Int?
    }

    /// One `/chat/completions` call, its deltas streamed to `out`: no limiter and no retry
    /// (the caller does those: `run` on this endpoint, a pool across its endpoints). Throws
    /// `AttemptFailure`, or `EngineError.cancelled` with the partial text.
    func call(_ r: ModelRequest, start: ContinuousClock.Instant, _ out: AsyncThrowingStream<GenerationEvent, any Error>.Continuation) async throws -> CallResult {
        let queued = ContinuousClock.now
        while true {
            var text = ""
            var firstToken: ContinuousClock.Instant?
            var finish = "stop"
            var usage: (prompt: Int, completion: Int, cached: Int?)?
            let extensions = learned.withLock { $0.samplerExtensions }
            do {
                for try await e in client.streamChat(body(r, extensions: extensions)) {
                    switch e {
                    case .delta(let d):
                        if firstToken == nil { firstToken = .now }
                        text += d
                        out.yield(.text(d))
                    case .finish(let f): finish = f
                    case .usage(let p, let c, let cached): usage = (p, c, cached)
                    }
                }
                try Task.checkCancellation()
            } catch let f as RemoteFault {
                // A cancelled request's stream ends early by our own doing: that is the cancel, not a fault.
                if Task.isCancelled { throw EngineError.cancelled(partial: text, generatedTokens: countTokens(text)) }
                if extensions, f.status == 400, let m = f.serverMessage?.lowercased(),
                   ["top_k", "min_p", "repeat_penalty", "repetition_penalty"].contains(where: { m.contains($0) }) {
                    // A strict server (OpenAI's own) refuses fields it does not know: the standard ones only, from now on.
                    learned.withLock { $0.samplerExtensions = false }
                    continue
                }
                throw AttemptFailure(fault: f, partial: text)
            } catch is CancellationError {
                throw EngineError.cancelled(partial: text, generatedTokens: countTokens(text))
            }
            if Task.isCancelled { throw EngineError.cancelled(partial: text, generatedTokens: countTokens(text)) }
            let end = ContinuousClock.now
            func ms(_ d: Duration) -> Double { d.inSeconds * 1000 }
            var stats = GenerationStats(
                promptTokens: usage?.prompt ?? r.prompt.count, cachedPromptTokens: usage?.cached ?? 0,
                generatedTokens: usage?.completion ?? countTokens(text), queuedMs: ms(queued - start),
                firstTokenMs: firstToken.map { ms($0 - start) } ?? 0, totalMs: ms(end - start))
            stats.estimated = usage == nil
            return CallResult(result: GenerationResult(text: text, tokens: [], finishReason: finish == "length" ? .length : .stop, stats: stats),
                              reportedCached: usage?.cached)
        }
    }
}

/// At most `limit` holders at once; waiters are served in arrival order, and a waiter
/// whose task is cancelled leaves the line.
final class FIFOLimiter: Sendable {
    private struct State {
        var free: Int
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextId: UInt64 = 0
    }
    private let state: Mutex<State>
    private let limit: Int

    init(_ limit: Int) {
        self.limit = max(1, limit)
        state = Mutex(State(free: max(1, limit)))
    }

    var inUse: Int { state.withLock { limit - $0.free } }

    /// Waits for a place; `queued(position)` is told the 1-based place in line when it must wait.
    func acquire(queued: (Int) -> Void) async throws {
        let id: UInt64? = state.withLock { s in
            if s.free > 0 && s.waiting.isEmpty { s.free -= 1; return nil }
            s.nextId += 1
            return s.nextId
        }
        guard let id else { return }
        queued(state.withLock { $0.waiting.count + 1 })
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { s -> Bool in
                    if Task.isCancelled { return true }
                    s.waiting.append((id, c))
                    return false
                }
                if cancelled { c.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let c = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                guard let i = s.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiting.remove(at: i).continuation
            }
            c?.resume(throwing: CancellationError())
        }
    }

    func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, any Error>? in
            if !s.waiting.isEmpty { return s.waiting.removeFirst().continuation }
            s.free += 1
            return nil
        }
        next?.resume()
    }
}

extension ModelRequest {
    /// What a remote model answers without sending anything: a prewarm is done at once (the
    /// server caches prompts itself), and a GBNF grammar is refused (remote engines take
    /// JSON Schema constraints). Nil: send it.
    func answeredBeforeSending() throws -> GenerationResult? {
        if settings.maxTokens == 0 {
            return GenerationResult(text: "", tokens: [], finishReason: .prompt, stats: GenerationStats(
                promptTokens: 0, cachedPromptTokens: 0, generatedTokens: 0, queuedMs: 0, firstTokenMs: 0, totalMs: 0))
        }
        if case .grammar = constraint {
            throw EngineError.grammarRejected("a remote model takes JSON Schema constraints, not GBNF grammars")
        }
        return nil
    }
}

import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// A session's state. Its `history` is the exact token sequence the model has seen
/// (prompts and generated tokens), so turn N+1 is history + only its new tokens, and the
/// engine's prefix cache finds all of history already evaluated.
struct SessionState: Sendable {
    var id: String
    var instructions: String?
    var options: GenerationOptions?
    var trimming: SessionCreate.Trimming
    var turns: [ChatMessage] = []
    var history: [Token] = []
    var busy = false
    var lastUsed: UInt64 = 0

    var messages: [ChatMessage] { (instructions.map { [ChatMessage(.system, $0)] } ?? []) + turns }
}

/// Open sessions (and `ask/stream` conversations), at most `limit`: creating one more
/// closes the least recently used idle session, so a daemon left running all day by a
/// client that never calls `session/close` stays bounded.
public actor SessionStore {
    private var sessions: [String: SessionState] = [:]
    private var counter = 0
    private var tick: UInt64 = 0
    public let limit: Int
    public init(limit: Int = 1024) { self.limit = max(1, limit) }

    public var count: Int { sessions.count }

    func create(instructions: String?, options: GenerationOptions?, trimming: SessionCreate.Trimming) -> String {
        counter += 1
        tick += 1
        let id = "s\(counter)-\(UUID().uuidString.prefix(8).lowercased())"
        while sessions.count >= limit, let idle = sessions.values.filter({ !$0.busy }).min(by: { $0.lastUsed < $1.lastUsed }) {
            sessions[idle.id] = nil
        }
        sessions[id] = SessionState(id: id, instructions: instructions, options: options, trimming: trimming, lastUsed: tick)
        return id
    }

    func get(_ id: String) throws -> SessionState {
        guard let s = sessions[id] else { throw ErrorMapping.notFound("session", id) }
        return s
    }

    /// Marks the session busy; a second concurrent respond fails like FoundationModels'.
    func acquire(_ id: String) throws -> SessionState {
        var s = try get(id)
        if s.busy {
            throw ResponseError(ErrorCode(rawValue: ProtocolError.generationFailed.code), "session \(id) is already responding",
                                data: ["error": "concurrentRequests", "detail": "one request at a time per session"])
        }
        s.busy = true
        tick += 1
        s.lastUsed = tick
        sessions[id] = s
        return s
    }

    func release(_ s: SessionState) {
        guard sessions[s.id] != nil else { return }
        var s = s
        s.busy = false
        sessions[s.id] = s
    }

    func reset(_ id: String) throws {
        var s = try get(id)
        s.turns = []
        s.history = []
        sessions[id] = s
    }

    func close(_ id: String) throws {
        guard sessions.removeValue(forKey: id) != nil else { throw ErrorMapping.notFound("session", id) }
    }
}

public enum Sessions {
    public static func create(_ p: SessionCreate.Params, _ ctx: RequestContext) async throws -> SessionCreate.Result {
        .init(sessionId: await ctx.services.sessions.create(instructions: p.instructions, options: p.options, trimming: p.trimming ?? .none))
    }

    /// Claims the session when the request arrives (a second respond on a busy session
    /// is refused, as FoundationModels refuses it); the turn runs as the work.
    public static func respond(_ p: SessionRespond.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> SessionRespond.Result {
        let store = ctx.services.sessions
        if let schema = p.schema { _ = try GrammarBuilder.gbnf(for: schema) }  // bad schema: -32602 before any work
        let claimed = try await store.acquire(p.sessionId)
        return {
            var s = claimed
            do {
                let engine = try await ctx.engine()
                let result = try await respond(&s, p, engine: engine, ctx: ctx)
                await store.release(s)
                return result
            } catch {
                // A failed or cancelled turn leaves the session as it was before the turn.
                await store.release(claimed)
                throw error
            }
        }
    }

    static func respond(_ s: inout SessionState, _ p: SessionRespond.Params, engine: Engine, ctx: RequestContext) async throws -> SessionRespond.Result {
        let merged = merge(s.options, p.options)
        let options = ResolvedOptions(merged, defaultTemperature: 0.7, defaultMaxTokens: 512)
        var prompt = tokens(for: s, adding: p.prompt, engine: engine)
        while prompt.count + options.maxTokens > engine.info.contextSize {
            guard s.trimming == .dropOldest, !s.turns.isEmpty else {
                throw EngineError.exceededContextWindowSize(promptTokens: prompt.count, maxTokens: options.maxTokens, contextSize: engine.info.contextSize)
            }
            s.turns.removeFirst(min(2, s.turns.count))
            s.history = []
            prompt = tokens(for: s, adding: p.prompt, engine: engine)
        }
        let out = try await Generation.run(engine, prompt: prompt, schema: p.schema, options: options, cachePriority: .session, progress: ctx.progress)
        s.turns += [ChatMessage(.user, p.prompt), ChatMessage(.assistant, out.text)]
        s.history = prompt + out.tokens
        return .init(text: p.schema == nil ? out.text : nil, content: out.json, finishReason: out.finishReason.rawValue,
                     usage: out.usage, provenance: options.provenance(engine))
    }

    /// History plus the tokens of the new user turn (and the assistant header), or the
    /// whole conversation rendered when there is no history yet.
    static func tokens(for s: SessionState, adding prompt: String, engine: Engine) -> [Token] {
        let messages = s.messages + [ChatMessage(.user, prompt)]
        guard !s.history.isEmpty else { return engine.prompt.tokens(for: messages) }
        return s.history + engine.prompt.continuation(of: messages, after: messages.count - 2)
    }

    static func merge(_ a: GenerationOptions?, _ b: GenerationOptions?) -> GenerationOptions {
        GenerationOptions(temperature: b?.temperature ?? a?.temperature, topP: b?.topP ?? a?.topP, topK: b?.topK ?? a?.topK,
                          minP: b?.minP ?? a?.minP, repeatPenalty: b?.repeatPenalty ?? a?.repeatPenalty,
                          seed: b?.seed ?? a?.seed, maxTokens: b?.maxTokens ?? a?.maxTokens,
                          deterministic: b?.deterministic ?? a?.deterministic)
    }

    /// Evaluates what the next turn will start with, so its first token comes sooner:
    /// the history (or the instructions), plus an optional prefix of the coming prompt.
    public static func prewarm(_ p: SessionPrewarm.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> SessionPrewarm.Result {
        let s = try await ctx.services.sessions.get(p.sessionId)
        return { try await prewarm(s, p, ctx) }
    }

    static func prewarm(_ s: SessionState, _ p: SessionPrewarm.Params, _ ctx: RequestContext) async throws -> SessionPrewarm.Result {
        let engine = try await ctx.engine()
        let prompt: [Token]
        if let prefix = p.promptPrefix {
            let messages = s.messages + [ChatMessage(.user, prefix)]
            prompt = s.history.isEmpty
                ? engine.prompt.tokens(for: messages, endingAtContentOf: messages.count - 1)
                : s.history + engine.prompt.continuation(of: messages, after: messages.count - 2, endingAtContentOf: messages.count - 1)
        } else if !s.history.isEmpty {
            prompt = s.history
        } else if !s.messages.isEmpty {
            prompt = engine.prompt.tokens(for: s.messages, addAssistant: false)
        } else {
            return .init(usage: .zero)
        }
        let out = try await Generation.run(engine, prompt: prompt, options: ResolvedOptions(nil, defaultMaxTokens: 0),
                                           cachePriority: .session, progress: ctx.progress)
        return .init(usage: out.usage)
    }

    public static func transcript(_ p: SessionTranscript.Params, _ ctx: RequestContext) async throws -> SessionTranscript.Result {
        let s = try await ctx.services.sessions.get(p.sessionId)
        return .init(instructions: s.instructions, turns: s.turns.map { .init(role: $0.role.rawValue, content: $0.content) }, tokens: s.history.count)
    }

    public static func reset(_ p: SessionReset.Params, _ ctx: RequestContext) async throws -> Empty {
        try await ctx.services.sessions.reset(p.sessionId)
        return Empty()
    }

    public static func close(_ p: SessionClose.Params, _ ctx: RequestContext) async throws -> Empty {
        try await ctx.services.sessions.close(p.sessionId)
        return Empty()
    }
}

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
    /// The registry model the session was created on: its history is that model's tokens.
    var model: String
    var instructions: String?
    var options: GenerationOptions?
    var trimming: SessionCreate.Trimming
    var tools: [ToolDefinition] = []
    var toolSettings = ToolSettings()
    var entries: [SessionEntry] = []
    var history: [Token] = []
    /// An `ask/stream` conversation's own state (its document, the segments shown, the
    /// exchanges): it lives and goes with the session (`session/close`, eviction).
    var conversation: Ask.Conversation?
    var calls = 0
    var busy = false
    var lastUsed: UInt64 = 0

    /// The system message: the instructions, then how to call the tools (when there are any).
    var system: String? {
        let block = ToolPrompt.instructions(for: tools)
        switch (instructions, block) {
        case (let i?, let b?): return i + "\n\n" + b
        case (let i, let b): return i ?? b
        }
    }

    /// The conversation as plain prompt/response messages (`ask/stream`'s conversations).
    var turns: [ChatMessage] {
        get { entries.map(\.message) }
        set { entries = newValue.map { SessionEntry(message: $0, kind: $0.role == .user ? .prompt : .response) } }
    }

    var messages: [ChatMessage] { (system.map { [ChatMessage(.system, $0)] } ?? []) + entries.map(\.message) }

    /// Drops the oldest exchange (a prompt and everything up to the next prompt).
    mutating func dropOldestExchange() {
        let next = entries.dropFirst().firstIndex { $0.kind == .prompt } ?? entries.endIndex
        entries.removeSubrange(..<next)
    }

    mutating func nextCallId() -> String {
        calls += 1
        return "call-\(calls)"
    }
}

/// One transcript entry and the message the model saw for it.
struct SessionEntry: Sendable {
    var message: ChatMessage
    var kind: SessionTranscript.Turn.Kind
    var toolCalls: [ToolCallRecord]? = nil
    var callId: String? = nil
    var name: String? = nil
    var isError: Bool? = nil

    var turn: SessionTranscript.Turn {
        .init(role: message.role == .tool || kind == .toolOutput ? "tool" : message.role.rawValue, kind: kind, content: message.content,
              toolCalls: toolCalls, callId: callId, name: name, isError: isError)
    }
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

    func create(model: String, instructions: String?, options: GenerationOptions?, trimming: SessionCreate.Trimming,
                tools: [ToolDefinition] = [], toolSettings: ToolSettings = ToolSettings()) -> String {
        counter += 1
        tick += 1
        let id = "s\(counter)-\(UUID().uuidString.prefix(8).lowercased())"
        while sessions.count >= limit, let idle = sessions.values.filter({ !$0.busy }).min(by: { $0.lastUsed < $1.lastUsed }) {
            sessions[idle.id] = nil
        }
        sessions[id] = SessionState(id: id, model: model, instructions: instructions, options: options, trimming: trimming,
                                    tools: tools, toolSettings: toolSettings, lastUsed: tick)
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
        s.entries = []
        s.history = []
        // An ask conversation keeps its document, not what it showed or said: those were the history's.
        s.conversation?.shown = []
        s.conversation?.exchanges = []
        sessions[id] = s
    }

    func close(_ id: String) throws {
        guard sessions.removeValue(forKey: id) != nil else { throw ErrorMapping.notFound("session", id) }
    }
}

public enum Sessions {
    public static func create(_ p: SessionCreate.Params, _ ctx: RequestContext) async throws -> SessionCreate.Result {
        let tools = try await ToolSources.resolve(p.tools ?? [], mcpServers: p.mcpServers ?? [], ctx)
        try ToolLoop.validate(tools: tools, settings: p.toolSettings, runsTools: ctx.services.peer.runsTools, answer: nil)
        let model = try ctx.modelName()
        // A model pulled into Ollama's store keeps its system prompt and sampling parameters:
        // they are the session's when the request gives none of its own.
        let defaults = ctx.services.models.storeDefaults(model)
        var options = p.options ?? defaults?.options
        if let given = p.options, let d = defaults?.options {
            options = given
            options?.temperature = given.temperature ?? d.temperature
            options?.topP = given.topP ?? d.topP
            options?.topK = given.topK ?? d.topK
            options?.minP = given.minP ?? d.minP
            options?.repeatPenalty = given.repeatPenalty ?? d.repeatPenalty
            options?.seed = given.seed ?? d.seed
        }
        return .init(sessionId: await ctx.services.sessions.create(model: model, instructions: p.instructions ?? defaults?.systemPrompt, options: options, trimming: p.trimming ?? .none,
                                                                    tools: tools, toolSettings: p.toolSettings))
    }

    /// Claims the session when the request arrives (a second respond on a busy session
    /// is refused, as FoundationModels refuses it); the turn runs as the work.
    public static func respond(_ p: SessionRespond.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> SessionRespond.Result {
        let store = ctx.services.sessions
        if let schema = p.schema { _ = try GrammarBuilder.gbnf(for: schema) }  // bad schema: -32602 before any work
        let session = try await store.get(p.sessionId)
        try ToolLoop.validate(tools: session.tools, settings: p.toolSettings.merged(over: session.toolSettings), runsTools: true, answer: p.schema)
        let claimed = try await store.acquire(p.sessionId)
        return {
            var s = claimed
            do {
                let engine = try await ctx.engine(model: s.model)
                let result = try await respond(&s, p, engine: engine, ctx: ctx)
                await store.release(s)
                return result
            } catch {
                // A failed or cancelled turn leaves the session as it was before the turn,
                // except its call ids: the client saw those, so none is ever issued twice.
                var before = claimed
                before.calls = s.calls
                await store.release(before)
                throw error
            }
        }
    }

    static func respond(_ s: inout SessionState, _ p: SessionRespond.Params, engine: any LanguageModel, ctx: RequestContext) async throws -> SessionRespond.Result {
        let merged = merge(s.options, p.options)
        let options = ResolvedOptions(merged, defaultTemperature: 0.7, defaultMaxTokens: 512)
        var prompt = self.prompt(for: s, adding: p.prompt, engine: engine)
        // A session with tools may spend a call's budget on a step before its answer.
        let budget = s.tools.isEmpty ? options.maxTokens : max(options.maxTokens, ToolLoop.callTokens)
        while prompt.count + budget > engine.contextSize {
            guard s.trimming == .dropOldest, !s.entries.isEmpty else {
                throw EngineError.exceededContextWindowSize(promptTokens: prompt.count, maxTokens: budget, contextSize: engine.contextSize)
            }
            s.dropOldestExchange()
            s.history = []
            prompt = self.prompt(for: s, adding: p.prompt, engine: engine)
        }
        s.entries.append(SessionEntry(message: ChatMessage(.user, p.prompt), kind: .prompt))
        if !s.tools.isEmpty {
            var loop = ToolLoop(session: s, params: p, options: options, engine: engine, ctx: ctx)
            return try await loop.run(&s, prompt: prompt)
        }
        let out = try await Generation.run(engine, prompt: prompt, schema: p.schema, options: options, cachePriority: .session, progress: ctx.progress)
        s.entries.append(SessionEntry(message: ChatMessage(.assistant, out.text), kind: .response))
        s.history = prompt.tokens + out.tokens
        return .init(text: p.schema == nil ? out.text : nil, content: out.json, finishReason: out.finishReason.rawValue,
                     usage: out.usage, provenance: options.provenance(engine))
    }

    /// History plus the tokens of the new user turn (and the assistant header), or the
    /// whole conversation rendered when there is no history yet.
    static func prompt(for s: SessionState, adding prompt: String, engine: any LanguageModel) -> ModelPrompt {
        let messages = s.messages + [ChatMessage(.user, prompt)]
        return engine.render(messages, history: s.history, after: messages.count - 2)
    }

    static func merge(_ a: GenerationOptions?, _ b: GenerationOptions?) -> GenerationOptions {
        GenerationOptions(temperature: b?.temperature ?? a?.temperature, topP: b?.topP ?? a?.topP, topK: b?.topK ?? a?.topK,
                          minP: b?.minP ?? a?.minP, repeatPenalty: b?.repeatPenalty ?? a?.repeatPenalty,
                          seed: b?.seed ?? a?.seed, maxTokens: b?.maxTokens ?? a?.maxTokens,
                          deterministic: b?.deterministic ?? a?.deterministic, speculative: b?.speculative ?? a?.speculative)
    }

    /// Evaluates what the next turn will start with, so its first token comes sooner:
    /// the history (or the instructions), plus an optional prefix of the coming prompt.
    public static func prewarm(_ p: SessionPrewarm.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> SessionPrewarm.Result {
        let s = try await ctx.services.sessions.get(p.sessionId)
        return { try await prewarm(s, p, ctx) }
    }

    static func prewarm(_ s: SessionState, _ p: SessionPrewarm.Params, _ ctx: RequestContext) async throws -> SessionPrewarm.Result {
        let engine = try await ctx.engine(model: s.model)
        let prompt: ModelPrompt
        if let prefix = p.promptPrefix {
            let messages = s.messages + [ChatMessage(.user, prefix)]
            prompt = s.history.isEmpty
                ? engine.render(messages, endingAtContentOf: messages.count - 1)
                : engine.render(messages, history: s.history, after: messages.count - 2, endingAtContentOf: messages.count - 1)
        } else if !s.history.isEmpty {
            prompt = ModelPrompt(messages: s.messages, tokens: s.history)
        } else if !s.messages.isEmpty {
            prompt = engine.render(s.messages, addAssistant: false)
        } else {
            return .init(usage: .zero)
        }
        let out = try await Generation.run(engine, prompt: prompt, options: ResolvedOptions(nil, defaultMaxTokens: 0),
                                           cachePriority: .session, progress: ctx.progress)
        return .init(usage: out.usage)
    }

    public static func transcript(_ p: SessionTranscript.Params, _ ctx: RequestContext) async throws -> SessionTranscript.Result {
        let s = try await ctx.services.sessions.get(p.sessionId)
        return .init(instructions: s.instructions, turns: s.entries.map(\.turn), tokens: s.history.count)
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

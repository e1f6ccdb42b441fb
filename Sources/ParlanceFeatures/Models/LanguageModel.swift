import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// A prompt as a model takes it: the conversation (what a chat API is sent) and, for a
/// local engine, its exact tokens (a session's history reused token for token).
public struct ModelPrompt: Sendable {
    public var messages: [ChatMessage]
    /// The exact tokens (a local engine); empty for a remote model, which renders the
    /// conversation itself.
    public var tokens: [Token]
    /// Prompt tokens: exact for a local engine, estimated for a remote one.
    public var count: Int

    public init(messages: [ChatMessage], tokens: [Token], count: Int? = nil) {
        self.messages = messages
        self.tokens = tokens
        self.count = count ?? tokens.count
    }

    /// The first `n` tokens (a shared prefix to evaluate once).
    public func prefix(_ n: Int) -> ModelPrompt { ModelPrompt(messages: messages, tokens: Array(tokens.prefix(n))) }
}

/// One generation as features ask for it: the conversation, how it runs (`settings`, read
/// as the request's own fields) and what constrains it.
@dynamicMemberLookup
public struct ModelRequest: Sendable, CarriesGenerationSettings {
    public enum Constraint: Sendable {
        case none
        /// The output is JSON valid for this schema (a local grammar; a remote
        /// `response_format: json_schema`).
        case schema(JSONValue)
        /// A GBNF grammar (local engines only: the tool-call format).
        case grammar(String)
    }
    public var prompt: ModelPrompt
    /// `speculative` nil is the engine's setting (a remote engine: the server's); a draft
    /// group and `noRepeatRun` are a local engine's.
    public var settings: GenerationSettings
    public var constraint: Constraint
    /// Facts of the source that, once the output starts one, are finished exactly
    /// (`FactGuard`; a local engine, under a grammar as far as it accepts). Empty: no guard.
    public var exactFacts: [String] = []
    /// The output writes no number this text does not have (`NumberGuard`; a local engine).
    /// nil: any.
    public var numbersFrom: String? = nil
    /// Words the output never writes (`WordGuard`; a local engine). Empty: no guard.
    public var bannedWords: [String] = []

    public init(prompt: ModelPrompt, settings: GenerationSettings, constraint: Constraint = .none) {
        (self.prompt, self.settings, self.constraint) = (prompt, settings, constraint)
    }
}

/// What every feature generates with: a model loaded here (`Engine`) or one served by an
/// OpenAI-compatible server (`RemoteModel`). Token-level reuse (a session's KV history, a
/// shared compose prefix) is the local engine's; a remote model gets the conversation.
public protocol LanguageModel: AnyObject, Sendable {
    /// The registry name.
    var name: String { get }
    var contextSize: Int { get }
    /// Calls worth running at once (compose variations, analysis parts).
    var parallel: Int { get }
    /// What cache keys name the weights by: the GGUF file's SHA-256, or the endpoint and
    /// served model.
    var identity: String { get }
    /// The chat format has a role for tool outputs (`ToolPrompt`).
    var hasToolRole: Bool { get }
    /// Whether `constraint: .grammar` is honoured (the tool-call grammar).
    var acceptsGrammar: Bool { get }
    func countTokens(_ text: String) -> Int
    /// The whole prompt for a conversation.
    func render(_ messages: [ChatMessage], addAssistant: Bool) -> ModelPrompt
    /// `history` (the exact tokens through message `after`'s content) plus what follows it;
    /// with `endingAtContentOf`, only through that message's content (a prefix to prewarm).
    func render(_ messages: [ChatMessage], history: [Token], after index: Int, endingAtContentOf end: Int?) -> ModelPrompt
    /// The prompt up to and including the content of message `end` (a prefix to prewarm).
    func render(_ messages: [ChatMessage], endingAtContentOf end: Int) -> ModelPrompt
    func generate(_ request: ModelRequest) -> AsyncThrowingStream<GenerationEvent, any Error>
    /// Names the model in a result's provenance.
    func describe(_ p: inout Provenance)
}

extension LanguageModel {
    public func render(_ messages: [ChatMessage]) -> ModelPrompt { render(messages, addAssistant: true) }
    /// `history` plus the new turn after message `after`; the whole conversation when there
    /// is no history.
    public func render(_ messages: [ChatMessage], history: [Token]?, after index: Int) -> ModelPrompt {
        guard let history, !history.isEmpty else { return render(messages) }
        return render(messages, history: history, after: index, endingAtContentOf: nil)
    }
}

extension Engine: LanguageModel {
    public var name: String { config.name }
    public var contextSize: Int { info.contextSize }
    public var parallel: Int { config.parallel }
    public var identity: String { modelSha256 }
    public var hasToolRole: Bool { prompt.hasToolRole }
    public var acceptsGrammar: Bool { true }

    public func render(_ messages: [ChatMessage], addAssistant: Bool) -> ModelPrompt {
        ModelPrompt(messages: messages, tokens: prompt.tokens(for: messages, addAssistant: addAssistant))
    }

    public func render(_ messages: [ChatMessage], history: [Token], after index: Int, endingAtContentOf end: Int?) -> ModelPrompt {
        ModelPrompt(messages: messages, tokens: history + prompt.continuation(of: messages, after: index, endingAtContentOf: end))
    }

    public func render(_ messages: [ChatMessage], endingAtContentOf end: Int) -> ModelPrompt {
        ModelPrompt(messages: messages, tokens: prompt.tokens(for: messages, endingAtContentOf: end))
    }

    public func generate(_ r: ModelRequest) -> AsyncThrowingStream<GenerationEvent, any Error> {
        let grammar: String?
        switch r.constraint {
        case .none: grammar = nil
        case .grammar(let g): grammar = g
        case .schema(let s):
            do { grammar = try GrammarBuilder.gbnf(for: s) } catch {
                return AsyncThrowingStream { $0.finish(throwing: error) }
            }
        }
        return generate(GenerationRequest(prompt: r.prompt.tokens, settings: r.settings, grammar: grammar,
                                          factGuard: r.exactFacts.isEmpty || Ablation.off("guard.fact") ? nil : factGuard(r.exactFacts),
                                          numberGuard: Ablation.off("guard.number") ? nil : r.numbersFrom.map { numberGuard(source: $0) },
                                          wordGuard: r.bannedWords.isEmpty || Ablation.off("guard.word") ? nil : wordGuard(r.bannedWords)))
    }

    public func describe(_ p: inout Provenance) {
        p.modelSha256 = modelSha256
        p.templateSha256 = info.templateSha256
        if !info.chatTemplate { p.templateFallback = ChatPrompt.fallbackTemplate }
    }
}

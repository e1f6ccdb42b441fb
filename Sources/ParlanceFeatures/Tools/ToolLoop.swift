import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// One `session/respond` on a session with tools: each step's output is constrained to the
/// answer or calls (`ToolCallFormat`); calls go to the client as `tool/call`, their outputs
/// join the conversation, and the next step evaluates only those new tokens. Ends with the
/// answer, at most `maxToolCalls` calls later.
struct ToolLoop {
    static let defaultMaxCalls = 5
    static let defaultTimeoutMs = 30_000
    /// Tokens a step that must call may write (its calls), whatever maxTokens says.
    static let callTokens = 256

    let sessionId: String
    let tools: [ToolDefinition]
    let schema: JSONValue?
    let options: ResolvedOptions
    let engine: any LanguageModel
    let ctx: RequestContext
    var choice: ToolChoice
    let maxCalls: Int
    let timeoutMs: Int
    let reset: Bool

    init(session s: SessionState, params p: SessionRespond.Params, options: ResolvedOptions, engine: any LanguageModel, ctx: RequestContext) {
        let settings = p.toolSettings.merged(over: s.toolSettings)
        sessionId = s.id
        tools = s.tools
        schema = p.schema
        self.options = options
        self.engine = engine
        self.ctx = ctx
        choice = settings.toolChoice ?? .auto
        maxCalls = settings.maxToolCalls ?? Self.defaultMaxCalls
        timeoutMs = settings.toolTimeoutMs ?? Self.defaultTimeoutMs
        reset = settings.resetToolChoice ?? true
    }

    /// Runs the turn (its prompt entry is already in `s`). On success `s` holds the calls,
    /// outputs and answer, and the exact tokens the model saw.
    mutating func run(_ s: inout SessionState, prompt first: ModelPrompt) async throws -> SessionRespond.Result {
        var prompt = first
        var records: [ToolCallRecord] = []
        var steps: [Usage] = []
        let turnStart = s.entries.count - 1
        // Set once the model repeats a call that succeeded: it answers with the outputs it has.
        var answerNow = false
        do {
            while true {
                let callable = answerNow ? [] : callableTools(remaining: maxCalls - records.count)
                let out = try await step(prompt, callable: callable, remaining: maxCalls - records.count, facts: Self.facts(of: records))
                steps.append(out.usage)
                if !callable.isEmpty, let calls = try Self.calls(in: out) {
                    switch try Self.repeats(calls, of: records) {
                    case .noCall: break
                    case .someCalls:
                        answerNow = true
                    case .everyCall:
                        // Nothing new to call: the step is dropped, and the next one answers.
                        answerNow = true
                        ctx.progress(.init(kind: .report, message: "the model repeated a call it has the output of; answering with it",
                                           phase: .generating, restart: true))
                        continue
                    }
                    s.history = prompt.tokens + out.tokens
                    let at = s.entries.count
                    s.entries.append(SessionEntry(message: ChatMessage(.assistant, out.text), kind: .toolCalls, toolCalls: []))
                    for call in calls {
                        let record = try await invoke(call, callId: s.nextCallId(), before: records)
                        records.append(record)
                        s.entries[at].toolCalls?.append(record)
                        s.entries.append(SessionEntry(message: ToolPrompt.output(of: record, toolRole: engine.hasToolRole), kind: .toolOutput,
                                                      callId: record.callId, name: record.name, isError: record.error == nil ? nil : true))
                    }
                    let assistant = at + (s.system == nil ? 0 : 1)
                    prompt = engine.render(s.messages, history: s.history, after: assistant)
                    if reset { choice = .auto }
                    continue
                }
                return try await answer(out, prompt: prompt, &s, records: records, steps: steps)
            }
        } catch let e as EngineError {
            guard case .cancelled(let partial, let n) = e else { throw e }
            throw Self.cancelled(partial: partial, generatedTokens: n, records: records, turn: Array(s.entries[turnStart...]))
        } catch is CancellationError {
            throw Self.cancelled(partial: "", generatedTokens: 0, records: records, turn: Array(s.entries[turnStart...]))
        }
    }

    /// The tools the model may call at this step (none when the choice or the budget says so).
    func callableTools(remaining: Int) -> [ToolDefinition] {
        guard remaining > 0 else { return [] }
        switch choice {
        case .none: return []
        case .auto, .required: return tools
        case .named(let n): return tools.filter { $0.name == n }
        }
    }

    /// What the answer copies letter for letter once it begins it (`FactGuard`): the
    /// identifiers, dates, times and amounts of the turn's tool outputs ("2026-12-01T09:54:57+09:00"
    /// is not written "2026-12-03T09:54:57+08:57").
    static func facts(of records: [ToolCallRecord]) -> [String] {
        var out: [String] = []
        for r in records where r.error == nil {
            for f in Facts.exactSpans(ToolPrompt.text(of: r.output ?? .null)) where !out.contains(f) { out.append(f) }
        }
        return out
    }

    /// One step; `facts`, once begun, are finished as the tool outputs write them.
    func step(_ prompt: ModelPrompt, callable: [ToolDefinition], remaining: Int, facts: [String]) async throws -> Generation.StreamOut {
        let mustCall: Bool
        switch choice {
        case .required, .named: mustCall = !callable.isEmpty
        case .auto, .none: mustCall = false
        }
        var answer = ToolCallFormat.Answer.text
        if mustCall { answer = .callOnly } else if let schema { answer = .schema(schema) }
        let formats = callable.map { ToolCallFormat.Tool(name: $0.name, parameters: $0.argumentsSchema) }
        // A step that can only call writes no answer: maxTokens (the answer's budget) does not
        // bound it, a call's budget does.
        let budget = mustCall ? max(options.maxTokens, Self.callTokens) : options.maxTokens
        let constraint: ModelRequest.Constraint
        if engine.acceptsGrammar {
            constraint = .grammar(try ToolCallFormat.gbnf(tools: formats, maxCalls: remaining, answer: answer))
        } else if !callable.isEmpty {
            return try await remoteStep(prompt, tools: formats, remaining: remaining, answer: answer, budget: budget)
        } else {
            // Nothing to call on a model without grammars: the answer alone, as text or under
            // the turn's schema.
            constraint = schema.map { .schema($0) } ?? .none
        }
        var request = ModelRequest(prompt: prompt, settings: stepSettings(budget, callsTools: !callable.isEmpty), constraint: constraint)
        request.exactFacts = facts
        let holdBack: ((String) -> Bool)? = callable.isEmpty ? nil : { ToolCallFormat.beginsWithCall($0) }
        return try await Generation.stream(engine, request, structured: schema != nil && !mustCall, progress: ctx.progress, part: nil,
                                           holdBack: holdBack)
    }

    /// One step's settings: the session's sampling, this step's budget, a session's cache
    /// priority; no draft group, no repeat guard. A step that may call a tool writes special
    /// tokens (a call's markers) and has no spill guard: an argument closed after a space is
    /// junk the model meant to end (reopened, the 135M model wrote a time zone on until the
    /// call was cut off at `maxTokens`).
    func stepSettings(_ budget: Int, callsTools: Bool) -> GenerationSettings {
        var s = GenerationSettings(sampling: options.sampling, seed: options.seed, maxTokens: budget, cachePriority: .session,
                                   deterministic: options.deterministic, renderSpecial: callsTools, speculative: options.speculative)
        s.spillGuard = !callsTools
        return s
    }

    /// A step on a model that takes JSON Schema but no grammar (a remote one): the output is
    /// constrained to `{"tool_calls": [...]}` or `{"answer": ...}`, then read back into the
    /// same calls or answer a grammar step gives. The answer is sent as one delta once known.
    func remoteStep(_ prompt: ModelPrompt, tools: [ToolCallFormat.Tool], remaining: Int, answer: ToolCallFormat.Answer,
                    budget: Int) async throws -> Generation.StreamOut {
        var alternatives: [JSONValue] = [[
            "type": "object", "required": ["tool_calls"], "additionalProperties": false,
            "properties": ["tool_calls": ["type": "array", "minItems": 1, "maxItems": .int(remaining), "items": ToolCallFormat.callSchema(tools)]],
        ]]
        switch answer {
        case .callOnly: break
        case .text: alternatives.append(["type": "object", "required": ["answer"], "additionalProperties": false, "properties": ["answer": ["type": "string"]]])
        case .schema(let s): alternatives.append(["type": "object", "required": ["answer"], "additionalProperties": false, "properties": ["answer": s]])
        }
        let envelope: JSONValue = alternatives.count == 1 ? alternatives[0] : ["anyOf": .array(alternatives)]
        let request = ModelRequest(prompt: prompt, settings: stepSettings(budget, callsTools: false), constraint: .schema(envelope))
        var out = try await Generation.stream(engine, request, structured: false, progress: ctx.progress, part: nil, holdBack: { _ in true })
        let parsed = try? JSONParser.parse(out.text)
        if let calls = parsed?["tool_calls"]?.arrayValue {
            out.text = calls.map { ToolCallFormat.open + $0.serialized() + ToolCallFormat.close }.joined(separator: ToolCallFormat.separator)
        } else if let a = parsed?["answer"] {
            out.text = a.stringValue ?? a.serialized()
            ctx.progress(.init(kind: .report, phase: .generating, delta: out.text))
        } else {
            let detail = out.finishReason == .length ? "cut off at maxTokens (\(budget) tokens)" : "not the tool-call envelope: \(out.text.prefix(120))"
            throw ResponseError(ErrorCode(rawValue: ProtocolError.generationFailed.code), "the model's step is not usable: \(detail)",
                                data: ["error": "decodingFailure", "detail": .string(detail)])
        }
        return out
    }

    /// The calls in a step's output; nil when it is the answer.
    static func calls(in out: Generation.StreamOut) throws -> [ToolCallFormat.ParsedCall]? {
        do {
            return try ToolCallFormat.parse(out.text)
        } catch {
            let detail = out.finishReason == .length
                ? "the tool call was cut off at maxTokens (\(out.usage.generatedTokens) tokens); raise options.maxTokens" : "\(error)"
            throw ResponseError(ErrorCode(rawValue: ProtocolError.generationFailed.code), "the model's tool call is not usable: \(detail)",
                                data: ["error": "decodingFailure", "detail": .string(detail)])
        }
    }

    /// The final answer: text, or JSON valid for the turn's schema (a violation is generated
    /// again under the schema alone, with `Generation`'s retries).
    func answer(_ out: Generation.StreamOut, prompt: ModelPrompt, _ s: inout SessionState, records: [ToolCallRecord], steps: [Usage]) async throws -> SessionRespond.Result {
        var steps = steps
        var text = out.text, tokens = out.tokens, finish = out.finishReason
        var json: JSONValue?
        if let schema {
            if let parsed = try? JSONParser.parse(out.text), SchemaValidator.validate(parsed, against: schema).isEmpty {
                json = parsed
            } else {
                ctx.progress(.init(kind: .report, message: "the answer did not match the schema; generating it again", phase: .generating, attempt: 2, restart: true))
                let again = try await Generation.run(engine, prompt: prompt, schema: schema, options: options, cachePriority: .session, progress: ctx.progress)
                steps.append(again.usage)
                (text, tokens, finish, json) = (again.text, again.tokens, again.finishReason, again.json)
            }
        }
        s.entries.append(SessionEntry(message: ChatMessage(.assistant, text), kind: .response))
        s.history = prompt.tokens + tokens
        return .init(text: schema == nil ? text : nil, content: json, finishReason: finish.rawValue, usage: steps.reduce(.zero, +),
                     provenance: options.provenance(engine), toolCalls: records, steps: steps)
    }

    /// Runs one call through its tool's provider (the client's `tool/call`, or an MCP
    /// server). An error answer is the call's outcome (the model is told); no answer in
    /// time, a closed connection or a failed MCP server ends the turn.
    func invoke(_ call: ToolCallFormat.ParsedCall, callId: String, before: [ToolCallRecord]) async throws -> ToolCallRecord {
        var r = ToolCallRecord(callId: callId, name: call.name, arguments: call.arguments)
        if let earlier = before.first(where: { $0.name == call.name && $0.arguments == call.arguments && $0.error == nil }) {
            // Made already in this turn, and answered: not made again; its output stands.
            r.output = earlier.output
            r.ms = 0
            ctx.progress(.init(kind: .report, message: "\(call.name): the same call was answered already", phase: .toolCall, toolCall: .init(r, state: .finished)))
            return r
        }
        if let tool = tools.first(where: { $0.name == call.name }) {
            let violations = SchemaValidator.validate(call.arguments, against: tool.argumentsSchema)
            if !violations.isEmpty {
                // The grammar's known gaps: the client is not asked; the model is told why.
                r.error = ToolCallError(code: ErrorCode.invalidParams.rawValue,
                                        message: "the arguments do not match the tool's parameters: " + violations.map(\.description).joined(separator: "; "))
                ctx.progress(.init(kind: .report, message: "\(call.name): invalid arguments", phase: .toolCall, toolCall: .init(r, state: .failed)))
                return r
            }
        }
        ctx.progress(.init(kind: .report, message: "calling \(call.name)", phase: .toolCall, toolCall: .init(r, state: .started)))
        let start = ContinuousClock.now
        let provider = tools.first { $0.name == call.name }.map(ToolProvider.init) ?? .client
        do {
            switch try await provider.run(r, sessionId: sessionId, timeoutMs: timeoutMs, ctx: ctx) {
            case .output(let content): r.output = content
            case .failed(let error): r.error = error
            }
        } catch let f as ToolProvider.Fault {
            throw Self.failed(r, f, timeoutMs: timeoutMs, before: before)
        }
        r.ms = Self.milliseconds(since: start)
        ctx.progress(.init(kind: .report, message: "\(call.name) \(r.error == nil ? "answered" : "failed")", phase: .toolCall,
                           toolCall: .init(r, state: r.error == nil ? .finished : .failed)))
        return r
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return (d.inMilliseconds * 10).rounded() / 10
    }
}

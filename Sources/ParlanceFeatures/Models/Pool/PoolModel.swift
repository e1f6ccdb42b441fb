import Foundation
import ParlanceEngine
import ParlanceHash
import ParlanceJSON
import ParlanceProtocol
import ParlanceRemote
import Synchronization

/// One endpoint of a pool as configured.
public struct PoolMember: Sendable {
    public var endpoint: OpenAIEndpoint
    /// Cost per uncached prompt token relative to the others (2: twice as slow); 1 by default.
    public var weight: Double
    /// Calls in flight at once, when configured (else the server's `/props` `total_slots`, else 1).
    public var maxConcurrentRequests: Int?
    public init(endpoint: OpenAIEndpoint, weight: Double = 1, maxConcurrentRequests: Int? = nil) {
        self.endpoint = endpoint
        self.weight = weight
        self.maxConcurrentRequests = maxConcurrentRequests
    }
}

/// A pool as configured: its endpoints, all serving the same model, and its policy.
public struct PoolSpec: Sendable {
    public var members: [PoolMember]
    public var policy: PoolPolicy
    public init(members: [PoolMember], policy: PoolPolicy = PoolPolicy()) {
        self.members = members
        self.policy = policy
    }
}

/// The endpoints that served the generations of the request this task works for, in
/// order: set around each request, so a pool's provenance names the endpoint that served.
public final class ServedEndpoints: Sendable {
    @TaskLocal public static var current: ServedEndpoints?
    private let hosts = Mutex<[(host: String, continuedFrom: String?)]>([])
    public init() {}
    func record(_ host: String, continuedFrom: String? = nil) { hosts.withLock { $0.append((host, continuedFrom)) } }
    /// The endpoint that began the last generation.
    public var last: String? { hosts.withLock { $0.last.map { $0.continuedFrom ?? $0.host } } }
    /// The endpoint that finished the last generation, when it was not the one that began it.
    public var continuedOn: String? { hosts.withLock { $0.last.flatMap { $0.continuedFrom == nil ? nil : $0.host } } }
}

/// One model served by several OpenAI-compatible endpoints (llama-server, vLLM, Ollama,
/// mixed): a `LanguageModel` like `RemoteModel`, so every feature runs on it unchanged.
/// Each call goes to the endpoint where it costs least (`PoolPolicy`: uncached prompt
/// tokens × weight, plus load), fails over to the next when it fails before its first
/// token, and waits (bounded) when every endpoint is full. Health is checked in the
/// background (`/health`) and judged from every call (`EndpointHealth`).
public final class PoolModel: LanguageModel {
    public let name: String
    public let spec: PoolSpec
    /// One client per endpoint (its learned context, tokenizer ratio, served model).
    public let members: [RemoteModel]
    let state: PoolState
    private let checker = Mutex<Task<Void, Never>?>(nil)
    /// The endpoint that served the last call (provenance outside a request's task).
    private let lastServed = Mutex<(host: String, continuedFrom: String?)?>(nil)

    public init(name: String, spec: PoolSpec, http: HTTPClient = .shared) {
        self.name = name
        self.spec = spec
        members = spec.members.map { RemoteModel(name: name, endpoint: $0.endpoint, http: http) }
        state = PoolState(weights: spec.members.map(\.weight), capacities: spec.members.map(\.maxConcurrentRequests), policy: spec.policy)
        startChecks()
    }

    deinit { checker.withLock { $0?.cancel() } }

    public var policy: PoolPolicy { spec.policy }
    /// The smallest context among the endpoints that said (prompts must fit every one).
    public var contextSize: Int { members.map(\.contextSize).min() ?? RemoteModel.defaultContext }
    public var parallel: Int { spec.members.reduce(0) { $0 + ($1.maxConcurrentRequests ?? 1) } }
    public var servedModel: String? { members.lazy.compactMap(\.servedModel).first }
    public var identity: String { "openai-pool:\(members.map(\.endpoint.host).joined(separator: ","))/\(servedModel ?? "")" }
    public var hasToolRole: Bool { false }
    public var acceptsGrammar: Bool { false }
    /// The member whose tokenizer ratio counts: the first whose server counts tokens.
    var counter: RemoteModel { members.first(where: \.serverCountsTokens) ?? members[0] }
    public func countTokens(_ text: String) -> Int { counter.countTokens(text) }
    public func render(_ messages: [ChatMessage], addAssistant: Bool) -> ModelPrompt { counter.render(messages, addAssistant: addAssistant) }
    public func render(_ messages: [ChatMessage], history: [Token], after index: Int, endingAtContentOf end: Int?) -> ModelPrompt {
        counter.render(messages, history: history, after: index, endingAtContentOf: end)
    }
    public func render(_ messages: [ChatMessage], endingAtContentOf end: Int) -> ModelPrompt { counter.render(messages, endingAtContentOf: end) }

    public func describe(_ p: inout Provenance) {
        p.modelSha256 = SHA256.hex(identity)
        p.templateSha256 = SHA256.hex("")
        if let served = ServedEndpoints.current, let host = served.last {
            p.endpoint = host
            p.continuedOn = served.continuedOn
        } else if let last = lastServed.withLock({ $0 }) {
            p.endpoint = last.continuedFrom ?? last.host
            p.continuedOn = last.continuedFrom == nil ? nil : last.host
        }
        p.servedModel = servedModel
    }

    // MARK: health

    /// Checks every endpoint's `/health` now and then every `healthInterval` (and, once it
    /// is ready, a llama-server's `/props` for its slots).
    private func startChecks() {
        let state = state, members = members, policy = spec.policy
        let task = Task.detached(priority: .utility) {
            while !Task.isCancelled {
                await Self.checkAll(state, members, policy)
                try? await Task.sleep(for: policy.healthInterval)
            }
        }
        checker.withLock { $0 = task }
    }

    static func checkAll(_ state: PoolState, _ members: [RemoteModel], _ policy: PoolPolicy) async {
        await withTaskGroup(of: Void.self) { group in
            for (i, m) in members.enumerated() {
                group.addTask {
                    let h = await m.client.health(timeout: min(policy.healthTimeout, m.endpoint.timeout))
                    var slots: Int? = nil, busy: Int? = nil
                    if h == .ready, await state.needsSlots(i) { slots = await m.client.totalSlots() }
                    if h == .ready { busy = await m.client.busyRequests() }
                    await state.checked(i, h, slots: slots, busy: busy)
                }
            }
        }
    }

    /// Checks every endpoint now (`model/status`).
    public func checkNow() async { await Self.checkAll(state, members, spec.policy) }

    /// Ready when one endpoint answered what it serves; throws `poolUnavailable` at once
    /// when none can be reached.
    public func prepare() async throws {
        if members.contains(where: \.prepared) { return }
        let errors = await withTaskGroup(of: RemoteCallError?.self) { group in
            for m in members {
                group.addTask {
                    do { try await m.prepare(); return nil } catch let e as RemoteCallError { return e } catch {
                        return RemoteCallError(model: m.name, host: m.endpoint.host, fault: RemoteFault(.remoteUnavailable, "\(error)", retryable: true), attempts: 1)
                    }
                }
            }
            var out: [RemoteCallError] = []
            for await e in group { if let e { out.append(e) } }
            return out
        }
        guard errors.count == members.count, let first = errors.first else { return }
        var e = first
        e.fault.message = "no endpoint of pool '\(name)' answers: " + errors.map(\.fault.message).joined(separator: "; ")
        e.details = ["reason": "poolUnavailable", "endpoints": .array(errors.map { ["endpoint": .string($0.host), "message": .string($0.fault.message)] })]
        throw e
    }

    // MARK: generating

    public func generate(_ r: ModelRequest) -> AsyncThrowingStream<GenerationEvent, any Error> {
        let served = ServedEndpoints.current
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    continuation.yield(.done(try await self.run(r, served: served, continuation)))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private func run(_ r: ModelRequest, served: ServedEndpoints?, _ out: AsyncThrowingStream<GenerationEvent, any Error>.Continuation) async throws -> GenerationResult {
        let start = ContinuousClock.now
        if let done = try r.answeredBeforeSending() { return done }
        try await prepare()
        let policy = spec.policy
        let timeout = members.map(\.endpoint.timeout).max() ?? .seconds(60)
        // The request's budget: twice the endpoint timeout, as for one remote endpoint.
        let deadline = start + timeout * 2
        let (hashes, totalBytes) = PrefixIndex.hashes(r.prompt.messages, blockBytes: policy.blockBytes)
        var request = r
        var cut: Cut? = nil
        var excluded = Set<Int>()
        var attempts = 0
        var last: (host: String, fault: RemoteFault)? = nil
        var waitStart: ContinuousClock.Instant? = nil
        var toldQueued = false
        while true {
            if Task.isCancelled { throw EngineError.cancelled(partial: cut?.text ?? "", generatedTokens: 0) }
            switch await state.admit(hashes: hashes, totalBytes: totalBytes, promptTokens: request.prompt.count, excluded: excluded) {
            case .go(let i, let predicted, let matchedAt):
                attempts += 1
                waitStart = nil
                let m = members[i]
                do {
                    do { try await m.prepare() } catch let e as RemoteCallError { throw RemoteModel.AttemptFailure(fault: e.fault, partial: "") }
                    if let cut, m.servedModel != cut.servedModel {
                        // A continuation goes on only with the same model.
                        await state.abandoned(i)
                        excluded.insert(i)
                        attempts -= 1
                        continue
                    }
                    let res = try await m.call(request, start: start, out)
                    let result = cut.map { $0.joined(res.result, tokens: countTokens($0.text)) } ?? res.result
                    let reply = PrefixIndex.hashes(r.prompt.messages + [ChatMessage(.assistant, result.text)], blockBytes: policy.blockBytes).hashes
                    await state.succeeded(i, hashes: reply, predicted: predicted, matchedAt: matchedAt, reportedCached: res.reportedCached,
                                          promptTokens: res.result.stats.promptTokens)
                    let from = cut.map { members[$0.endpoint].endpoint.host }
                    served?.record(m.endpoint.host, continuedFrom: from)
                    lastServed.withLock { $0 = (m.endpoint.host, from) }
                    return result
                } catch let failed as RemoteModel.AttemptFailure {
                    let f = failed.fault
                    let counted = await state.failed(i, f)
                    last = (m.endpoint.host, f)
                    // What streamed cannot be unsent: a stream cut after its first token ends here, with its partial, or
                    // (continueOnFailure) goes on once on another endpoint. Nothing streamed: any fault but the call's own
                    // (a 4xx) may pass on another endpoint, a stream cut before its first token included.
                    let partial = (cut?.text ?? "") + failed.partial
                    let another = f.retryable || f.kind == .remoteProtocol
                    let next = failed.partial.isEmpty ? request : cut == nil && m.servedModel != nil ? continuation(of: r, partial: partial) : nil
                    guard let next, another, attempts < policy.maxAttempts, ContinuousClock.now < deadline else {
                        throw RemoteCallError(model: name, host: m.endpoint.host, fault: f, attempts: attempts,
                                              partial: partial.isEmpty ? nil : partial)
                    }
                    if !failed.partial.isEmpty {
                        cut = Cut(endpoint: i, servedModel: m.servedModel, text: partial)
                        request = next
                    }
                    if counted || !failed.partial.isEmpty || !(f.kind == .rateLimited || f.retryAfterMs != nil) { excluded.insert(i) }
                } catch {
                    await state.abandoned(i)
                    throw error
                }
            case .wait(let until, let saturated):
                let began = waitStart ?? ContinuousClock.now
                waitStart = began
                try await waitForRoom(until: until, saturated: saturated, since: began, deadline: deadline, last: last, attempts: attempts,
                                      toldQueued: &toldQueued, out)
            case .unavailable:
                if let last, excluded.count == members.count {
                    throw RemoteCallError(model: name, host: last.host, fault: last.fault, attempts: attempts,
                                          partial: cut?.text, details: await poolDetails(reason: "poolUnavailable"))
                }
                var e = await unavailableError(attempts: attempts)
                e.partial = cut?.text
                throw e
            }
        }
    }

    /// A stream cut after its first tokens, which another endpoint continues: where it was
    /// cut, the model it was written by and the text it had written.
    struct Cut {
        var endpoint: Int
        var servedModel: String?
        var text: String

        /// The whole output: the text before the cut, then the continuation's.
        func joined(_ rest: GenerationResult, tokens: Int) -> GenerationResult {
            var out = rest
            out.text = text + rest.text
            out.stats.generatedTokens += tokens
            out.stats.estimated = true
            return out
        }
    }

    /// The request that continues `partial` on another endpoint, or nil when it may not:
    /// `continueOnFailure` off, schema output, or no tokens left.
    private func continuation(of r: ModelRequest, partial: String) -> ModelRequest? {
        guard spec.policy.continueOnFailure, case .none = r.constraint else { return nil }
        let used = countTokens(partial)
        guard used < r.maxTokens else { return nil }
        var next = r
        next.prompt = ModelPrompt(messages: r.prompt.messages + [ChatMessage(.assistant, partial)], tokens: [], count: r.prompt.count + used)
        next.maxTokens = r.maxTokens - used
        return next
    }

    /// Nothing is free now: waits for a change (a place freed, a health check, a rest ended)
    /// within the queue time and the request's budget, or throws what the caller is owed:
    /// `poolSaturated`, the last fault (endpoints resting past the budget), `poolUnavailable`.
    private func waitForRoom(until: ContinuousClock.Instant?, saturated: Bool, since began: ContinuousClock.Instant, deadline: ContinuousClock.Instant,
                             last: (host: String, fault: RemoteFault)?, attempts: Int, toldQueued: inout Bool,
                             _ out: AsyncThrowingStream<GenerationEvent, any Error>.Continuation) async throws {
        let now = ContinuousClock.now
        let limit = min(deadline, began + spec.policy.queueTimeout)
        if let until, until > limit, !saturated, let last {
            // The only endpoints left rest longer than this request may wait: their Retry-After is reported.
            throw RemoteCallError(model: name, host: last.host, fault: last.fault, attempts: attempts)
        }
        if now >= limit {
            if saturated { throw await saturatedError(waited: now - began, attempts: attempts) }
            if let last { throw RemoteCallError(model: name, host: last.host, fault: last.fault, attempts: attempts) }
            throw await unavailableError(attempts: attempts)
        }
        if saturated, !toldQueued {
            toldQueued = true
            out.yield(.queued(position: 1))
        }
        await state.waitForChange(until: min(until ?? limit, limit))
    }

    /// Every endpoint as errors report it: health, breaker, load, last error.
    private func poolDetails(reason: String) async -> JSONObject {
        let eps = await state.snapshot()
        return ["reason": .string(reason), "endpoints": .array(zip(members, eps).map { m, e in
            var o: JSONObject = ["endpoint": .string(m.endpoint.host), "health": .string(e.health.readiness.rawValue),
                                 "circuit": .string(e.health.circuit.rawValue), "inFlight": .int(e.inFlight), "capacity": .int(e.capacity)]
            if let l = e.health.lastError { o["lastError"] = .string(l) }
            return .object(o)
        })]
    }

    private func unavailableError(attempts: Int) async -> RemoteCallError {
        let details = await poolDetails(reason: "poolUnavailable")
        let eps = await state.snapshot()
        let why = zip(members, eps).map { m, e in
            "\(m.endpoint.host) \(e.health.circuit == .closed ? e.health.readiness.rawValue : "circuit \(e.health.circuit.rawValue)")"
        }.joined(separator: ", ")
        return RemoteCallError(model: name, host: members.map(\.endpoint.host).joined(separator: ","),
                               fault: RemoteFault(.remoteUnavailable, "no endpoint of pool '\(name)' can serve now (\(why))", retryable: false),
                               attempts: attempts, details: details)
    }

    private func saturatedError(waited: Duration, attempts: Int) async -> RemoteCallError {
        var details = await poolDetails(reason: "poolSaturated")
        let inFlight = await state.totalInFlight, capacity = await state.totalCapacity
        details["inFlight"] = .int(inFlight)
        details["capacity"] = .int(capacity)
        details["waitedMs"] = .int(Int(waited.inMilliseconds))
        details["queueTimeoutMs"] = .int(Int(spec.policy.queueTimeout.inMilliseconds))
        return RemoteCallError(model: name, host: members.map(\.endpoint.host).joined(separator: ","),
                               fault: RemoteFault(.remoteUnavailable, "every endpoint of pool '\(name)' is full (\(inFlight) calls in flight, capacity \(capacity)); waited \(Int(waited.inMilliseconds)) ms", retryable: false),
                               attempts: attempts, details: details)
    }

    // MARK: reporting

    /// Each endpoint's state, for `model/status` and `model/list`.
    public func endpointInfo() async -> [PoolEndpointInfo] {
        let eps = await state.snapshot()
        return zip(members, eps).map { m, e in
            PoolEndpointInfo(url: m.endpoint.baseURL.absoluteString, endpoint: m.endpoint.host, servedModel: m.servedModel, weight: e.weight,
                             health: e.health.readiness.rawValue, circuit: e.health.circuit.rawValue, inFlight: e.inFlight,
                             othersInFlight: e.othersInFlight, capacity: e.capacity,
                             prefixCacheHits: e.prefixHits, cachedTokens: e.cachedTokens, promptTokens: e.promptTokens, requestsServed: e.served,
                             failures: e.failures, lastError: e.health.lastError, prefixBlocks: e.index.count)
        }
    }

    /// Whether any endpoint may serve now.
    public func anyAvailable() async -> Bool { await state.snapshot().contains { $0.health.admits() } }
}

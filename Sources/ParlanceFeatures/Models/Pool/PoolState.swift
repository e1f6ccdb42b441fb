import ParlanceRemote

/// What a pool knows of its endpoints, changed only here: each one's health and breaker,
/// the prefixes it was sent, its calls in flight against its capacity, and its counters.
/// Routing (`admit`) picks an endpoint and takes its place in one step.
actor PoolState {
    struct Endpoint {
        var health = EndpointHealth()
        var index: PrefixIndex
        var inFlight = 0
        /// Requests the server reported working on beyond Parlance's own (other clients),
        /// at the last health check: added to the load the router prices.
        var othersInFlight = 0
        var capacity: Int
        /// Taken from the server (`/props` `total_slots`) rather than configured or assumed.
        var capacityFromServer = false
        let configuredCapacity: Int?
        let weight: Double
        var served = 0
        var failures = 0
        var prefixHits = 0
        var cachedTokens = 0
        var promptTokens = 0
    }

    /// The outcome of routing one call.
    enum Admission {
        /// Call endpoint `index` (its place is taken); `predicted` prompt tokens were thought
        /// cached there; `matchedAt` is when they were recorded (for forgetting).
        case go(index: Int, predicted: Int, matchedAt: UInt64?)
        /// Nothing free now: every endpoint that may serve is full, or resting until `until`.
        case wait(until: ContinuousClock.Instant?, saturated: Bool)
        /// No endpoint may serve (down, loading, breaker open, or already failed this request).
        case unavailable
    }

    private(set) var endpoints: [Endpoint]
    let policy: PoolPolicy
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0
    /// The next endpoint in turn (round-robin routing).
    private var rotation = 0

    init(weights: [Double], capacities: [Int?], policy: PoolPolicy) {
        self.policy = policy
        endpoints = zip(weights, capacities).map { w, c in
            Endpoint(index: PrefixIndex(maxBlocks: policy.maxBlocks), capacity: c ?? 1, configuredCapacity: c, weight: w)
        }
    }

    var totalCapacity: Int { endpoints.reduce(0) { $0 + $1.capacity } }
    var totalInFlight: Int { endpoints.reduce(0) { $0 + $1.inFlight } }

    /// Routes one call of `promptTokens` whose rendered conversation is `hashes` (of
    /// `totalBytes`), skipping `excluded` (endpoints that failed it already).
    func admit(hashes: [UInt64], totalBytes: Int, promptTokens: Int, excluded: Set<Int>) -> Admission {
        let now = ContinuousClock.now
        var candidates: [PoolRouter.Candidate] = []
        var matches: [Int: (Int, UInt64?)] = [:]
        var full = false
        var restEnd: ContinuousClock.Instant? = nil
        for i in endpoints.indices where !excluded.contains(i) {
            endpoints[i].health.refresh(policy, now: now)
            let e = endpoints[i]
            if let r = e.health.restingUntil, now < r {
                restEnd = min(restEnd ?? r, r)
                continue
            }
            guard e.health.admits(now: now) else { continue }
            if e.inFlight >= e.capacity {
                full = true
                continue
            }
            let m = e.index.match(hashes)
            let share = Double(m.blocks * policy.blockBytes) / Double(max(1, totalBytes))
            let predicted = share < policy.affinityThreshold ? 0 : min(promptTokens, Int(Double(promptTokens) * share))
            matches[i] = (predicted, m.oldest)
            candidates.append(.init(index: i, weight: e.weight, inFlight: e.inFlight + e.othersInFlight, capacity: e.capacity,
                                    predictedCached: predicted, heldBlocks: e.index.count))
        }
        let pick: Int?
        if policy.roundRobin {
            // For comparison only: the next endpoint in turn that has room.
            let order = candidates.map(\.index).sorted()
            pick = order.first { $0 >= rotation } ?? order.first
            if let p = pick { rotation = p + 1 }
        } else {
            pick = PoolRouter.choose(candidates, promptTokens: promptTokens, policy: policy)
        }
        if let pick {
            endpoints[pick].inFlight += 1
            endpoints[pick].health.sent()
            // Recorded when sent (SGLang inserts at routing): a second question on the same
            // document, sent before the first is answered, follows it.
            endpoints[pick].index.record(hashes)
            let (predicted, oldest) = matches[pick] ?? (0, nil)
            return .go(index: pick, predicted: predicted, matchedAt: oldest)
        }
        if full || restEnd != nil { return .wait(until: restEnd, saturated: full) }
        return .unavailable
    }

    /// A call on `i` answered: its counters, its breaker closed, its prefixes confirmed
    /// (or, when the server reports much less cached than predicted, the older ones forgotten).
    func succeeded(_ i: Int, hashes: [UInt64], predicted: Int, matchedAt: UInt64?, reportedCached: Int?, promptTokens: Int) {
        endpoints[i].inFlight -= 1
        endpoints[i].served += 1
        endpoints[i].promptTokens += promptTokens
        endpoints[i].health.succeeded()
        if let c = reportedCached {
            endpoints[i].cachedTokens += c
            if predicted > 0 {
                if Double(c) >= policy.confirmShare * Double(predicted) {
                    endpoints[i].prefixHits += 1
                } else if let t = matchedAt {
                    endpoints[i].index.forget(usedBy: t)
                }
            }
        }
        endpoints[i].index.record(hashes)
        wake()
    }

    /// A call on `i` failed with `fault`. Overload (429, a 503 with `Retry-After`) rests
    /// the endpoint; a caller's error (other 4xx) only frees its place; anything else
    /// counts toward its breaker. Returns whether the fault counted as a failure.
    @discardableResult
    func failed(_ i: Int, _ fault: RemoteFault) -> Bool {
        endpoints[i].inFlight -= 1
        defer { wake() }
        if fault.status == 503, fault.serverMessage?.lowercased().contains("loading") == true {
            // Up, still loading its model: not ready, and not a failure.
            endpoints[i].health.readiness = .loading
            return false
        }
        let retryAfter = fault.retryAfterMs.map { Duration.milliseconds($0) }
        if fault.kind == .rateLimited || (fault.status == 503 && retryAfter != nil) {
            endpoints[i].health.overloaded(fault.message, retryAfter: retryAfter, policy)
            return false
        }
        if let s = fault.status, (400..<500).contains(s), s != 408 { return false }
        endpoints[i].failures += 1
        endpoints[i].health.failed(fault.message, policy)
        return true
    }

    /// A call on `i` ended by the caller's cancel: its place is free, nothing is judged.
    func abandoned(_ i: Int) {
        endpoints[i].inFlight -= 1
        wake()
    }

    /// A health check of `i` found `h`; `slots` is the server's `total_slots` when read, and
    /// `busy` the requests it reported working on (its `/slots` or metrics).
    func checked(_ i: Int, _ h: OpenAIClient.Health, slots: Int?, busy: Int? = nil) {
        if case .failed = h { endpoints[i].failures += 1 }
        endpoints[i].health.checked(h, policy)
        if let busy { endpoints[i].othersInFlight = max(0, busy - endpoints[i].inFlight) }
        if let slots, slots > 0 {
            endpoints[i].capacity = min(slots, endpoints[i].configuredCapacity ?? slots)
            endpoints[i].capacityFromServer = true
        }
        wake()
    }

    func needsSlots(_ i: Int) -> Bool { !endpoints[i].capacityFromServer }

    /// Waits until something changes (a place frees, a health check lands) or `deadline`.
    func waitForChange(until deadline: ContinuousClock.Instant) async {
        nextWaiter += 1
        let id = nextWaiter
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            await self?.wake(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                if Task.isCancelled { c.resume() } else { waiters[id] = c }
            }
        } onCancel: {
            Task { await self.wake(id) }
        }
        timer.cancel()
    }

    private func wake(_ id: UInt64) { waiters.removeValue(forKey: id)?.resume() }

    private func wake() {
        let all = waiters
        waiters = [:]
        for c in all.values { c.resume() }
    }

    /// Each endpoint as `model/status` reports it.
    func snapshot() -> [Endpoint] {
        let now = ContinuousClock.now
        for i in endpoints.indices { endpoints[i].health.refresh(policy, now: now) }
        return endpoints
    }
}

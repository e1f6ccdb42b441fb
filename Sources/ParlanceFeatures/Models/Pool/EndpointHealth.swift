import ParlanceRemote

/// One pool endpoint's health: what its `/health` said last (active checks) and its
/// circuit breaker (passive: the outcome of every call). A value type; the pool's state
/// actor holds one per endpoint and is the only one to change it.
///
///     closed --failureThreshold consecutive failures--> open
///     open --cooldown passed--> halfOpen (one trial: a call, or the next health check)
///     halfOpen --trial succeeds--> closed ; --trial fails--> open (cool-down again)
///
/// A 429 or a `Retry-After` is overload, not failure: the endpoint rests that long
/// (`restingUntil`) and its breaker does not count it. A 503 "Loading model" is `loading`.
struct EndpointHealth: Sendable {
    enum Readiness: String, Sendable {
        /// Not checked yet: used (the first call checks it).
        case unknown
        case ready
        /// The server is up and loading its model: not used until ready, never a failure.
        case loading
        /// The last health check failed.
        case down
    }
    enum Circuit: String, Sendable { case closed, open, halfOpen }

    var readiness = Readiness.unknown
    private(set) var circuit = Circuit.closed
    private(set) var openedAt: ContinuousClock.Instant? = nil
    private(set) var consecutiveFailures = 0
    /// A half-open endpoint's one trial is out.
    private(set) var trialOut = false
    var restingUntil: ContinuousClock.Instant? = nil
    private(set) var lastError: String? = nil
    private(set) var lastErrorAt: ContinuousClock.Instant? = nil

    /// The breaker's state now (an open one whose cool-down passed is half-open).
    mutating func refresh(_ policy: PoolPolicy, now: ContinuousClock.Instant = .now) {
        if circuit == .open, let t = openedAt, now - t >= policy.cooldown {
            circuit = .halfOpen
            trialOut = false
        }
        if let r = restingUntil, now >= r { restingUntil = nil }
    }

    /// May a call go here now (health and breaker; load is the router's)?
    func admits(now: ContinuousClock.Instant = .now) -> Bool {
        if readiness == .loading || readiness == .down { return false }
        if let r = restingUntil, now < r { return false }
        switch circuit {
        case .closed: return true
        case .open: return false
        case .halfOpen: return !trialOut
        }
    }

    /// Whether the endpoint is out for a while (not merely busy): down, loading, open, resting.
    var unavailable: Bool { !admits() }

    /// A call was sent (a half-open endpoint's trial is now out).
    mutating func sent() { if circuit == .halfOpen { trialOut = true } }

    mutating func succeeded() {
        consecutiveFailures = 0
        circuit = .closed
        openedAt = nil
        trialOut = false
        if readiness != .loading { readiness = .ready }
    }

    /// A failure that counts: a call (no connection, timeout, 5xx, 408, a broken stream) or
    /// a health check.
    mutating func failed(_ message: String, _ policy: PoolPolicy, now: ContinuousClock.Instant = .now) {
        lastError = message
        lastErrorAt = now
        consecutiveFailures += 1
        if circuit == .halfOpen || consecutiveFailures >= policy.failureThreshold {
            circuit = .open
            openedAt = now
            trialOut = false
        }
    }

    /// Overload (429, a busy 503): rests for `Retry-After` (capped), not a failure.
    mutating func overloaded(_ message: String, retryAfter: Duration?, _ policy: PoolPolicy, now: ContinuousClock.Instant = .now) {
        lastError = message
        lastErrorAt = now
        restingUntil = now + min(retryAfter ?? policy.cooldown, policy.maxRetryAfter)
        if circuit == .halfOpen { trialOut = false }
    }

    /// What a health check found.
    mutating func checked(_ h: OpenAIClient.Health, _ policy: PoolPolicy) {
        refresh(policy)
        switch h {
        case .ready:
            readiness = .ready
            // A half-open endpoint whose health check passes is a passed trial.
            if circuit == .halfOpen { succeeded() }
        case .loading:
            readiness = .loading
        case .failed(let f):
            readiness = .down
            failed("health check: \(f.message)", policy)
        }
    }
}

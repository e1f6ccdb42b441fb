import ParlanceSchema

/// One endpoint of a pool (`model/status`, `model/list`).
public struct PoolEndpointInfo: Codable, Sendable, Hashable, Schematic {
    public var url: String
    /// `host:port`, as provenance and errors name it.
    public var endpoint: String
    public var servedModel: String?
    /// Cost per uncached prompt token relative to the other endpoints.
    public var weight: Double
    /// What its `/health` said last: unknown (not checked yet), ready, loading (up, model
    /// still loading: not used, not a failure), down.
    public var health: String
    /// Its circuit breaker: closed (used), open (failed repeatedly; rests), halfOpen (one trial).
    public var circuit: String
    /// Calls Parlance has in flight to it now.
    public var inFlight: Int
    /// Requests the server said it was working on beyond those (other clients), at the last
    /// health check (llama-server's /slots, vLLM's metrics): priced as load when routing.
    public var othersInFlight: Int
    /// Calls it takes at once: configured maxConcurrentRequests, else the server's /props total_slots, else 1.
    public var capacity: Int
    /// Calls routed to it for a prefix it was thought to hold, confirmed by the cached tokens it reported.
    public var prefixCacheHits: Int
    /// Prompt tokens it reported as cached, in total.
    public var cachedTokens: Int
    /// Prompt tokens of the calls it served, in total.
    public var promptTokens: Int
    public var requestsServed: Int
    /// Failed calls and health checks that counted toward its breaker.
    public var failures: Int
    public var lastError: String?
    /// Prefix blocks (128 bytes of rendered conversation each) it is thought to hold.
    public var prefixBlocks: Int
    public static let schemaHints: [String: SchemaHint] = [
        "health": SchemaHint(enumValues: ["unknown", "ready", "loading", "down"]),
        "circuit": SchemaHint(enumValues: ["closed", "open", "halfOpen"]),
    ]
    public init(url: String, endpoint: String, servedModel: String?, weight: Double, health: String, circuit: String, inFlight: Int, othersInFlight: Int, capacity: Int,
                prefixCacheHits: Int, cachedTokens: Int, promptTokens: Int, requestsServed: Int, failures: Int, lastError: String?, prefixBlocks: Int) {
        self.url = url
        self.endpoint = endpoint
        self.servedModel = servedModel
        self.weight = weight
        self.health = health
        self.circuit = circuit
        self.inFlight = inFlight
        self.othersInFlight = othersInFlight
        self.capacity = capacity
        self.prefixCacheHits = prefixCacheHits
        self.cachedTokens = cachedTokens
        self.promptTokens = promptTokens
        self.requestsServed = requestsServed
        self.failures = failures
        self.lastError = lastError
        self.prefixBlocks = prefixBlocks
    }
}

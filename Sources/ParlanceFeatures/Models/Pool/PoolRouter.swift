/// Picks the endpoint for one request from what the pool knows of each (`PoolPolicy`'s
/// formula): pure, so the rule is tested and read in one place.
enum PoolRouter {
    /// One endpoint as the router sees it.
    struct Candidate: Sendable {
        var index: Int
        var weight: Double
        var inFlight: Int
        var capacity: Int
        /// Prompt tokens it probably has cached for this request.
        var predictedCached: Int
        /// Prefix blocks it holds (the tie-break: the emptiest cache).
        var heldBlocks: Int
        var load: Double { Double(inFlight) / Double(max(1, capacity)) }
    }

    /// The index of the endpoint to use among `candidates` (each with room for one more
    /// call), or nil when there are none.
    static func choose(_ candidates: [Candidate], promptTokens: Int, policy: PoolPolicy) -> Int? {
        guard !candidates.isEmpty else { return nil }
        func cost(_ c: Candidate) -> Double {
            policy.cost(promptTokens: promptTokens, predictedCached: c.predictedCached, weight: c.weight, inFlight: c.inFlight, capacity: c.capacity)
        }
        func before(_ a: Candidate, _ b: Candidate) -> Bool {
            let ca = cost(a), cb = cost(b)
            if ca != cb { return ca < cb }
            if a.inFlight != b.inFlight { return a.inFlight < b.inFlight }
            if a.heldBlocks != b.heldBlocks { return a.heldBlocks < b.heldBlocks }
            return a.index < b.index
        }
        let best = candidates.min(by: before)!
        let least = candidates.min { $0.load != $1.load ? $0.load < $1.load : before($0, $1) }!
        if policy.imbalanced(chosen: best.load, least: least.load) { return least.index }
        return best.index
    }
}

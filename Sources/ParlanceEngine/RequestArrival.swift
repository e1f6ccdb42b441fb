/// When the client request that a generation serves arrived. A request's claim on the
/// engine is taken in the order requests arrive: a later generation of an earlier request
/// (a variation's second attempt, an answer's next step) waits behind the generations of
/// requests that arrived before it, not behind those that arrived after it. Without this,
/// a composition's second attempt queued behind every first attempt sent after it, and
/// its first attempt's cached sequence was reused by them in the meantime.
public enum RequestArrival {
    /// Set by the server around a request's work; nil: a generation is placed by when it
    /// was submitted.
    @TaskLocal public static var instant: ContinuousClock.Instant?
}

extension Scheduler {
    /// Puts newly submitted jobs in the waiting line by their request's arrival, after every
    /// job whose request arrived no later (so jobs of one request keep their order).
    func enqueue(_ new: [Job]) {
        for j in new {
            let at = waiting.lastIndex { $0.arrival <= j.arrival }.map { $0 + 1 } ?? 0
            waiting.insert(j, at: at)
        }
    }
}

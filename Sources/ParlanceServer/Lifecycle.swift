import JSONRPC
import Synchronization

/// LSP lifecycle: uninitialized → running (after `initialize`) → shutting down (after
/// `shutdown`) → `exit`. Also tracks the work that still owes the client an answer (requests
/// in flight, batches being gathered), for cancellation and for draining.
///
/// Draining (after `shutdown`, or at end of input) admits no new work and waits for every
/// answer to be written; cancelling (`exit` before `shutdown`, a signal, a closed output)
/// cancels it first, then waits a moment for the cancelled requests' answers.
public final class Lifecycle: Sendable {
    struct State {
        enum Phase { case uninitialized, running, shuttingDown }
        var phase = Phase.uninitialized
        var inFlight: [RequestID: Task<Void, Never>] = [:]
        /// Batches whose combined reply is not written yet.
        var batches: [Int: Task<Void, Never>] = [:]
        var nextBatch = 0
    }
    let state = Mutex<State>(State())     // guards the phase and the in-flight tables
    let router = Mutex<Router?>(nil)      // set once, after the registry is built
    let maxMessageBytes: Int

    init(maxMessageBytes: Int) { self.maxMessageBytes = maxMessageBytes }

    func markInitialized() { state.withLock { $0.phase = .running } }

    var isShuttingDown: Bool { state.withLock { $0.phase == .shuttingDown } }

    /// Enters shutdown: from now on only `exit` is accepted. Work in flight goes on.
    func beginShutdown() { state.withLock { $0.phase = .shuttingDown } }

    /// Waits until every request in flight (but `except`) and every batch has been answered.
    /// Requests are registered before the next message is read, so a drain started from the
    /// message loop sees every request that arrived before it.
    func drain(except id: RequestID? = nil) async {
        while true {
            let pending = state.withLock { s -> [Task<Void, Never>] in
                s.inFlight.filter { $0.key != id }.map(\.value) + Array(s.batches.values)
            }
            if pending.isEmpty { return }
            for task in pending { await task.value }
        }
    }

    /// Cancels every request in flight; each answers -32800 with what it had.
    func cancelAll() {
        let tasks = state.withLock { s in Array(s.inFlight.values) }
        tasks.forEach { $0.cancel() }
    }

    /// Cancels everything, then waits up to `seconds` for the cancelled requests' answers.
    func cancelAndDrain(within seconds: Double) async {
        cancelAll()
        let once = Once()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let finish: @Sendable () -> Void = { if once.first() { done.resume() } }
            Task { await self.drain(); finish() }
            Task { try? await Task.sleep(for: .milliseconds(Int(seconds * 1000))); finish() }
        }
    }

    /// Tracks a batch's reply until it is written.
    func track(batch: @escaping @Sendable () async -> Void) {
        state.withLock { s in
            let key = s.nextBatch
            s.nextBatch += 1
            s.batches[key] = Task { [self] in
                await batch()
                _ = state.withLock { $0.batches.removeValue(forKey: key) }
            }
        }
    }

    var methodNames: [String] { router.withLock { $0?.order ?? [] } }
    var notificationNames: [String] { router.withLock { $0?.notifications.map(\.name) ?? [] } }
}

/// True for the first caller only.
public final class Once: Sendable {
    private let done = Atomic<Bool>(false)
    public init() {}
    public func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}

import JSONRPC
import Synchronization

/// LSP lifecycle: uninitialized → running (after `initialize`) → shutting down (after
/// `shutdown`) → `exit`. Also tracks requests in flight, for cancellation.
public final class Lifecycle: Sendable {
    struct State {
        enum Phase { case uninitialized, running, shuttingDown }
        var phase = Phase.uninitialized
        var inFlight: [RequestID: Task<Void, Never>] = [:]
    }
    let state = Mutex<State>(State())     // guards the phase and the in-flight table
    let router = Mutex<Router?>(nil)      // set once, after the registry is built
    let maxMessageBytes: Int

    init(maxMessageBytes: Int) { self.maxMessageBytes = maxMessageBytes }

    func markInitialized() { state.withLock { $0.phase = .running } }

    /// Enters shutdown and cancels everything in flight (each answers -32800), except the
    /// shutdown request itself.
    func beginShutdown(except id: RequestID) {
        let tasks = state.withLock { s -> [Task<Void, Never>] in
            s.phase = .shuttingDown
            return s.inFlight.filter { $0.key != id }.map(\.value)
        }
        tasks.forEach { $0.cancel() }
    }

    var methodNames: [String] { router.withLock { $0?.order ?? [] } }
    var notificationNames: [String] { router.withLock { $0?.notifications.map(\.name) ?? [] } }
}

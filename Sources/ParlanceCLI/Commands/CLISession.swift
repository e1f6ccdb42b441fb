#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import ParlanceInProcess
import ParlanceJSON
import ParlanceProtocol
import ParlanceServer
import Synchronization

/// One run of a command: the in-process server, the terminal, Ctrl-C. The server starts on
/// the first request (so `--help` and usage errors never load anything).
final class CLISession: Sendable {
    let settings: DaemonSettings
    let terminal = Terminal()
    private let state = Mutex<(client: InProcessClient?, active: Int?, interrupts: Int)>((nil, nil, 0))  // guards the client, the request Ctrl-C cancels, and Ctrl-Cs so far
    private let signals = Locked<[DispatchSourceSignal]>([])  // keeps the signal source alive

    init(settings: DaemonSettings) { self.settings = settings }

    /// The client, started and initialized on first use.
    func client() async throws -> InProcessClient {
        if let c = state.withLock({ $0.client }) { return c }
        let c = try settings.inProcessClient(log: settings.startLogging())
        state.withLock { $0.client = c }
        installInterrupt()
        switch await c.call(Initialize.name) {
        case .success: return c
        case .failure(let f): throw f
        }
    }

    /// Sends a request, shows its progress (a bar on a terminal; streamed text through
    /// `view`), and returns its result. Ctrl-C cancels it.
    /// `progress: false` for methods that take no `workDoneToken`.
    /// `lines`: each progress value is handed to it instead (`--json` prints them).
    func request(_ method: String, _ params: JSONObject, view: StreamView? = nil, progress: Bool = true,
                 lines: (@Sendable (ParlanceProtocol.Progress.Value) -> Void)? = nil) async throws -> JSONValue {
        let c = try await client()
        let terminal = self.terminal
        let label = Locked("starting")  // what the bar says: the last phase or message reported
        let report: @Sendable (ParlanceProtocol.Progress.Value) -> Void = { value in
            if let lines { lines(value); return }
            if let view, view.take(value) { return }
            if let p = value.percentage, value.kind != .end {
                if let m = value.message ?? value.phase?.rawValue { label.set(m) }
                terminal.progress(label.get(), percent: p)
            }
        }
        let result = await c.call(method, params, progress: progress ? report : nil, started: { id in self.setActive(id) })
        setActive(nil)
        terminal.clearBar()
        switch result {
        case .success(let v): return v
        case .failure(let f): throw f
        }
    }

    private func setActive(_ id: Int?) { state.withLock { $0.active = id } }

    /// Lets the server finish and stop its models.
    func close() async {
        if let c = state.withLock({ $0.client }) { await c.close() }
    }

    /// Ctrl-C cancels the request in flight (it answers with what it had); a second one
    /// ends the process at once.
    private func installInterrupt() {
        signal(SIGINT, SIG_IGN)
        let src = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        src.setEventHandler { [self] in
            let (client, active, count) = state.withLock { s -> (InProcessClient?, Int?, Int) in
                s.interrupts += 1
                return (s.client, s.active, s.interrupts)
            }
            terminal.clearBar()
            if count > 1 || active == nil { _exit(130) }
            if let client, let active { client.cancel(active) }
        }
        src.resume()
        signals.set([src])
    }
}

/// A value behind a lock, shareable by reference (captured by closures).
final class Locked<T>: @unchecked Sendable {  // every access to `value` holds `lock`
    private var value: T
    private let lock = NSLock()
    init(_ v: T) { value = v }
    func get() -> T { lock.withLock { value } }
    func set(_ v: T) { lock.withLock { value = v } }
}

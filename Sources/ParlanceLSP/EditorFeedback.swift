import JSONRPC
import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import Synchronization

/// `window/showMessage`: what went wrong, for the writer.
enum Messages {
    static func show(_ ctx: RequestContext, _ kind: ShowMessage.Kind, _ text: String) {
        guard let params = try? JSONValue(encoding: ShowMessage.Params(type: kind, message: text)) else { return }
        ctx.services.client.notify(ShowMessage.name, params)
    }

    /// A failure in words: why the rewrite was not applied and what to do.
    static func describe(_ error: any Error) -> String {
        if let f = error as? Outgoing.Failure {
            switch f {
            case .timedOut(let method, _): return "Parlance: the editor did not answer \(method)."
            case .closed: return "Parlance: the editor closed the connection."
            }
        }
        let e = ErrorMapping.response(for: error)
        switch e.code {
        case .contentModified: return "Parlance: \(e.message)"
        case .requestCancelled: return "Parlance: the rewrite was cancelled."
        default:
            if e.data?["reason"]?.stringValue == "loading" { return "Parlance: the language model is still loading; try again in a moment." }
            if e.code.rawValue == ProtocolError.modelUnavailable.code {
                return "Parlance: no language model is available (\(e.message)). Check the model path in the server's settings."
            }
            if e.data?["error"]?.stringValue == "exceededContextWindowSize" {
                return "Parlance: the selection is too long for the model; select less text."
            }
            return "Parlance could not rewrite the selection: \(e.message)"
        }
    }
}

/// Standard LSP work-done progress for a rewrite the server started: the token is created
/// with `window/workDoneProgress/create` (when the client supports it), then `$/progress`
/// begin, reports (message and percentage only, each once), end. The rewrite does not wait
/// for the client to accept the token: its progress is held (`ProgressGate`) until then,
/// and dropped if the client refuses it or does not answer.
struct EditorProgress {
    let token: String?
    let reporter: ProgressReporter

    /// Creates the token and sends `begin` once the client accepts it; `cancel` is what the
    /// client's `window/workDoneProgress/cancel` for the token does from now on.
    static func start(_ lsp: LanguageServer, _ ctx: RequestContext, title: String, cancel: @escaping @Sendable () -> Void) -> EditorProgress {
        guard lsp.client.workDoneProgress else { return EditorProgress(token: nil, reporter: .none) }
        let token = lsp.newToken()
        lsp.track(token, cancel: cancel)  // before the client knows the token: no cancel can come too early
        let client = ctx.services.client
        let gate = ProgressGate { client.notify(Progress.name, ["token": .string(token), "value": .object($0)]) }
        Task {
            do {
                _ = try await client.request(WorkDoneProgressCreate.name, ["token": .string(token)], timeout: .seconds(10))
                gate.open()
            } catch {
                // The client refused the token (or did not answer): the rewrite goes on without progress.
                lsp.untrack(token)
                gate.refuse()
            }
        }
        let last = Mutex<(Int?, String?)>((nil, nil))  // guards the last percentage and message sent, to send each once
        let reporter = ProgressReporter(token: .string(token)) { params in
            guard let value = params["value"], let kind = value["kind"]?.stringValue else { return }
            var v = JSONObject()
            v["kind"] = .string(kind)
            if kind == "begin" {
                v["title"] = .string(title)
                v["cancellable"] = true
                v["percentage"] = 0
            } else if kind == "report" {
                let pct = value["percentage"]?.intValue
                let message = value["message"]?.stringValue ?? value["phase"]?.stringValue
                let changed = last.withLock { l -> Bool in
                    guard (pct != nil && pct != l.0) || (message != nil && message != l.1) else { return false }
                    l = (pct ?? l.0, message ?? l.1)
                    return true
                }
                guard changed else { return }
                if let pct { v["percentage"] = .int(pct) }
                if let message { v["message"] = .string(message) }
            } else if let message = value["message"]?.stringValue {
                v["message"] = .string(message)
            }
            gate.send(v)
        }
        reporter.begin(title)
        return EditorProgress(token: token, reporter: reporter)
    }
}

/// A progress token's notifications, in order: held while the client has not yet accepted
/// the token (LSP: no `$/progress` before the create request is answered), sent once it
/// has (the held ones first), dropped if it refused.
final class ProgressGate: Sendable {
    private enum State { case pending([JSONObject]), open, refused }
    private let state = Mutex<State>(.pending([]))  // guards the gate's state and orders the sends
    private let deliver: @Sendable (JSONObject) -> Void

    init(_ deliver: @escaping @Sendable (JSONObject) -> Void) { self.deliver = deliver }

    func send(_ value: JSONObject) {
        state.withLock { s in
            switch s {
            case .pending(let held): s = .pending(held + [value])
            case .open: deliver(value)
            case .refused: break
            }
        }
    }

    func open() {
        state.withLock { s in
            if case .pending(let held) = s { held.forEach(deliver) }
            s = .open
        }
    }

    func refuse() { state.withLock { $0 = .refused } }
}

/// Cancels a task that may not exist yet: a cancel that comes first cancels it on arrival.
final class Cancellation: Sendable {
    private let state = Mutex<(cancelled: Bool, task: (@Sendable () -> Void)?)>((false, nil))  // guards the flag and the attached task's cancel

    func cancel() {
        let attached = state.withLock { s -> (@Sendable () -> Void)? in
            s.cancelled = true
            return s.task
        }
        attached?()
    }

    func attach<T: Sendable, F: Error>(_ task: Task<T, F>) {
        let cancelled = state.withLock { s -> Bool in
            s.task = { task.cancel() }
            return s.cancelled
        }
        if cancelled { task.cancel() }
    }
}

import ParlanceJSON
import Synchronization

/// Requests this side sends to the other (LSP's `workspace/applyEdit`,
/// `window/workDoneProgress/create`) and the notifications it sends unprompted: outgoing
/// ids, the table of requests waiting for an answer, timeouts, and cancellation
/// (`$/cancelRequest` sent for a request whose waiter was cancelled). The reader hands
/// every response it reads to `receive`, which resumes the waiting task.
public final class Outgoing: Sendable {
    public enum Failure: Error, Sendable, Equatable {
        /// No answer within the time allowed.
        case timedOut(method: String, milliseconds: Int)
        /// The connection closed (or the server is stopping) before the answer came.
        case closed(method: String)
    }

    private struct State {
        var next = 1
        var waiting: [RequestID: (method: String, resume: CheckedContinuation<Result<JSONValue, any Error>, Never>)] = [:]
        /// Timeouts that fired before their request's waiter was registered (a short limit
        /// on a busy machine): the registration finds its outcome here.
        var expired: [RequestID: Failure] = [:]
        var closed = false
    }
    private let state = Mutex(State())  // guards the id counter, the waiters and the closed flag
    private let send: @Sendable (JSONValue) -> Void
    private let prefix: String
    private let cancelNotice: @Sendable (RequestID) -> Message
    /// Requests sent that a cancel notice may follow (sent, and cancellable).
    private let notices = Mutex<Set<RequestID>>([])  // guards the ids of sent, cancellable requests

    /// LSP's cancellation: `$/cancelRequest {id}`.
    public static let lspCancel: @Sendable (RequestID) -> Message = { .notification(method: "$/cancelRequest", params: .object(["id": $0.json])) }

    /// `prefix` makes our ids recognisable in logs ("parlance-3"); they are strings so they
    /// never look like the client's own (usually integer) ids. `cancelNotice` is the
    /// notification telling the other side a request was abandoned (MCP's differs from LSP's).
    public init(prefix: String = "parlance-", cancelNotice: @escaping @Sendable (RequestID) -> Message = Outgoing.lspCancel,
                send: @escaping @Sendable (JSONValue) -> Void) {
        self.prefix = prefix
        self.send = send
        self.cancelNotice = cancelNotice
    }

    public func notify(_ method: String, _ params: JSONValue?) {
        send(Message.notification(method: method, params: params).json)
    }

    /// Sends a request and waits for its answer: the result, or the client's error as a
    /// `ResponseError`, or `Failure`. Cancelling the waiting task sends `$/cancelRequest`
    /// for it (`cancelNotice`) and throws `CancellationError`; a late answer is then ignored.
    /// `cancellable: false`: never followed by a cancel notice (MCP's `initialize`).
    public func request(_ method: String, _ params: JSONValue?, timeout: Duration? = nil, cancellable: Bool = true) async throws -> JSONValue {
        let id = state.withLock { s -> RequestID? in
            if s.closed { return nil }
            defer { s.next += 1 }
            return .string(prefix + String(s.next))
        }
        guard let id else { throw Failure.closed(method: method) }
        let timer = timeout.map { limit in
            Task { [weak self] in
                try await Task.sleep(for: limit)
                let ms = Int(limit.inMilliseconds)
                self?.expire(id, .timedOut(method: method, milliseconds: ms))
            }
        }
        defer {
            timer?.cancel()
            state.withLock { _ = $0.expired.removeValue(forKey: id) }
            notices.withLock { _ = $0.remove(id) }
        }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<JSONValue, any Error>, Never>) in
                let registered = state.withLock { s -> Failure? in
                    if s.closed { return .closed(method: method) }
                    if let f = s.expired.removeValue(forKey: id) { return f }
                    s.waiting[id] = (method, c)
                    return nil
                }
                if let failure = registered { return c.resume(returning: .failure(failure)) }
                if Task.isCancelled { return cancel(id) }
                if cancellable { notices.withLock { _ = $0.insert(id) } }
                send(Message.request(id: id, method: method, params: params).json)
            }
        } onCancel: {
            cancel(id)
        }
        return try outcome.get()
    }

    /// Routes an answer from the other side. False when no request with that id is waiting
    /// (never asked, answered already, cancelled or timed out): the caller logs it.
    @discardableResult
    public func receive(_ message: Message) -> Bool {
        switch message {
        case .response(let id, let result): return finish(id, .success(result))
        case .errorResponse(let id?, let error): return finish(id, .failure(error))
        default: return false
        }
    }

    /// Fails every waiting request (the connection ended) and refuses new ones.
    public func close() {
        let all = state.withLock { s -> [(String, CheckedContinuation<Result<JSONValue, any Error>, Never>)] in
            s.closed = true
            defer { s.waiting = [:] }
            return s.waiting.values.map { ($0.method, $0.resume) }
        }
        for (method, c) in all { c.resume(returning: .failure(Failure.closed(method: method))) }
    }

    public var pendingCount: Int { state.withLock { $0.waiting.count } }

    private func cancel(_ id: RequestID) {
        guard let waiter = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
        abandon(id, waiter.resume, .failure(CancellationError()))
    }

    /// A timeout: the waiting request fails (and the other side is told it was abandoned,
    /// `cancelNotice`), or, when its waiter is not registered yet, the registration will.
    private func expire(_ id: RequestID, _ failure: Failure) {
        let waiter = state.withLock { s -> CheckedContinuation<Result<JSONValue, any Error>, Never>? in
            if let w = s.waiting.removeValue(forKey: id) { return w.resume }
            s.expired[id] = failure
            return nil
        }
        guard let waiter else { return }
        abandon(id, waiter, .failure(failure))
    }

    /// Tells the other side a request it was sent is abandoned, then resumes its waiter.
    /// The notice goes first: once resumed, the waiter forgets the id, and the notice with it.
    private func abandon(_ id: RequestID, _ waiter: CheckedContinuation<Result<JSONValue, any Error>, Never>,
                         _ outcome: Result<JSONValue, any Error>) {
        if notices.withLock({ $0.remove(id) != nil }) { send(cancelNotice(id).json) }
        waiter.resume(returning: outcome)
    }

    @discardableResult
    private func finish(_ id: RequestID, _ outcome: Result<JSONValue, any Error>) -> Bool {
        guard let waiter = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return false }
        waiter.resume.resume(returning: outcome)
        return true
    }
}

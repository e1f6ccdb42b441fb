import JSONRPC
import ParlanceJSON
import ParlanceProtocol
import ParlanceServer
import Synchronization

/// A failed request, as JSON-RPC answered it.
public struct RequestFailure: Error {
    public let code: Int
    public let message: String
    public let data: JSONValue?
}

/// The client of the command line and of `parlance mcp`: the daemon's own `Server`, in this
/// process, over a pair of pipes. Every command and every tool call is a JSON-RPC exchange
/// with the same router `--stdio` serves, so its result is by construction what JSON-RPC returns.
public final class InProcessClient: Sendable {
    private let connection: Connection
    private let serverRun: Task<Int32, Never>
    private let pending = PendingRequests()
    private let reader: Task<Void, Never>

    /// Throws `PipeError` when the pipes cannot be made.
    public init(options: ServerOptions, log: Logger) throws {
        guard let (serverEnd, clientEnd) = Connection.pair(maxMessageSize: options.maxMessageBytes) else {
            throw PipeError()
        }
        connection = clientEnd
        let server = Server(options: options, connection: serverEnd, log: log)
        serverRun = Task { await server.run() }
        let pending = self.pending
        reader = Task {
            for await (incoming, permit) in clientEnd.incoming(watchOutput: false) {
                permit.release()
                guard case .json(let v, _) = incoming else { continue }
                InProcessClient.deliver(v, pending)
            }
            let left = pending.state.withLock { p -> [CheckedContinuation<Result<JSONValue, RequestFailure>, Never>] in
                p.closed = true
                defer { p.waiting = [:] }
                return Array(p.waiting.values)
            }
            left.forEach { $0.resume(returning: .failure(RequestFailure(code: -32603, message: "the server ended", data: nil))) }
        }
    }

    private static func deliver(_ v: JSONValue, _ pending: PendingRequests) {
        if v["method"]?.stringValue == Progress.name {
            guard let token = v["params"]?["token"]?.intValue, let raw = v["params"]?["value"],
                  let value = try? raw.decode(Progress.Value.self) else { return }
            pending.state.withLock { $0.progress[token] }?(value)
            return
        }
        guard let id = v["id"]?.intValue else { return }
        let waiter = pending.state.withLock { p in
            p.progress[id] = nil
            return p.waiting.removeValue(forKey: id)
        }
        if let error = v["error"] {
            waiter?.resume(returning: .failure(RequestFailure(code: error["code"]?.intValue ?? -32603,
                                                              message: error["message"]?.stringValue ?? "request failed", data: error["data"])))
        } else {
            waiter?.resume(returning: .success(v["result"] ?? .null))
        }
    }

    /// Sends a request and waits for its answer. With `progress`, the request's
    /// `workDoneToken` is its id and every `$/progress` value reaches `progress`; `started`
    /// receives the id (to cancel it).
    public func call(_ method: String, _ params: JSONObject = JSONObject(), progress: (@Sendable (Progress.Value) -> Void)? = nil,
              started: @Sendable (Int) -> Void = { _ in }) async -> Result<JSONValue, RequestFailure> {
        await withCheckedContinuation { c in
            let id = pending.state.withLock { p -> Int? in
                if p.closed { return nil }
                let id = p.nextID
                p.nextID += 1
                p.waiting[id] = c
                if let progress { p.progress[id] = progress }
                return id
            }
            guard let id else {
                return c.resume(returning: .failure(RequestFailure(code: -32603, message: "the server ended", data: nil)))
            }
            var params = params
            if progress != nil { params["workDoneToken"] = .int(id) }
            started(id)
            connection.send(.object(JSONObject([("jsonrpc", "2.0"), ("id", .int(id)), ("method", .string(method)), ("params", .object(params))])), framing: .ndjson)
        }
    }

    public func notify(_ method: String, _ params: JSONObject) {
        connection.send(.object(JSONObject([("jsonrpc", "2.0"), ("method", .string(method)), ("params", .object(params))])), framing: .ndjson)
    }

    /// Asks the server to cancel a request: it answers -32800 with its partial output.
    public func cancel(_ id: Int) { notify(CancelRequest.name, JSONObject([("id", .int(id))])) }

    /// Ends the exchange as a pipe would (end of input: the server finishes what is in
    /// flight, then stops its models) and waits for the server.
    public func close() async {
        connection.closeOutput()
        _ = await serverRun.value
    }
}

/// The requests awaiting answers, and their progress handlers.
final class PendingRequests: Sendable {
    struct State {
        var waiting: [Int: CheckedContinuation<Result<JSONValue, RequestFailure>, Never>] = [:]
        var progress: [Int: @Sendable (Progress.Value) -> Void] = [:]
        var nextID = 1
        var closed = false
    }
    let state = Mutex(State())  // guards the waiting requests, their progress handlers and the next id
}

/// The in-process server's pipes could not be made (out of file descriptors).
public struct PipeError: Error, CustomStringConvertible {
    public var description: String { "could not create a pipe" }
}

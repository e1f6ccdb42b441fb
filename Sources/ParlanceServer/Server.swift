import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceFeatures
import ParlanceJSON
import ParlanceLSP
import ParlanceProtocol
import Synchronization

public struct ServerOptions: Sendable {
    public var models: RegistrySettings
    public var maxMessageBytes: Int
    public var services: ServiceOptions
    public init(models: RegistrySettings, maxMessageBytes: Int, services: ServiceOptions) {
        self.models = models
        self.maxMessageBytes = maxMessageBytes
        self.services = services
    }
}

/// The JSON-RPC server: lifecycle state machine, dispatch through the one registration
/// list, progress, cancellation. Every request gets exactly one response.
public final class Server: Sendable {
    public static let version = "0.1.0"
    public static let protocolVersion = "1.11"

    let connection: Connection
    let log: Logger
    let services: Services
    let router: Router
    let lifecycle: Lifecycle
    let lsp = LanguageServer()

    /// `extraRoutes` registers methods beside the registry's (tests use it for a handler
    /// that throws an unexpected error).
    public init(options: ServerOptions, connection: Connection, log: Logger, extraRoutes: (inout Router) -> Void = { _ in }) {
        self.connection = connection
        self.log = log
        if !Ablation.disabled.isEmpty {
            log.warning("checks switched off (PARLANCE_DISABLE_CHECKS): \(Ablation.disabled.sorted().joined(separator: ", "))"
                        + (Ablation.unknown.isEmpty ? "" : "; unknown ids: \(Ablation.unknown.joined(separator: ", "))"))
        }
        let models = ModelRegistry(settings: options.models, log: { [log] in log.info($0) })
        services = Services(models: models, options: options.services, client: Outgoing(send: { [connection] in connection.send($0) }),
                            warn: { [log] in log.warning($0) }, info: { [log] in log.info($0) })
        lifecycle = Lifecycle(maxMessageBytes: options.maxMessageBytes)
        var router = Registry.router(lifecycle, lsp)
        extraRoutes(&router)
        self.router = router
        lifecycle.router.withLock { $0 = router }
    }

    /// Serves until `exit` or end of input; returns the process exit code.
    public func run() async -> Int32 {
        // Each message's permit is held until it is answered (a spawned request keeps it), so
        // a client pipelining more than the window waits instead of growing the daemon.
        for await (incoming, permit) in connection.incoming() {
            switch incoming {
            case .json(.array(let batch), _):
                if batch.isEmpty {
                    send(Message.errorResponse(id: nil, error: .invalidRequest("empty batch")).json)
                } else {
                    await handleBatch(batch, permit: permit)
                }
            case .json(let value, _):
                if let code = await handle(value, permit: permit, reply: { [self] in send($0) }) {
                    // `exit`: after a shutdown nothing is left; before one, the work is abandoned.
                    return await finish(code, cancel: code != 0)
                }
            case .parseError(let message, _):
                log.error("parse error: \(message)")
                send(Message.errorResponse(id: nil, error: ResponseError(.parseError, "invalid JSON: \(message)")).json)
            case .framingError(let err, _):
                log.error("framing error: \(err.message)")
                let code: ErrorCode = err.kind == .tooLarge ? .invalidRequest : .parseError
                send(Message.errorResponse(id: nil, error: ResponseError(code, err.message, data: [
                    "error": .string(err.kind.rawValue), "maxMessageBytes": .int(connection.maxMessageSize)])).json)
            }
        }
        if connection.isOutputClosed {
            log.info("output closed (the client has gone): cancelling the work in flight")
            return await finish(0, cancel: true)
        }
        log.info("input closed: finishing the work in flight")
        return await finish(0, cancel: false)
    }

    /// The OpenRPC document, without starting a server.
    public static func specText() -> String {
        let lifecycle = Lifecycle(maxMessageBytes: 0)
        return Spec.openRPC(Registry.router(lifecycle, LanguageServer())).serialized(pretty: true)
    }

    /// Cancels everything, answers what it can within a moment, and stops the engine
    /// (signal handling). The caller exits the process.
    public func stop() async { _ = await finish(0, cancel: true) }

    /// Ends the session: drains (every request answered) or cancels (each cancelled request
    /// gets up to half a second to answer with its partial output), then stops the models.
    private func finish(_ code: Int32, cancel: Bool) async -> Int32 {
        lsp.cancelAll()
        if cancel {
            await lifecycle.cancelAndDrain(within: 0.5)
        } else {
            await lifecycle.drain()
        }
        services.client.close()
        await services.mcp.stopAll()
        services.models.shutdown()
        return code
    }

    func send(_ v: JSONValue) { connection.send(v) }

    /// Handles one message. Returns an exit code when the message was `exit`.
    func handle(_ value: JSONValue, permit: Permit? = nil, reply: @escaping @Sendable (JSONValue) -> Void) async -> Int32? {
        let message: Message
        switch Message.decode(value) {
        case .success(let m): message = m
        case .failure(let f):
            log.error("invalid message: \(f.error.message)")
            reply(Message.errorResponse(id: f.id, error: f.error).json)
            return nil
        }
        switch message {
        case .request(let id, let method, let params):
            await request(id: id, method: method, params: params, permit: permit, reply: reply)
        case .notification(let method, let params):
            return await notification(method: method, params: params)
        case .response, .errorResponse:
            // An answer to a request of ours (workspace/applyEdit…): the waiting task resumes.
            if !services.client.receive(message) {
                log.error("ignoring a response to a request that is not waiting (unknown, answered already, cancelled or timed out): \(message.json.serialized())")
            }
        }
        return nil
    }

    private func notification(method: String, params: JSONValue?) async -> Int32? {
        if let handler = router.notificationHandlers[method] {
            guard lifecycle.state.withLock({ $0.phase == .running }) else {
                log.error("ignoring \(method): the server is not running (initialize first, or shutting down)")
                return nil
            }
            // In arrival order, whole, before the next message is read (an edit is applied
            // before any request that follows it reads the buffer).
            let ctx = RequestContext(id: .string("notification:" + method), progress: .none, services: services)
            defer { ctx.modelUses.close(services.models) }
            do {
                try await handler(params, ctx)
            } catch let e as ResponseError {
                log.error("\(method): \(e.message)")
            } catch {
                log.fault("\(method): \(error)")
            }
            return nil
        }
        switch method {
        case Exit.name:
            guard lifecycle.isShuttingDown else { return 1 }
            // A shutdown still draining answers first (a pipe sends `exit` right behind it).
            await lifecycle.drain()
            return 0
        case CancelRequest.name:
            guard let raw = params?["id"], let id = RequestID(raw) else {
                log.error("$/cancelRequest without a valid id")
                return nil
            }
            let task = lifecycle.state.withLock { $0.inFlight[id] }
            log.debug("cancel \(id): \(task == nil ? "not in flight" : "cancelling")")
            task?.cancel()
        case Initialized.name:
            break
        default:
            log.debug("ignoring notification \(method)")
        }
        return nil
    }

    private func request(id: RequestID, method: String, params: JSONValue?, permit: Permit?, reply: @escaping @Sendable (JSONValue) -> Void) async {
        func fail(_ e: ResponseError) { reply(Message.errorResponse(id: id, error: e).json) }
        let phase = lifecycle.state.withLock { $0.phase }
        switch (phase, method) {
        case (.uninitialized, Initialize.name), (.running, _): break
        case (.uninitialized, _):
            return fail(ResponseError(.serverNotInitialized, "server not initialized: send 'initialize' first", data: ["method": .string(method)]))
        case (.shuttingDown, _):
            return fail(.invalidRequest("server is shutting down: only 'exit' is accepted", data: ["method": .string(method)]))
        }
        if phase == .running, method == Initialize.name {
            return fail(.invalidRequest("server already initialized", data: ["method": .string(method)]))
        }
        guard let route = router.routes[method] else {
            return fail(ResponseError(.methodNotFound, "method not found: \(method)", data: ["method": .string(method)]))
        }
        lsp.requestArrived(method)
        let token = params?["workDoneToken"].flatMap { t -> JSONValue? in
            switch t { case .int, .string: return t; default: return nil }
        }
        let conn = connection
        let progress = ProgressReporter(token: token, send: { conn.send(Message.notification(method: Progress.name, params: $0).json) })
        let ctx = RequestContext(id: id, progress: progress, services: services)
        let modelUses = ctx.modelUses
        // The id is claimed before any work starts, so a duplicate id is answered once,
        // with -32600, and never runs.
        guard register(id) else { return fail(.invalidRequest("request id \(id) is already in use by a request in flight")) }
        let answer: @Sendable (Result<JSONValue, any Error>) -> Void = { [self] outcome in
            let response: JSONValue
            switch outcome {
            case .success(let result):
                progress.end("done")
                response = Message.response(id: id, result: result).json
            case .failure(let error):
                let e = Task.isCancelled && !(error is ResponseError) && !(error is EngineError)
                    ? ErrorMapping.response(for: CancellationError()) : ErrorMapping.response(for: error)
                progress.end(e.code == .requestCancelled ? "cancelled" : "failed")
                if e.code == .internalError { log.fault("\(method) \(id): \(e.message)") } else { log.error("\(method) \(id): \(e.message)") }
                response = Message.errorResponse(id: id, error: e).json
            }
            lifecycle.state.withLock { _ = $0.inFlight.removeValue(forKey: id) }
            reply(response)
            modelUses.close(services.models)
            permit?.release()
        }
        progress.begin(route.summary)
        // The claim runs here, before the next message is read: requests take their claims
        // on shared state (a session, a document's text, a variation id) in arrival order.
        let work: Route.Work
        do {
            work = try await route.claim(params, ctx)
        } catch {
            return answer(.failure(error))
        }
        let task = Task {
            // A pool's provenance names the endpoint that served this request's generations.
            await ServedEndpoints.$current.withValue(ServedEndpoints()) {
                do { answer(.success(try await work())) } catch { answer(.failure(error)) }
            }
        }
        lifecycle.state.withLock { s in
            // Unless it already finished and removed itself: then there is nothing to cancel.
            if s.inFlight[id] != nil { s.inFlight[id] = task }
        }
    }

    /// Claims an id for a request in flight; false when it is already in flight. The
    /// placeholder task is replaced by the request's own once it is spawned.
    private func register(_ id: RequestID) -> Bool {
        lifecycle.state.withLock { s in
            if s.inFlight[id] != nil { return false }
            s.inFlight[id] = Task {}
            return true
        }
    }

    /// Takes each element's claims in order, inline like single messages, then answers the
    /// batch as one array once every reply is in.
    private func handleBatch(_ batch: [JSONValue], permit: Permit) async {
        let replies = ReplyCollector()
        for element in batch { _ = await handle(element, reply: { replies.append($0) }) }
        let expected = batch.filter(Server.expectsReply).count
        lifecycle.track { [self] in
            defer { permit.release() }
            let all = await replies.wait(for: expected)
            if !all.isEmpty { send(.array(all)) }
        }
    }

    static func expectsReply(_ v: JSONValue) -> Bool {
        guard case .object(let o) = v else { return true }
        if o["method"] == nil { return o["result"] == nil && o["error"] == nil }
        return o["id"] != nil
    }
}

/// Collects a batch's replies until all have arrived.
final class ReplyCollector: Sendable {
    private struct State {
        var items: [JSONValue] = []
        var expected = Int.max
        var waiter: CheckedContinuation<[JSONValue], Never>? = nil
    }
    private let state = Mutex(State())  // guards the replies gathered so far and the one waiter

    func append(_ v: JSONValue) {
        let ready = state.withLock { s -> (CheckedContinuation<[JSONValue], Never>, [JSONValue])? in
            s.items.append(v)
            guard s.items.count >= s.expected, let w = s.waiter else { return nil }
            s.waiter = nil
            return (w, s.items)
        }
        ready.map { $0.0.resume(returning: $0.1) }
    }

    /// Returns once `count` replies have arrived.
    func wait(for count: Int) async -> [JSONValue] {
        await withCheckedContinuation { c in
            let ready = state.withLock { s -> [JSONValue]? in
                s.expected = count
                if s.items.count >= count { return s.items }
                s.waiter = c
                return nil
            }
            ready.map { c.resume(returning: $0) }
        }
    }
}

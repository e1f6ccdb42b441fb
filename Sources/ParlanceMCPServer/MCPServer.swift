import Foundation
import JSONRPC
import ParlanceInProcess
import ParlanceJSON
import ParlanceMCP
import ParlanceProtocol
import ParlanceServer
import Synchronization

/// `parlance mcp`: Parlance as an MCP server on stdin/stdout (MCP's stdio transport, one
/// JSON-RPC message per line). Each tool call is a request to the daemon's own server,
/// in this process (the same router `--stdio` serves, with the same flags and config), so
/// a tool's result is what the method returns: as `structuredContent`, with a text
/// rendering. Resources are the documents opened through it and the compose history;
/// prompts are a rewrite and a summary. The methods it serves are listed once, in
/// `MCPMethods.table` (Methods.swift).
public final class MCPServer: Sendable {
    let connection: Connection
    let client: InProcessClient
    struct State {
        var version = MCPWire.latest
        var level = MCPWire.levels.firstIndex(of: "warning")!
        /// The requests being answered; of those, the ones cancelled, and each tool call's
        /// request to the daemon once sent.
        var active: Set<RequestID> = []
        var cancelled: Set<RequestID> = []
        var running: [RequestID: Int] = [:]
        /// The text of each document opened through a tool (resources/read).
        var opened: [String: String] = [:]
    }
    let state = Mutex(State())  // guards the negotiated revision, the log level, the calls in flight and the opened documents

    init(connection: Connection, client: InProcessClient) {
        self.connection = connection
        self.client = client
    }

    /// Serves MCP on `connection` until its input ends, each tool call a request to
    /// `client`'s server; then lets that server finish. Throws the server's answer when
    /// it refuses `initialize`.
    public static func serve(on connection: Connection, client: InProcessClient, log: Logger) async throws {
        if case .failure(let f) = await client.call(Initialize.name, ["capabilities": ["tools": false]]) { throw f }
        let server = MCPServer(connection: connection, client: client)
        log.info("parlance \(Server.version) serving MCP on stdio (revisions \(MCPWire.versions.joined(separator: ", ")))")
        await server.loop(MCPMethods.table(server))
        await client.close()
    }

    /// Reads messages until end of input; each request runs in its own task, so a long
    /// call never holds up `ping` or a cancellation.
    func loop(_ methods: MCPRouter) async {
        await withDiscardingTaskGroup { group in
            for await (incoming, permit) in connection.incoming() {
                permit.release()
                switch incoming {
                case .json(let v, _):
                    switch Message.decode(v) {
                    case .success(.request(let id, let method, let params)):
                        // Active before the next message is read: a cancellation right behind it finds it.
                        state.withLock { _ = $0.active.insert(id) }
                        let route = methods.route(method)
                        let params = params ?? .object(JSONObject())
                        if route.ordered {
                            // Answered before the next message is read: a request right behind
                            // `initialize` or `logging/setLevel` sees the revision or level it set.
                            await answer(id, route, params)
                        } else {
                            group.addTask { await self.answer(id, route, params) }
                        }
                    case .success(.notification(let method, let params)):
                        methods.notify(method, params)
                    case .success(.response), .success(.errorResponse):
                        break  // this server sends no requests
                    case .failure(let f):
                        send(.errorResponse(id: f.id, error: f.error))
                    }
                case .parseError(let m, _):
                    send(.errorResponse(id: nil, error: ResponseError(.parseError, "not JSON: \(m)")))
                case .framingError(let e, _):
                    send(.errorResponse(id: nil, error: ResponseError(.parseError, "\(e)")))
                }
            }
        }
    }

    func send(_ m: Message) { connection.send(m.json, framing: .ndjson) }

    /// Answers a request with its route's result, unless it was cancelled meanwhile (MCP:
    /// no answer to a cancelled request).
    func answer(_ id: RequestID, _ route: MCPRoute, _ params: JSONValue) async {
        let result = await route.answer(id, params)
        let cancelled = state.withLock { s -> Bool in
            s.active.remove(id)
            return s.cancelled.remove(id) != nil
        }
        if cancelled { return }
        switch result {
        case .success(let v): send(.response(id: id, result: v))
        case .failure(let e): send(.errorResponse(id: id, error: e))
        }
    }

    /// `notifications/cancelled`: the request is answered no more, and its request to the
    /// daemon (a tool call's, once sent) is cancelled too.
    func cancel(_ id: RequestID) {
        let daemonID = state.withLock { s -> Int? in
            guard s.active.contains(id) else { return nil }
            s.cancelled.insert(id)
            return s.running[id]
        }
        if let daemonID { client.cancel(daemonID) }
    }

    /// MCP's log: `notifications/message` at or above the level the host set (default warning).
    func logToHost(_ level: String, _ text: String) {
        guard let i = MCPWire.levels.firstIndex(of: level), i >= state.withLock({ $0.level }) else { return }
        send(.notification(method: MCPWire.message, params: ["level": .string(level), "logger": "parlance", "data": .string(text)]))
    }

    /// Whether the negotiated revision has structured tool results and output schemas.
    var structuredResults: Bool { state.withLock { $0.version } >= "2025-06-18" }
}

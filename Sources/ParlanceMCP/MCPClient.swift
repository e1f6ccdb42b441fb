#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import JSONRPC
import ParlanceJSON
import Synchronization

/// How to start one MCP server: the shape hosts already use in their config files
/// (`{"command": …, "args": […], "env": {…}}`), under a name.
public struct MCPServerSpec: Sendable, Hashable {
    public var name: String
    public var command: String
    public var args: [String]
    public var env: [String: String]
    public init(name: String, command: String, args: [String] = [], env: [String: String] = [:]) {
        self.name = name
        self.command = command
        self.args = args
        self.env = env
    }
}

/// Why an MCP server could not serve a request. `reason` is the word a program switches on.
public enum MCPFault: Error, Sendable, CustomStringConvertible {
    /// The command is not an executable file, nor found on PATH.
    case notFound(command: String, searched: [String])
    case couldNotStart(command: String, detail: String)
    /// The process ended (or closed its output) before answering `method`.
    case exited(status: String, method: String)
    case timedOut(method: String, milliseconds: Int)
    /// It wrote something that is not a JSON-RPC message (the excerpt says what).
    case malformedOutput(String)
    /// It answered the handshake or a listing with a JSON-RPC error, or with a result that is not one.
    case protocolError(method: String, detail: String)

    public var reason: String {
        switch self {
        case .notFound: return "notFound"
        case .couldNotStart: return "couldNotStart"
        case .exited: return "serverExited"
        case .timedOut: return "timedOut"
        case .malformedOutput: return "malformedOutput"
        case .protocolError: return "protocolError"
        }
    }

    public var description: String {
        switch self {
        case .notFound(let c, let searched):
            return c.contains("/") ? "\(c) is not an executable file" : "command '\(c)' not found on PATH (\(searched.joined(separator: ":")))"
        case .couldNotStart(let c, let d): return "could not start \(c): \(d)"
        case .exited(let status, let m): return "the server exited (\(status)) before answering \(m)"
        case .timedOut(let m, let ms): return "the server did not answer \(m) within \(ms) ms"
        case .malformedOutput(let excerpt): return "the server wrote output that is not JSON-RPC: \(excerpt)"
        case .protocolError(let m, let d): return "the server's answer to \(m) is not usable: \(d)"
        }
    }
}

/// A tool an MCP server lists.
public struct MCPTool: Sendable, Hashable {
    public var name: String
    public var description: String?
    public var inputSchema: JSONValue
}

/// One running MCP server, a child process spoken to over its stdin and stdout (MCP's
/// stdio transport: one JSON-RPC message per line). Its stderr is the daemon's. The
/// handshake, listing and calls are requests with a time limit; an abandoned call is
/// cancelled with `notifications/cancelled`. A crash, silence or garbage fails the
/// requests waiting on it with an `MCPFault`, never the daemon.
public final class MCPClient: Sendable {
    public let spec: MCPServerSpec
    public let pid: pid_t
    private let connection: Connection
    private let outgoing: Outgoing
    private struct State {
        var fault: MCPFault?
        var exitStatus: String?
        var readerDone = false
        var serverInfo: JSONValue = .null
        var protocolVersion = ""
        var stopped = false
    }
    private let state = Mutex(State())  // guards the first fault seen, the exit status, the reader's end and the handshake's answer

    /// Starts the server and completes the handshake within `timeout`.
    public static func start(_ spec: MCPServerSpec, timeout: Duration, clientVersion: String,
                             log: @escaping @Sendable (String) -> Void,
                             onToolsChanged: @escaping @Sendable () -> Void) async throws -> MCPClient {
        let path = try resolve(spec)
        let (pid, input, output) = try spawn(path, spec)
        let connection = Connection(input: output, output: input)
        let outgoing = Outgoing(prefix: "parlance-", cancelNotice: { id in
            .notification(method: MCPWire.cancelled, params: ["requestId": id.json, "reason": "the session's tool call was abandoned"])
        }, send: { connection.send($0, framing: .ndjson) })
        let client = MCPClient(spec: spec, pid: pid, connection: connection, outgoing: outgoing)
        client.listen(log: log, onToolsChanged: onToolsChanged)
        do {
            let answer = try await client.request(MCPWire.initialize, [
                "protocolVersion": .string(MCPWire.latest), "capabilities": ["roots": ["listChanged": false]],
                "clientInfo": ["name": "parlance", "version": .string(clientVersion)],
            ], timeout: timeout, cancellable: false)
            guard let version = answer["protocolVersion"]?.stringValue, MCPWire.versions.contains(version) else {
                throw MCPFault.protocolError(method: MCPWire.initialize,
                                             detail: "protocolVersion \(answer["protocolVersion"]?.serialized() ?? "missing") is none of \(MCPWire.versions.joined(separator: ", "))")
            }
            client.state.withLock {
                $0.serverInfo = answer["serverInfo"] ?? .null
                $0.protocolVersion = version
            }
        } catch {
            await client.stop()
            throw error
        }
        outgoing.notify(MCPWire.initialized, nil)
        return client
    }

    private init(spec: MCPServerSpec, pid: pid_t, connection: Connection, outgoing: Outgoing) {
        self.spec = spec
        self.pid = pid
        self.connection = connection
        self.outgoing = outgoing
        watchExit()
    }

    /// The server's name and version, as its handshake said.
    public var serverInfo: JSONValue { state.withLock { $0.serverInfo } }
    public var protocolVersion: String { state.withLock { $0.protocolVersion } }

    /// True until the process has exited or a fault ended the exchange.
    public var isRunning: Bool { state.withLock { $0.exitStatus == nil && $0.fault == nil && !$0.readerDone } }

    /// Every tool the server lists (all pages).
    public func listTools(timeout: Duration) async throws -> [MCPTool] {
        var tools: [MCPTool] = []
        var cursor: JSONValue? = nil
        var pages = 0
        repeat {
            pages += 1
            let page = try await request(MCPWire.toolsList, cursor.map { ["cursor": $0] } ?? JSONObject(), timeout: timeout)
            guard let list = page["tools"]?.arrayValue else {
                throw MCPFault.protocolError(method: MCPWire.toolsList, detail: "no tools array in \(page.serialized().prefix(160))")
            }
            for t in list {
                guard let name = t["name"]?.stringValue else {
                    throw MCPFault.protocolError(method: MCPWire.toolsList, detail: "a tool without a name: \(t.serialized().prefix(160))")
                }
                tools.append(MCPTool(name: name, description: t["description"]?.stringValue,
                                     inputSchema: t["inputSchema"] ?? ["type": "object", "properties": .object(JSONObject())]))
            }
            cursor = page["nextCursor"].flatMap { $0 == .null ? nil : $0 }
            if cursor != nil && pages >= 100 {
                throw MCPFault.protocolError(method: MCPWire.toolsList, detail: "more than 100 pages of tools")
            }
        } while cursor != nil
        return tools
    }

    /// Calls a tool: its result (`content`, maybe `structuredContent` and `isError`), or a
    /// JSON-RPC error answer as `ResponseError`, or an `MCPFault`.
    public func callTool(_ name: String, arguments: JSONValue, timeout: Duration) async throws -> JSONValue {
        let r = try await request(MCPWire.toolsCall, ["name": .string(name), "arguments": arguments], timeout: timeout)
        guard r["content"]?.arrayValue != nil || r["structuredContent"] != nil else {
            throw MCPFault.protocolError(method: MCPWire.toolsCall, detail: "no content in \(r.serialized().prefix(160))")
        }
        return r
    }

    /// A request; transport failures become the fault behind them.
    func request(_ method: String, _ params: JSONObject, timeout: Duration, cancellable: Bool = true) async throws -> JSONValue {
        do {
            return try await outgoing.request(method, .object(params), timeout: timeout, cancellable: cancellable)
        } catch let f as Outgoing.Failure {
            switch f {
            case .timedOut(_, let ms): throw MCPFault.timedOut(method: method, milliseconds: ms)
            case .closed:
                let (fault, status) = await outcome()
                throw fault ?? MCPFault.exited(status: status, method: method)
            }
        }
    }

    /// The fault that ended the exchange, or how the process exited (waiting up to a second
    /// for it to be reaped, so the status is known).
    private func outcome() async -> (MCPFault?, String) {
        if let f = state.withLock({ $0.fault }) { return (f, "") }
        _ = await exited(within: 1)
        return state.withLock { ($0.fault, $0.exitStatus ?? "still running, its output closed") }
    }

    /// Reads the server's messages: answers go to their waiters, its own requests are
    /// answered (ping, an empty roots list, else method not found), `tools/list_changed`
    /// is passed on. Anything that is not JSON-RPC is a fault: the server is stopped.
    private func listen(log: @escaping @Sendable (String) -> Void, onToolsChanged: @escaping @Sendable () -> Void) {
        let connection = self.connection, outgoing = self.outgoing, name = spec.name
        Task { [self] in
            defer {
                state.withLock { $0.readerDone = true }
                outgoing.close()
            }
            for await (incoming, permit) in connection.incoming(watchOutput: false) {
                permit.release()
                let v: JSONValue
                switch incoming {
                case .json(let value, _): v = value
                case .parseError(let m, _): return self.fail(.malformedOutput(m), log: log)
                case .framingError(let e, _): return self.fail(.malformedOutput("\(e)"), log: log)
                }
                switch Message.decode(v) {
                case .failure: return self.fail(.malformedOutput(String(v.serialized().prefix(200))), log: log)
                case .success(let m):
                    switch m {
                    case .response, .errorResponse:
                        if !outgoing.receive(m) { log("mcp \(name): an answer to no request: \(v.serialized().prefix(200))") }
                    case .request(let id, let method, _):
                        let reply: Message
                        switch method {
                        case MCPWire.ping: reply = .response(id: id, result: .object(JSONObject()))
                        case MCPWire.rootsList: reply = .response(id: id, result: ["roots": []])
                        default: reply = .errorResponse(id: id, error: ResponseError(.methodNotFound, "parlance does not serve \(method)"))
                        }
                        if !state.withLock({ $0.stopped }) { connection.send(reply.json, framing: .ndjson) }
                    case .notification(let method, let params):
                        if method == MCPWire.toolsListChanged { onToolsChanged() }
                        if method == MCPWire.message { log("mcp \(name): \(params?["data"]?.stringValue ?? params?.serialized() ?? "")") }
                    }
                }
            }
        }
    }

    private func fail(_ fault: MCPFault, log: @Sendable (String) -> Void) {
        log("mcp \(spec.name): \(fault); stopping it")
        state.withLock {
            if $0.fault == nil { $0.fault = fault }
            if $0.exitStatus == nil { kill(-pid, SIGKILL) }  // its process group: children holding the pipe too
        }
    }

    /// Reaps the process when it exits and records how.
    private func watchExit() {
        let pid = self.pid
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let code = status & 0x7f == 0 ? "exit code \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
            state.withLock { $0.exitStatus = code }
        }
    }

    /// Stops the server as MCP's stdio transport says: close its input, wait, then SIGTERM,
    /// then SIGKILL (two seconds each).
    public func stop() async {
        let first = state.withLock { s -> Bool in
            defer { s.stopped = true }
            return !s.stopped
        }
        guard first else { return }
        outgoing.close()
        connection.closeOutput()
        for (signal, wait) in [(Int32(0), 2.0), (SIGTERM, 2.0), (SIGKILL, 5.0)] {
            if signal != 0 { state.withLock { if $0.exitStatus == nil { kill(-pid, signal) } } }
            if await exited(within: wait) { break }
        }
        // The reader has seen end of file once the group is gone; its descriptor can go.
        if await readerDone(within: 2) { close(connection.input) }
    }

    private func readerDone(within seconds: Double) async -> Bool {
        await Self.poll(seconds) { self.state.withLock { $0.readerDone } }
    }

    /// True once the process is reaped, waiting at most `seconds`.
    private func exited(within seconds: Double) async -> Bool {
        await Self.poll(seconds) { self.state.withLock { $0.exitStatus != nil } }
    }

    /// Waits until `done` or `seconds` pass, in a task of its own: a cancelled caller
    /// (its sleeps return at once) must not spin.
    private static func poll(_ seconds: Double, _ done: @escaping @Sendable () -> Bool) async -> Bool {
        await Task.detached {
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while !done() && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            return done()
        }.value
    }

    public var exitStatus: String? { state.withLock { $0.exitStatus } }
    public var fault: MCPFault? { state.withLock { $0.fault } }

    // MARK: starting the process

    /// The executable: the command itself when it has a `/`, else the first match on PATH
    /// (the server's own env PATH when it sets one).
    static func resolve(_ spec: MCPServerSpec) throws -> String {
        let fm = FileManager.default
        if spec.command.contains("/") {
            guard fm.isExecutableFile(atPath: spec.command) else { throw MCPFault.notFound(command: spec.command, searched: []) }
            return spec.command
        }
        let path = spec.env["PATH"] ?? ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let dirs = path.split(separator: ":").map(String.init)
        for d in dirs where fm.isExecutableFile(atPath: d + "/" + spec.command) { return d + "/" + spec.command }
        throw MCPFault.notFound(command: spec.command, searched: dirs)
    }

    /// posix_spawn with the child's stdin and stdout on pipes, stderr shared, the signals
    /// the daemon ignores (SIGPIPE, SIGINT, SIGTERM) back to their defaults, in a process
    /// group of its own.
    static func spawn(_ path: String, _ spec: MCPServerSpec) throws -> (pid_t, Int32, Int32) {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        // Close-on-exec: no other child spawned meanwhile keeps these pipes open.
        func cloexecPipe(_ fds: inout [Int32]) -> Bool {
            guard pipe(&fds) == 0 else { return false }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return true
        }
        guard cloexecPipe(&toChild) else { throw MCPFault.couldNotStart(command: spec.command, detail: "pipe: \(String(cString: strerror(errno)))") }
        guard cloexecPipe(&fromChild) else {
            close(toChild[0]); close(toChild[1])
            throw MCPFault.couldNotStart(command: spec.command, detail: "pipe: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        // Its own process group, so stopping it stops what it started (npx, uvx, a shell).
        posix_spawnattr_setpgroup(&attr, 0)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        var env = ProcessInfo.processInfo.environment
        for (k, v) in spec.env { env[k] = v }
        let argv = ([path] + spec.args).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        close(toChild[0])
        close(fromChild[1])
        guard rc == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw MCPFault.couldNotStart(command: spec.command, detail: String(cString: strerror(rc)))
        }
        return (pid, toChild[1], fromChild[0])
    }
}

import Foundation
import JSONRPC
import ParlanceJSON
import ParlanceMCP
import ParlanceProtocol

/// The MCP servers sessions may use: each is started on first use (a session that names
/// it, a call, or `mcp/list` with start), initialized, its tools listed (again after
/// `notifications/tools/list_changed`), stopped after `idleSeconds` without a call and at
/// exit. A server that crashed is started again by its next use.
public actor MCPServers {
    public let specs: [MCPServerSpec]
    let idleSeconds: Double
    let startTimeout: Duration
    let version: String
    let log: @Sendable (String) -> Void
    private var running: [String: MCPClient] = [:]
    private var starting: [String: Task<MCPClient, any Error>] = [:]
    private var tools: [String: [MCPTool]] = [:]
    private var stale: Set<String> = []
    private var lastFault: [String: MCPFault] = [:]
    private var inFlight: [String: Int] = [:]
    private var calls: [String: Int] = [:]
    private var idleTimers: [String: Task<Void, Never>] = [:]
    private var closed = false

    public init(specs: [MCPServerSpec], idleSeconds: Double = 300, startTimeout: Duration = .seconds(30), version: String = "0",
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.specs = specs
        self.idleSeconds = idleSeconds
        self.startTimeout = startTimeout
        self.version = version
        self.log = log
    }

    public nonisolated var names: [String] { specs.map(\.name) }

    func spec(_ name: String) -> MCPServerSpec? { specs.first { $0.name == name } }

    /// The running server, started (once, however many ask at the same time) when it is not.
    func client(_ name: String) async throws -> MCPClient {
        if let c = running[name], c.isRunning { return c }
        if let c = running.removeValue(forKey: name) { await c.stop() }
        if let t = starting[name] { return try await t.value }
        guard let spec = spec(name), !closed else { throw MCPFault.couldNotStart(command: name, detail: closed ? "the daemon is stopping" : "no such server") }
        let (timeout, version, log) = (startTimeout, self.version, self.log)
        let task = Task {
            try await MCPClient.start(spec, timeout: timeout, clientVersion: version, log: log,
                                      onToolsChanged: { [weak self] in Task { await self?.toolsChanged(name) } })
        }
        starting[name] = task
        do {
            let c = try await task.value
            starting[name] = nil
            if closed {
                await c.stop()
                throw MCPFault.couldNotStart(command: name, detail: "the daemon is stopping")
            }
            running[name] = c
            tools[name] = nil
            lastFault[name] = nil
            log("mcp \(name): started (pid \(c.pid), protocol \(c.protocolVersion))")
            scheduleIdleStop(name)
            return c
        } catch {
            starting[name] = nil
            if let f = error as? MCPFault { lastFault[name] = f }
            throw error
        }
    }

    private func toolsChanged(_ name: String) {
        log("mcp \(name): its tools changed")
        stale.insert(name)
    }

    /// The server's tools, listed once per start (and again after it said they changed).
    public func tools(of name: String) async throws -> [MCPTool] {
        let c = try await client(name)
        if let t = tools[name], !stale.contains(name) { return t }
        stale.remove(name)
        do {
            let t = try await c.listTools(timeout: startTimeout)
            tools[name] = t
            return t
        } catch let f as MCPFault {
            lastFault[name] = f
            throw f
        }
    }

    /// Calls one tool: the server's result, a `ResponseError` it answered, or an `MCPFault`.
    public func call(_ name: String, tool: String, arguments: JSONValue, timeoutMs: Int) async throws -> JSONValue {
        let c = try await client(name)
        inFlight[name, default: 0] += 1
        calls[name, default: 0] += 1
        idleTimers[name]?.cancel()
        defer {
            inFlight[name, default: 1] -= 1
            scheduleIdleStop(name)
        }
        do {
            return try await c.callTool(tool, arguments: arguments, timeout: .milliseconds(timeoutMs))
        } catch let f as MCPFault {
            lastFault[name] = f
            throw f
        }
    }

    private func scheduleIdleStop(_ name: String) {
        idleTimers[name]?.cancel()
        guard idleSeconds > 0 else { return }
        let seconds = idleSeconds
        idleTimers[name] = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            guard !Task.isCancelled else { return }
            await self?.stopIfIdle(name)
        }
    }

    private func stopIfIdle(_ name: String) async {
        guard inFlight[name, default: 0] == 0, let c = running.removeValue(forKey: name) else { return }
        log("mcp \(name): idle \(Int(idleSeconds)) s, stopping it")
        await c.stop()
    }

    /// Stops every server (at exit); later uses fail.
    public func stopAll() async {
        closed = true
        idleTimers.values.forEach { $0.cancel() }
        for t in starting.values { _ = try? await t.value }  // each start sees `closed` and stops what it started
        let all = running.values
        running = [:]
        await withTaskGroup(of: Void.self) { g in
            for c in all { g.addTask { await c.stop() } }
        }
    }

    /// Each server's state; with `start`, each is started and listed first.
    public func status(start: Bool) async -> [MCPList.Server] {
        var out: [MCPList.Server] = []
        for spec in specs {
            if start { _ = try? await tools(of: spec.name) }
            let c = running[spec.name].flatMap { $0.isRunning ? $0 : nil }
            let fault = lastFault[spec.name]
            let state: MCPList.State = c != nil ? .running : starting[spec.name] != nil ? .starting : fault != nil ? .failed : .stopped
            let listed = c == nil ? nil : tools[spec.name]?.map {
                MCPList.Tool(name: spec.name + "/" + $0.name, description: $0.description, inputSchema: $0.inputSchema)
            }
            out.append(MCPList.Server(name: spec.name, command: spec.command, args: spec.args, state: state, pid: c.map { Int($0.pid) },
                                      protocolVersion: c?.protocolVersion, serverInfo: c?.serverInfo, tools: listed,
                                      calls: calls[spec.name, default: 0], error: fault?.description, reason: fault?.reason))
        }
        return out
    }
}

/// `mcp/list`.
public enum MCPHandlers {
    public static func list(_ p: MCPList.Params, _ ctx: RequestContext) async throws -> MCPList.Result {
        .init(servers: await ctx.services.mcp.status(start: p.start ?? false))
    }
}

import ParlanceJSON
import ParlanceSchema

/// MCP servers as tool sources for sessions: the servers configured (`--mcp-server`, the
/// config file's `mcpServers`), started on first use, and their tools.
public enum MCPList: RPCMethod {
    public static let name = "mcp/list"
    public static let summary = "The MCP servers sessions may use (--mcp-server, the config file's mcpServers): each one's state and, once started, its tools."
    public struct Params: Codable, Sendable, Schematic {
        public var start: Bool?
        public init(start: Bool? = nil) { self.start = start }
        public static let schemaHints: [String: SchemaHint] = [
            "start": SchemaHint(description: "Start each server that is not running and list its tools (default false: report what is known). A server that cannot start is reported with its error; the call still succeeds."),
        ]
    }
    public struct Result: Codable, Sendable, Schematic {
        public var servers: [Server]
        public init(servers: [Server]) { self.servers = servers }
    }
    public enum State: String, Codable, Sendable, SchemaEnum { case stopped, starting, running, failed }
    public struct Server: Codable, Sendable, Schematic {
        public var name: String
        public var command: String
        public var args: [String]
        public var state: State
        public var pid: Int?
        public var protocolVersion: String?
        public var serverInfo: JSONValue?
        public var tools: [Tool]?
        public var calls: Int
        public var error: String?
        public var reason: String?
        public init(name: String, command: String, args: [String], state: State, pid: Int? = nil, protocolVersion: String? = nil,
                    serverInfo: JSONValue? = nil, tools: [Tool]? = nil, calls: Int, error: String? = nil, reason: String? = nil) {
            self.name = name
            self.command = command
            self.args = args
            self.state = state
            self.pid = pid
            self.protocolVersion = protocolVersion
            self.serverInfo = serverInfo
            self.tools = tools
            self.calls = calls
            self.error = error
            self.reason = reason
        }
        public static let schemaHints: [String: SchemaHint] = [
            "state": SchemaHint(description: "stopped: not started yet, or stopped when idle (it starts again on use); failed: its last start or call failed (error, reason)."),
            "tools": SchemaHint(description: "Its tools as sessions name them (server/tool), once it has been started."),
            "calls": SchemaHint(description: "Tool calls sent to it since the daemon started."),
            "reason": SchemaHint(description: "notFound, couldNotStart, serverExited, timedOut, malformedOutput or protocolError."),
        ]
    }
    public struct Tool: Codable, Sendable, Schematic {
        public var name: String
        public var description: String?
        public var inputSchema: JSONValue
        public init(name: String, description: String?, inputSchema: JSONValue) {
            self.name = name
            self.description = description
            self.inputSchema = inputSchema
        }
    }
}

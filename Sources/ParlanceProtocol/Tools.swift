import ParlanceJSON
import ParlanceSchema

/// A tool the client provides (FoundationModels' `Tool`): the model may call it during
/// `session/respond`; the server sends `tool/call` and the client runs it.
public struct ToolDefinition: Codable, Sendable, Hashable, Schematic {
    public var name: String
    public var description: String?
    /// JSON Schema of the arguments (an object schema); the model's arguments are valid for
    /// it by construction. Absent: no arguments (`{}`).
    public var parameters: JSONValue?
    public init(name: String, description: String? = nil, parameters: JSONValue? = nil) {
        self.name = name
        self.description = description
        self.parameters = parameters
    }
    /// A client's tool (letters, digits, '_', '-'), or an MCP server's as `server/tool`.
    public static let namePattern = "^[A-Za-z0-9_-]{1,64}(/[A-Za-z0-9_.-]{1,128})?$"
    public static let schemaHints: [String: SchemaHint] = [
        "name": SchemaHint(description: "Unique within the session; letters, digits, '_' and '-'. server/tool names a tool of an MCP server (mcp/list).", maxLength: 193, pattern: namePattern),
        "description": SchemaHint(description: "What the tool does and when to call it, for the model.", maxLength: 2000),
        "parameters": SchemaHint(description: "JSON Schema of the arguments: type object, from the subset session/respond's schema supports."),
    ]

    /// The arguments' schema as given, or the empty object.
    public var argumentsSchema: JSONValue { parameters ?? ["type": "object", "properties": .object(JSONObject())] }

    /// For `server/tool`, the MCP server's name and its tool's; nil for a client's tool.
    public var mcpName: (server: String, tool: String)? {
        guard let slash = name.firstIndex(of: "/") else { return nil }
        return (String(name[..<slash]), String(name[name.index(after: slash)...]))
    }
}

/// Which calls the model may make: `auto` (call or answer), `none` (answer only),
/// `required` (call before answering), or `{"name": …}` (call that tool).
public enum ToolChoice: Codable, Sendable, Hashable, SchemaProviding {
    case auto, none, required
    case named(String)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let s = try? c.decode(String.self) {
            switch s {
            case "auto": self = .auto
            case "none": self = .none
            case "required": self = .required
            default: throw DecodingError.dataCorruptedError(in: c, debugDescription: "toolChoice must be auto, none, required or {\"name\": …}")
            }
            return
        }
        self = .named(try c.decode(Named.self).name)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .auto: try c.encode("auto")
        case .none: try c.encode("none")
        case .required: try c.encode("required")
        case .named(let n): try c.encode(Named(name: n))
        }
    }

    struct Named: Codable { var name: String }

    public static let schemaPlaceholder = ToolChoice.auto
    public static let providedSchema: JSONValue = [
        "description": "auto (default): the model calls a tool or answers; none: it answers; required: it calls before answering; {\"name\": …}: it calls that tool.",
        "anyOf": [
            ["type": "string", "enum": ["auto", "none", "required"]],
            ["type": "object", "properties": ["name": ["type": "string", "maxLength": 64]], "required": ["name"], "additionalProperties": false],
        ],
    ]
}

/// Per-turn tool settings, on `session/create` (the session's defaults) and
/// `session/respond` (this turn only).
public struct ToolSettings: Codable, Sendable, Hashable, Schematic {
    public var toolChoice: ToolChoice?
    public var maxToolCalls: Int?
    public var toolTimeoutMs: Int?
    public var resetToolChoice: Bool?
    public init(toolChoice: ToolChoice? = nil, maxToolCalls: Int? = nil, toolTimeoutMs: Int? = nil, resetToolChoice: Bool? = nil) {
        self.toolChoice = toolChoice
        self.maxToolCalls = maxToolCalls
        self.toolTimeoutMs = toolTimeoutMs
        self.resetToolChoice = resetToolChoice
    }
    public static let schemaHints: [String: SchemaHint] = [
        "maxToolCalls": SchemaHint(description: "Most tool calls in one respond (default 5); then the model must answer without tools.", minimum: 0, maximum: 32),
        "toolTimeoutMs": SchemaHint(description: "How long the client may take to answer a tool/call (default 30000).", minimum: 1, maximum: 3_600_000),
        "resetToolChoice": SchemaHint(description: "After the first call, toolChoice becomes auto (default true), so required or a named tool cannot loop; false keeps it until maxToolCalls."),
    ]

    /// `over` wins field by field.
    public func merged(over base: ToolSettings?) -> ToolSettings {
        ToolSettings(toolChoice: toolChoice ?? base?.toolChoice, maxToolCalls: maxToolCalls ?? base?.maxToolCalls,
                     toolTimeoutMs: toolTimeoutMs ?? base?.toolTimeoutMs, resetToolChoice: resetToolChoice ?? base?.resetToolChoice)
    }
}

/// Sent by the server during `session/respond`: run one tool and answer its output.
public enum ToolCall: RPCClientMethod {
    public static let name = "tool/call"
    public static let summary = "Sent by the server: run a tool the client declared on session/create and answer its output (or a JSON-RPC error: the model is told the tool failed)."
    public struct Params: Codable, Sendable, Schematic {
        public var sessionId: String
        public var callId: String
        public var name: String
        public var arguments: JSONValue
        public init(sessionId: String, callId: String, name: String, arguments: JSONValue) {
            self.sessionId = sessionId
            self.callId = callId
            self.name = name
            self.arguments = arguments
        }
        public static let schemaHints: [String: SchemaHint] = [
            "callId": SchemaHint(description: "Unique within the session; the same id appears in the result's toolCalls and the transcript."),
            "arguments": SchemaHint(description: "Valid for the tool's parameters schema."),
        ]
    }
    public struct Result: Codable, Sendable, Schematic {
        public var content: JSONValue
        public static let schemaHints: [String: SchemaHint] = [
            "content": SchemaHint(description: "The tool's output: a string, or any JSON (shown to the model serialized)."),
        ]
    }
}

/// One call the model made, and what became of it.
public struct ToolCallRecord: Codable, Sendable, Hashable, Schematic {
    public var callId: String
    public var name: String
    public var arguments: JSONValue
    public var output: JSONValue?
    public var error: ToolCallError?
    public var ms: Double?
    public init(callId: String, name: String, arguments: JSONValue, output: JSONValue? = nil, error: ToolCallError? = nil, ms: Double? = nil) {
        self.callId = callId
        self.name = name
        self.arguments = arguments
        self.output = output
        self.error = error
        self.ms = ms
    }
    public static let schemaHints: [String: SchemaHint] = [
        "output": SchemaHint(description: "The client's answer (content)."),
        "error": SchemaHint(description: "The client's error answer; the model was told the tool failed."),
        "ms": SchemaHint(description: "Milliseconds from sending tool/call to its answer."),
    ]
}

public struct ToolCallError: Codable, Sendable, Hashable, Schematic {
    public var code: Int
    public var message: String
    /// The code of an MCP tool's result marked `isError` (not a JSON-RPC error: the tool ran and failed).
    public static let mcpToolError = -32000
    public static let schemaHints: [String: SchemaHint] = [
        "code": SchemaHint(description: "The client's JSON-RPC error code; -32000 for an MCP tool's result marked isError; -32602 for arguments the tool's schema refuses."),
    ]
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }
}

/// `$/progress` for the `toolCall` phase: a call sent (`started`) and its outcome.
public struct ToolCallProgress: Codable, Sendable, Hashable, Schematic {
    public enum State: String, Codable, Sendable, SchemaEnum { case started, finished, failed }
    public var callId: String
    public var name: String
    public var arguments: JSONValue
    public var state: State
    public var output: JSONValue?
    public var error: ToolCallError?
    public var ms: Double?
    public init(_ r: ToolCallRecord, state: State) {
        callId = r.callId
        name = r.name
        arguments = r.arguments
        self.state = state
        output = r.output
        error = r.error
        ms = r.ms
    }
}

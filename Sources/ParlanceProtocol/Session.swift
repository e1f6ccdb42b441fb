import ParlanceJSON
import ParlanceSchema

/// Long-lived model sessions, like FoundationModels' `LanguageModelSession`: instructions,
/// a multi-turn transcript whose KV state is kept between turns, guided generation
/// into a JSON Schema, streaming and prewarm.
public enum SessionCreate: RPCMethod {
    public static let name = "session/create"
    public static let summary = "Create a session with instructions and default model options."
    public static let errors: [ProtocolError] = [.modelUnavailable, .mcpServerFailed]
    public struct Params: Codable, Sendable, Schematic {
        public var instructions: String?
        public var options: GenerationOptions?
        public var trimming: Trimming?
        public var tools: [ToolDefinition]?
        public var mcpServers: [String]?
        public var toolChoice: ToolChoice?
        public var maxToolCalls: Int?
        public var toolTimeoutMs: Int?
        public var resetToolChoice: Bool?
        public var model: String? = nil
        public var toolSettings: ToolSettings {
            ToolSettings(toolChoice: toolChoice, maxToolCalls: maxToolCalls, toolTimeoutMs: toolTimeoutMs, resetToolChoice: resetToolChoice)
        }
        public static let schemaHints: [String: SchemaHint] = [
            "instructions": SchemaHint(description: "System instructions kept for the session's lifetime.", maxLength: 20000),
            "trimming": SchemaHint(description: "When the context fills: fail with exceededContextWindowSize (none, default) or drop the oldest turns, keeping the instructions (dropOldest)."),
            "tools": SchemaHint(description: "Tools the client runs (tool/call; needs capabilities.tools in initialize), and MCP servers' tools named server/tool (name only: the server's description and schema are used). Fixed for the session's lifetime.", maxItems: 32),
            "mcpServers": SchemaHint(description: "MCP servers (by their --mcp-server or config-file name) all of whose tools the session may call, as server/tool. Each is started on first use; one that cannot start fails session/create with mcpServerFailed.", maxItems: 16),
            "model": SchemaHint(description: SchemaHint.model.description! + " The session keeps it for its lifetime (its history is that model's tokens)."),
        ].merging(ToolSettings.schemaHints) { a, _ in a }
    }
    public enum Trimming: String, Codable, Sendable, SchemaEnum { case none, dropOldest }
    public struct Result: Codable, Sendable, Schematic {
        public var sessionId: String
        public init(sessionId: String) { self.sessionId = sessionId }
    }
}

public enum SessionRespond: RPCMethod {
    public static let name = "session/respond"
    public static let summary = "Send a prompt; get text, or with a JSON Schema the parsed JSON that validates against it."
    public static let errors: [ProtocolError] = .generatingFromSource
    public struct Params: Codable, Sendable, Schematic {
        public var sessionId: String
        public var prompt: String
        public var schema: JSONValue?
        public var options: GenerationOptions?
        public var toolChoice: ToolChoice?
        public var maxToolCalls: Int?
        public var toolTimeoutMs: Int?
        public var resetToolChoice: Bool?
        public var workDoneToken: JSONValue?
        public var toolSettings: ToolSettings {
            ToolSettings(toolChoice: toolChoice, maxToolCalls: maxToolCalls, toolTimeoutMs: toolTimeoutMs, resetToolChoice: resetToolChoice)
        }
        public static let schemaHints: [String: SchemaHint] = [
            "prompt": SchemaHint(minLength: 1),
            "schema": SchemaHint(description: "JSON Schema for the output (objects, arrays with min/maxItems, strings with enum/maxLength, integers and numbers with ranges, booleans). The output is constrained by a grammar derived from it."),
        ].merging(ToolSettings.schemaHints) { a, _ in a }
    }
    public struct Result: Codable, Sendable, Schematic {
        public var text: String?
        public var content: JSONValue?
        public var finishReason: String
        public var usage: Usage
        public var provenance: Provenance
        public var toolCalls: [ToolCallRecord]?
        public var steps: [Usage]?
        public init(text: String?, content: JSONValue?, finishReason: String, usage: Usage, provenance: Provenance,
                    toolCalls: [ToolCallRecord]? = nil, steps: [Usage]? = nil) {
            self.text = text
            self.content = content
            self.finishReason = finishReason
            self.usage = usage
            self.provenance = provenance
            self.toolCalls = toolCalls
            self.steps = steps
        }
        public static let schemaHints: [String: SchemaHint] = [
            "text": SchemaHint(description: "The response (without a schema)."),
            "content": SchemaHint(description: "The parsed JSON (with a schema); validates against it."),
            "finishReason": SchemaHint(description: "stop (the model ended its turn) or length (maxTokens reached).", enumValues: ["stop", "length"]),
            "toolCalls": SchemaHint(description: "The tool calls made during this respond, in order (sessions with tools)."),
            "steps": SchemaHint(description: "Each model call of this respond (one per step between tool calls): a later step evaluates only its new tokens (cachedPromptTokens). usage is their sum."),
        ]
    }
}

public enum SessionPrewarm: RPCMethod {
    public static let name = "session/prewarm"
    public static let summary = "Evaluate the session's instructions (and an optional prompt prefix) now, so the first response starts faster."
    public static let errors: [ProtocolError] = [.modelUnavailable, .notFound]
    public struct Params: Codable, Sendable, Schematic {
        public var sessionId: String
        public var promptPrefix: String?
    }
    public struct Result: Codable, Sendable, Schematic {
        public var usage: Usage
        public init(usage: Usage) { self.usage = usage }
    }
}

public enum SessionTranscript: RPCMethod {
    public static let name = "session/transcript"
    public static let summary = "The session's instructions and turns so far."
    public static let errors: [ProtocolError] = [.notFound]
    public struct Params: Codable, Sendable, Schematic { public var sessionId: String }
    public struct Result: Codable, Sendable, Schematic {
        public var instructions: String?
        public var turns: [Turn]
        public var tokens: Int
        public init(instructions: String?, turns: [Turn], tokens: Int) {
            self.instructions = instructions
            self.turns = turns
            self.tokens = tokens
        }
    }
    /// One entry, like FoundationModels' `Transcript.Entry`: a prompt, a response, the
    /// model's tool calls, or one tool's output.
    public struct Turn: Codable, Sendable, Schematic {
        public enum Kind: String, Codable, Sendable, SchemaEnum { case prompt, response, toolCalls, toolOutput }
        public var role: String
        public var kind: Kind
        public var content: String
        public var toolCalls: [ToolCallRecord]?
        public var callId: String?
        public var name: String?
        public var isError: Bool?
        public init(role: String, kind: Kind, content: String, toolCalls: [ToolCallRecord]? = nil, callId: String? = nil,
                    name: String? = nil, isError: Bool? = nil) {
            self.role = role
            self.kind = kind
            self.content = content
            self.toolCalls = toolCalls
            self.callId = callId
            self.name = name
            self.isError = isError
        }
        public static let schemaHints: [String: SchemaHint] = [
            "role": SchemaHint(description: "user, assistant or tool.", enumValues: ["user", "assistant", "tool"]),
            "content": SchemaHint(description: "The text (for toolCalls, the model's output that made the calls; for toolOutput, the output as the model saw it)."),
            "toolCalls": SchemaHint(description: "kind toolCalls: the calls, with their outcomes."),
            "callId": SchemaHint(description: "kind toolOutput: the call this output answers."),
            "isError": SchemaHint(description: "kind toolOutput: the tool failed (the client answered an error)."),
        ]
    }
}

public enum SessionReset: RPCMethod {
    public static let name = "session/reset"
    public static let summary = "Forget the session's turns, keeping its instructions and options."
    public static let errors: [ProtocolError] = [.notFound]
    public struct Params: Codable, Sendable, Schematic { public var sessionId: String }
    public typealias Result = Empty
}

public enum SessionClose: RPCMethod {
    public static let name = "session/close"
    public static let summary = "Close a session and release its state."
    public static let errors: [ProtocolError] = [.notFound]
    public struct Params: Codable, Sendable, Schematic { public var sessionId: String }
    public typealias Result = Empty
}

import ParlanceJSON
import ParlanceSchema

/// Long-lived model sessions, like FoundationModels' `LanguageModelSession`: instructions,
/// a multi-turn transcript whose KV state is kept between turns, guided generation
/// into a JSON Schema, streaming and prewarm.
public enum SessionCreate: RPCMethod {
    public static let name = "session/create"
    public static let summary = "Create a session with instructions and default model options."
    public static let errors: [ProtocolError] = [.modelUnavailable]
    public struct Params: Codable, Sendable, Schematic {
        public var instructions: String?
        public var options: GenerationOptions?
        public var trimming: Trimming?
        public static let schemaHints: [String: SchemaHint] = [
            "instructions": SchemaHint(description: "System instructions kept for the session's lifetime.", maxLength: 20000),
            "trimming": SchemaHint(description: "When the context fills: fail with exceededContextWindowSize (none, default) or drop the oldest turns, keeping the instructions (dropOldest)."),
        ]
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
    public static let errors: [ProtocolError] = [.modelUnavailable, .generationFailed, .notFound]
    public struct Params: Codable, Sendable, Schematic {
        public var sessionId: String
        public var prompt: String
        public var schema: JSONValue?
        public var options: GenerationOptions?
        public var workDoneToken: JSONValue?
        public static let schemaHints: [String: SchemaHint] = [
            "prompt": SchemaHint(minLength: 1),
            "schema": SchemaHint(description: "JSON Schema for the output (objects, arrays with min/maxItems, strings with enum/maxLength, integers and numbers with ranges, booleans). The output is constrained by a grammar derived from it."),
        ]
    }
    public struct Result: Codable, Sendable, Schematic {
        public var text: String?
        public var content: JSONValue?
        public var finishReason: String
        public var usage: Usage
        public var provenance: Provenance
        public init(text: String?, content: JSONValue?, finishReason: String, usage: Usage, provenance: Provenance) {
            self.text = text
            self.content = content
            self.finishReason = finishReason
            self.usage = usage
            self.provenance = provenance
        }
        public static let schemaHints: [String: SchemaHint] = [
            "text": SchemaHint(description: "The response (without a schema)."),
            "content": SchemaHint(description: "The parsed JSON (with a schema); validates against it."),
            "finishReason": SchemaHint(description: "stop (the model ended its turn) or length (maxTokens reached).", enumValues: ["stop", "length"]),
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
    public struct Turn: Codable, Sendable, Schematic {
        public var role: String
        public var content: String
        public init(role: String, content: String) {
            self.role = role
            self.content = content
        }
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

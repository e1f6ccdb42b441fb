import ParlanceJSON
import ParlanceSchema

/// Requests the *client* implements: the server sends them and waits for the answer.
/// Listed in the spec with `x-direction: serverToClient`.
public protocol RPCClientMethod: RPCMethod {}

public enum ApplyWorkspaceEdit: RPCClientMethod {
    public static let name = "workspace/applyEdit"
    public static let summary = "LSP, sent by the server: apply a finished rewrite to the buffer it was chosen in."
    public struct Params: Codable, Sendable, Schematic {
        public var label: String?
        public var edit: WorkspaceEdit
        public init(label: String?, edit: WorkspaceEdit) {
            self.label = label
            self.edit = edit
        }
    }
    public struct Result: Codable, Sendable, Schematic {
        public var applied: Bool
        public var failureReason: String?
        public var failedChange: Int?
    }
}

public enum WorkDoneProgressCreate: RPCClientMethod {
    public static let name = "window/workDoneProgress/create"
    public static let summary = "LSP, sent by the server: create a progress token before reporting $/progress for a rewrite."
    public struct Params: Codable, Sendable, Schematic {
        public var token: JSONValue
        public init(token: JSONValue) { self.token = token }
    }
    public typealias Result = JSONValue
}

public enum ShowMessage: RPCNotification {
    public static let name = "window/showMessage"
    public static let summary = "LSP, sent by the server: why a rewrite was not applied, in words for the writer."
    public static let direction = NotificationDirection.serverToClient
    public enum Kind: Int, Codable, Sendable { case error = 1, warning = 2, info = 3, log = 4 }
    public struct Params: Codable, Sendable, Schematic {
        public var type: Int
        public var message: String
        public init(type: Kind, message: String) {
            self.type = type.rawValue
            self.message = message
        }
        public static let schemaHints: [String: SchemaHint] = ["type": SchemaHint(description: "1 error, 2 warning, 3 info, 4 log.", minimum: 1, maximum: 4)]
    }
}

public enum WorkDoneProgressCancel: RPCNotification {
    public static let name = "window/workDoneProgress/cancel"
    public static let summary = "LSP: the user cancelled a rewrite from its progress indicator."
    public static let direction = NotificationDirection.clientToServer
    public struct Params: Codable, Sendable, Schematic { public var token: JSONValue }
}

/// The LSP settings: `initializationOptions`, or `workspace/didChangeConfiguration`'s
/// `settings` (the object itself or under `parlance`).
public struct EditorSettings: Codable, Sendable, Hashable, Schematic {
    public var tones: [Tone]?
    public var audience: Audience?
    public var language: String?
    public var maxTokens: Int?
    public init(tones: [Tone]? = nil, audience: Audience? = nil, language: String? = nil, maxTokens: Int? = nil) {
        self.tones = tones
        self.audience = audience
        self.language = language
        self.maxTokens = maxTokens
    }
    public static let schemaHints: [String: SchemaHint] = [
        "tones": SchemaHint(description: "The rewrite actions offered, in this order (default: all five)."),
        "audience": SchemaHint(description: "Default: detected from the selection."),
        "language": SchemaHint(description: "Output language (BCP-47); default: the selection's."),
        "maxTokens": SchemaHint(description: "Longest rewrite, in tokens; default: about twice the selection.", minimum: 1, maximum: 4096),
    ]
}

public enum DidChangeConfiguration: RPCNotification {
    public static let name = "workspace/didChangeConfiguration"
    public static let summary = "LSP: new settings (EditorSettings, as `settings` or `settings.parlance`)."
    public static let direction = NotificationDirection.clientToServer
    public struct Params: Codable, Sendable, Schematic { public var settings: JSONValue? }
}

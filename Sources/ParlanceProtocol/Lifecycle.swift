import ParlanceJSON
import ParlanceSchema

public enum Initialize: RPCMethod {
    public static let name = "initialize"
    public static let summary = "First request: exchange client and server info and capabilities."
    public static let acceptsUnknownParams = true

    public struct Params: Codable, Sendable, Schematic {
        public var processId: Int?
        public var clientInfo: ClientInfo?
        public var capabilities: ClientCapabilities?
        /// LSP: the editor's settings for Parlance (`EditorSettings`); ignored when not an object.
        public var initializationOptions: JSONValue?
        public static let schemaHints: [String: SchemaHint] = [
            "processId": SchemaHint(description: "The client's process id (informational; the server exits when its stdin closes)."),
            "initializationOptions": SchemaHint(description: "EditorSettings for the LSP surface: tones, audience, language, maxTokens."),
        ]
    }
    public struct ClientInfo: Codable, Sendable, Schematic {
        public var name: String
        public var version: String?
    }
    /// The client capabilities Parlance reads (LSP clients send many more; they are ignored).
    public struct ClientCapabilities: Codable, Sendable, Schematic {
        public var window: WindowCapabilities?
        public var general: GeneralCapabilities?
        public var workspace: WorkspaceCapabilities?
        public var textDocument: TextDocumentCapabilities?
        /// Parlance: the client answers `tool/call` (sessions may then have tools).
        public var tools: Bool?
    }
    public struct WindowCapabilities: Codable, Sendable, Schematic {
        public var workDoneProgress: Bool?
    }
    public struct GeneralCapabilities: Codable, Sendable, Schematic {
        /// LSP 3.17: the position encodings the client can use, preferred first.
        public var positionEncodings: [String]?
    }
    public struct WorkspaceCapabilities: Codable, Sendable, Schematic {
        public var applyEdit: Bool?
        public var workspaceEdit: WorkspaceEditCapabilities?
    }
    public struct WorkspaceEditCapabilities: Codable, Sendable, Schematic {
        public var documentChanges: Bool?
    }
    public struct TextDocumentCapabilities: Codable, Sendable, Schematic {
        public var codeAction: CodeActionCapabilities?
    }
    public struct CodeActionCapabilities: Codable, Sendable, Schematic {
        public var resolveSupport: ResolveSupport?
    }
    public struct ResolveSupport: Codable, Sendable, Schematic {
        public var properties: [String]
    }
    public struct Result: Codable, Sendable, Schematic {
        public var serverInfo: ServerInfo
        public var capabilities: ServerCapabilities
        public var model: ModelStatus.Result
        public init(serverInfo: ServerInfo, capabilities: ServerCapabilities, model: ModelStatus.Result) {
            self.serverInfo = serverInfo
            self.capabilities = capabilities
            self.model = model
        }
    }
    public struct ServerInfo: Codable, Sendable, Schematic {
        public var name: String
        public var version: String
        public var protocolVersion: String
        public init(name: String, version: String, protocolVersion: String) {
            self.name = name
            self.version = version
            self.protocolVersion = protocolVersion
        }
    }
    public struct ServerCapabilities: Codable, Sendable, Schematic {
        public var methods: [String]
        public var notifications: [String]
        public var workDoneProgress: Bool
        public var framings: [String]
        public var maxMessageBytes: Int
        public var languages: [String]
        public var tones: [String]
        public var audiences: [String]
        /// Sessions may have tools the client runs (`tool/call`), for clients that declare
        /// `capabilities.tools`.
        public var tools: Bool = true
        // The standard LSP capabilities (see `LanguageServer.capabilities`).
        public var positionEncoding: String?
        public var textDocumentSync: TextDocumentSyncOptions?
        public var codeActionProvider: CodeActionOptions?
        public var executeCommandProvider: ExecuteCommandOptions?
        public init(methods: [String], notifications: [String], workDoneProgress: Bool, framings: [String],
                    maxMessageBytes: Int, languages: [String], tones: [String], audiences: [String]) {
            self.methods = methods
            self.notifications = notifications
            self.workDoneProgress = workDoneProgress
            self.framings = framings
            self.maxMessageBytes = maxMessageBytes
            self.languages = languages
            self.tones = tones
            self.audiences = audiences
        }
        public static let schemaHints: [String: SchemaHint] = [
            "methods": SchemaHint(description: "Every request method this server answers."),
            "languages": SchemaHint(description: "Supported output languages (BCP-47); others fall back, reported in results."),
        ]
    }
}

public struct TextDocumentSyncOptions: Codable, Sendable, Schematic {
    public var openClose: Bool
    /// 2: incremental.
    public var change: Int
    public init(openClose: Bool, change: Int) {
        self.openClose = openClose
        self.change = change
    }
}

public struct CodeActionOptions: Codable, Sendable, Schematic {
    public var codeActionKinds: [String]
    public var resolveProvider: Bool
    public init(codeActionKinds: [String], resolveProvider: Bool) {
        self.codeActionKinds = codeActionKinds
        self.resolveProvider = resolveProvider
    }
}

public struct ExecuteCommandOptions: Codable, Sendable, Schematic {
    public var commands: [String]
    public init(commands: [String]) { self.commands = commands }
}

public enum Initialized: RPCNotification {
    public static let name = "initialized"
    public static let summary = "Sent by the client after the initialize result."
    public static let direction = NotificationDirection.clientToServer
    public typealias Params = Empty
}

public enum Shutdown: RPCMethod {
    public static let name = "shutdown"
    public static let summary = "Stop accepting requests; answered once every request in flight has been answered. Then send exit."
    public typealias Params = Empty
    public typealias Result = Empty
}

public enum Exit: RPCNotification {
    public static let name = "exit"
    public static let summary = "Exit: code 0 after shutdown, 1 without (work in flight is then cancelled)."
    public static let direction = NotificationDirection.clientToServer
    public typealias Params = Empty
}

public enum CancelRequest: RPCNotification {
    public static let name = "$/cancelRequest"
    public static let summary = "Cancel a request by id; it answers -32800 with its partial output."
    public static let direction = NotificationDirection.clientToServer
    public struct Params: Codable, Sendable, Schematic {
        public var id: JSONValue
        public static let schemaHints: [String: SchemaHint] = ["id": SchemaHint(description: "The request id (integer or string).")]
    }
}

/// `$/progress` for LSP work-done tokens, extended with Parlance's streaming fields.
public enum Progress: RPCNotification {
    public static let name = "$/progress"
    public static let summary = "Work-done progress and streamed output for a request that passed workDoneToken."
    public static let direction = NotificationDirection.serverToClient
    public struct Params: Codable, Sendable, Schematic {
        public var token: JSONValue
        public var value: Value
        public init(token: JSONValue, value: Value) {
            self.token = token
            self.value = value
        }
    }
    public enum Kind: String, Codable, Sendable, SchemaEnum { case begin, report, end }
    public enum Phase: String, Codable, Sendable, SchemaEnum { case loading, queued, tokenizing, prompt, generating, map, reduce, verifying, toolCall, downloading, done }
    public struct Value: Codable, Sendable, Schematic {
        public var kind: Kind
        public var title: String?
        public var message: String?
        public var percentage: Int?
        public var cancellable: Bool?
        public var phase: Phase?
        /// Newly generated text since the previous report.
        public var delta: String?
        /// Which output the delta belongs to (a variation id, a chunk index).
        public var part: String?
        /// The structured output parsed so far (best effort), for schema-guided generation.
        public var partial: JSONValue?
        public var promptTokens: Int?
        public var evaluatedTokens: Int?
        public var cachedTokens: Int?
        public var queuePosition: Int?
        /// The attempt this report belongs to (2, 3… after a result failed verification).
        public var attempt: Int?
        /// True on the first report of a new attempt: discard what was streamed for this
        /// part (or the whole result when `part` is absent) so far.
        public var restart: Bool?
        /// Phase toolCall: a call sent to the client, or its outcome.
        public var toolCall: ToolCallProgress?
        /// Phase downloading (`model/pull`): the bytes so far.
        public var download: DownloadProgress?
        public init(kind: Kind, title: String? = nil, message: String? = nil, percentage: Int? = nil, cancellable: Bool? = nil,
                    phase: Phase? = nil, delta: String? = nil, part: String? = nil, partial: JSONValue? = nil,
                    promptTokens: Int? = nil, evaluatedTokens: Int? = nil, cachedTokens: Int? = nil, queuePosition: Int? = nil,
                    attempt: Int? = nil, restart: Bool? = nil, toolCall: ToolCallProgress? = nil, download: DownloadProgress? = nil) {
            self.toolCall = toolCall
            self.download = download
            self.attempt = attempt
            self.restart = restart
            self.kind = kind
            self.title = title
            self.message = message
            self.percentage = percentage
            self.cancellable = cancellable
            self.phase = phase
            self.delta = delta
            self.part = part
            self.partial = partial
            self.promptTokens = promptTokens
            self.evaluatedTokens = evaluatedTokens
            self.cachedTokens = cachedTokens
            self.queuePosition = queuePosition
        }
        public static let schemaHints: [String: SchemaHint] = ["percentage": SchemaHint(minimum: 0, maximum: 100)]

        /// The same JSON as its `Codable` encoding (nil fields omitted; keys here in declaration
        /// order; `ProgressEncodingTests` compares the two), built directly: a streamed
        /// token's report is sent once per token, and the encoder round trip (JSONEncoder to
        /// bytes, parsed back) was the daemon's largest cost per streamed token.
        public var json: JSONValue {
            var o = JSONObject()
            o["kind"] = .string(kind.rawValue)
            if let title { o["title"] = .string(title) }
            if let message { o["message"] = .string(message) }
            if let percentage { o["percentage"] = .int(percentage) }
            if let cancellable { o["cancellable"] = .bool(cancellable) }
            if let phase { o["phase"] = .string(phase.rawValue) }
            if let delta { o["delta"] = .string(delta) }
            if let part { o["part"] = .string(part) }
            if let partial { o["partial"] = partial }
            if let promptTokens { o["promptTokens"] = .int(promptTokens) }
            if let evaluatedTokens { o["evaluatedTokens"] = .int(evaluatedTokens) }
            if let cachedTokens { o["cachedTokens"] = .int(cachedTokens) }
            if let queuePosition { o["queuePosition"] = .int(queuePosition) }
            if let attempt { o["attempt"] = .int(attempt) }
            if let restart { o["restart"] = .bool(restart) }
            if let toolCall, let v = try? JSONValue(encoding: toolCall) { o["toolCall"] = v }
            if let download, let v = try? JSONValue(encoding: download) { o["download"] = v }
            return .object(o)
        }
    }
}

public enum Ping: RPCMethod {
    public static let name = "ping"
    public static let summary = "Answers {} at once, touching no model and no state: a liveness check for hosts and scripts (MCP's ping)."
    public typealias Params = Empty
    public typealias Result = Empty
}

public enum Discover: RPCMethod {
    public static let name = "rpc.discover"
    public static let summary = "This server's OpenRPC document (the same as protocol/parlance.openrpc.json)."
    public typealias Params = Empty
    public typealias Result = JSONValue
}

extension JSONValue: Schematic {}

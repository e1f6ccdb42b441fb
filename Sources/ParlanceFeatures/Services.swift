import JSONRPC
import ParlanceJSON
import ParlanceEngine
import ParlanceMCP
import ParlanceProtocol
import Synchronization

/// Long-lived state shared by all handlers.
public final class Services: Sendable {
    public let models: ModelRegistry
    public let options: ServiceOptions
    public let documents: DocumentStore
    public let analysisCache: AnalysisCache
    public let sessions = SessionStore()
    public let composeHistory: ComposeHistory
    /// Requests and notifications to the client (LSP's `workspace/applyEdit`, `tool/call`, progress).
    public let client: Outgoing
    /// What the client said it can do in `initialize`.
    public let peer = PeerCapabilities()
    /// MCP servers whose tools sessions may call.
    public let mcp: MCPServers

    public init(models: ModelRegistry, options: ServiceOptions, client: Outgoing = Outgoing(send: { _ in }),
                warn: @escaping @Sendable (String) -> Void = { _ in }, info: @escaping @Sendable (String) -> Void = { _ in }) {
        self.models = models
        self.client = client
        self.options = options
        documents = DocumentStore(maxBytes: options.documentCacheBytes)
        analysisCache = AnalysisCache(directory: options.cacheDirectory.isEmpty ? nil : options.cacheDirectory + "/analysis",
                                      maxBytes: options.analysisCacheBytes, onWarning: warn)
        mcp = MCPServers(specs: options.mcpServers, idleSeconds: options.mcpIdleSeconds, version: options.version, log: info)
        composeHistory = ComposeHistory(directory: options.historyEnabled && !options.dataDirectory.isEmpty ? options.dataDirectory + "/history" : nil, onWarning: warn)
    }
}

/// The client's capabilities that change what the server may ask of it.
public final class PeerCapabilities: Sendable {
    private let tools = Mutex(false)  // guards: the client declared capabilities.tools
    public init() {}
    public var runsTools: Bool {
        get { tools.withLock { $0 } }
        set { tools.withLock { $0 = newValue } }
    }
}

public struct ServiceOptions: Sendable {
    public var cacheDirectory: String
    public var dataDirectory: String
    public var historyEnabled: Bool
    public var documentCacheBytes: Int
    public var analysisCacheBytes: Int
    /// MCP servers sessions may use (`--mcp-server`, the config file's `mcpServers`).
    public var mcpServers: [MCPServerSpec] = []
    /// An MCP server idle this long is stopped (0: never); its next use starts it again.
    public var mcpIdleSeconds: Double = 300
    /// Parlance's version, as MCP servers are told it.
    public var version = "0"
    public init(cacheDirectory: String, dataDirectory: String, historyEnabled: Bool,
                documentCacheBytes: Int = 256 << 20, analysisCacheBytes: Int = 32 << 20) {
        self.cacheDirectory = cacheDirectory
        self.dataDirectory = dataDirectory
        self.historyEnabled = historyEnabled
        self.documentCacheBytes = documentCacheBytes
        self.analysisCacheBytes = analysisCacheBytes
    }
}

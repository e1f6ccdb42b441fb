import JSONRPC
import ParlanceJSON
import ParlanceMCP
import ParlanceServer

/// The one list of what `parlance mcp` serves: one line per MCP method, with the type of
/// its params. `ordered` methods are answered before the next message is read, because
/// they set what later requests read; the others run concurrently. A method not listed is
/// answered "method not found" (the stateless revision's `server/discover` among them).
enum MCPMethods {
    static func table(_ s: MCPServer) -> MCPRouter {
        var r = MCPRouter()
        // Lifecycle and logging
        r.on(MCPWire.initialize, InitializeParams.self, ordered: true) { p, _ in .success(s.initialize(p)) }
        r.on(MCPWire.ping, NoParams.self) { _, _ in .success(.object(JSONObject())) }
        r.on(MCPWire.setLevel, SetLevelParams.self, ordered: true) { p, _ in s.setLevel(p) }
        r.notification(MCPWire.cancelled, CancelledParams.self) { p in if let id = p.requestId { s.cancel(id) } }

        // Tools: Parlance's methods (ToolSpecs.swift)
        r.on(MCPWire.toolsList, NoParams.self) { _, _ in .success(s.toolList()) }
        r.on(MCPWire.toolsCall, CallToolParams.self) { p, id in await s.callTool(id, p) }

        // Resources: the documents opened through the tools, the compose history
        r.on(MCPWire.resourcesList, NoParams.self) { _, _ in await s.resources() }
        r.on(MCPWire.resourceTemplatesList, NoParams.self) { _, _ in .success(["resourceTemplates": []]) }
        r.on(MCPWire.resourcesRead, ReadResourceParams.self) { p, _ in await s.read(p.uri ?? "") }

        // Prompts
        r.on(MCPWire.promptsList, NoParams.self) { _, _ in .success(["prompts": .array(MCPPrompts.all.map(\.listing))]) }
        r.on(MCPWire.promptsGet, GetPromptParams.self) { p, _ in MCPPrompts.get(p) }
        return r
    }
}

// MARK: lifecycle and logging

/// `initialize`: the revision the client offers.
struct InitializeParams: MCPParams {
    var protocolVersion: String?
    enum CodingKeys: String, CodingKey { case protocolVersion }
    init() {}
    init(from decoder: any Decoder) throws { protocolVersion = decoder.fields(CodingKeys.self)?.loose(.protocolVersion) }
}

/// `logging/setLevel`: the least severe level the host wants.
struct SetLevelParams: MCPParams {
    var level: String?
    enum CodingKeys: String, CodingKey { case level }
    init() {}
    init(from decoder: any Decoder) throws { level = decoder.fields(CodingKeys.self)?.loose(.level) }
}

/// `notifications/cancelled`: the request no longer wanted.
struct CancelledParams: MCPParams {
    var requestId: RequestID?
    enum CodingKeys: String, CodingKey { case requestId }
    init() {}
    init(from decoder: any Decoder) throws { requestId = decoder.fields(CodingKeys.self)?.sent(.requestId).flatMap(RequestID.init) }
}

extension MCPServer {
    func initialize(_ params: InitializeParams) -> JSONValue {
        let version = MCPWire.negotiate(params.protocolVersion)
        state.withLock { $0.version = version }
        return [
            "protocolVersion": .string(version),
            "capabilities": ["tools": ["listChanged": false], "resources": ["subscribe": false, "listChanged": false],
                             "prompts": ["listChanged": false], "logging": .object(JSONObject())],
            "serverInfo": ["name": "parlance", "title": "Parlance", "version": .string(Server.version)],
            "instructions": "Parlance runs a language model on this machine: nothing leaves it. summarize, ask, analyze and compare read transcripts (SRT, WebVTT) or documents by path, uri or text; rewrite changes the tone of text and keeps its facts; segments gives a transcript's parsed segments and speakers without the model. Long work reports progress.",
        ]
    }

    func setLevel(_ params: SetLevelParams) -> Result<JSONValue, ResponseError> {
        guard let l = params.level, let i = MCPWire.levels.firstIndex(of: l) else {
            return .failure(.invalidParams("level must be one of \(MCPWire.levels.joined(separator: ", "))", data: ["path": "/level"]))
        }
        state.withLock { $0.level = i }
        return .success(.object(JSONObject()))
    }
}

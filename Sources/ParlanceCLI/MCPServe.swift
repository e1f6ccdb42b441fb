#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import JSONRPC
import ParlanceJSON
import ParlanceMCP
import ParlanceProtocol
import ParlanceSchema
import ParlanceServer
import Synchronization

/// `parlance mcp`: Parlance as an MCP server on stdin/stdout (MCP's stdio transport, one
/// JSON-RPC message per line). Each tool call is a request to the daemon's own server,
/// in this process (the same router `--stdio` serves, with the same flags and config), so
/// a tool's result is what the method returns: as `structuredContent`, with a text
/// rendering. Resources are the documents opened through it and the compose history;
/// prompts are a rewrite and a summary.
final class MCPServe: Sendable {
    let connection: Connection
    let client: InProcessClient
    let log: Logger
    struct State {
        var version = MCPWire.latest
        var level = MCPWire.levels.firstIndex(of: "warning")!
        /// The requests being answered; of those, the ones cancelled, and each tool call's
        /// request to the daemon once sent.
        var active: Set<RequestID> = []
        var cancelled: Set<RequestID> = []
        var running: [RequestID: Int] = [:]
        /// The text of each document opened through a tool (resources/read).
        var opened: [String: String] = [:]
        var tasks = 0
    }
    let state = Mutex(State())  // guards the negotiated revision, the log level, the calls in flight and the opened documents

    init(connection: Connection, client: InProcessClient, log: Logger) {
        self.connection = connection
        self.client = client
        self.log = log
    }

    static func run(_ inv: Invocation) async throws -> Int32 {
        let settings = inv.session.settings
        let log = settings.startLogging()
        let connection = Connection.stdio(maxMessageSize: settings.maxMessage)
        let client = try InProcessClient(options: try settings.serverOptions(log: log), log: log)
        if case .failure(let f) = await client.call(Initialize.name, ["capabilities": ["tools": false]]) { throw f }
        let serve = MCPServe(connection: connection, client: client, log: log)
        log.info("parlance \(Server.version) serving MCP on stdio (revisions \(MCPWire.versions.joined(separator: ", ")))")
        await serve.loop()
        await client.close()
        return 0
    }

    /// Reads messages until end of input; each request runs in its own task, so a long
    /// call never holds up `ping` or a cancellation.
    func loop() async {
        await withDiscardingTaskGroup { group in
            for await (incoming, permit) in connection.incoming() {
                permit.release()
                switch incoming {
                case .json(let v, _):
                    switch Message.decode(v) {
                    case .success(.request(let id, let method, let params)):
                        // Active before the next message is read: a cancellation right behind it finds it.
                        state.withLock { _ = $0.active.insert(id) }
                        if MCPServe.changesState(method) {
                            // Answered before the next message is read: a request right behind
                            // `initialize` or `logging/setLevel` sees the revision or level it set.
                            await answer(id, method, params ?? .object(JSONObject()))
                        } else {
                            group.addTask { await self.answer(id, method, params ?? .object(JSONObject())) }
                        }
                    case .success(.notification(let method, let params)):
                        notification(method, params)
                    case .success(.response), .success(.errorResponse):
                        break  // this server sends no requests
                    case .failure(let f):
                        send(.errorResponse(id: f.id, error: f.error))
                    }
                case .parseError(let m, _):
                    send(.errorResponse(id: nil, error: ResponseError(.parseError, "not JSON: \(m)")))
                case .framingError(let e, _):
                    send(.errorResponse(id: nil, error: ResponseError(.parseError, "\(e)")))
                }
            }
        }
    }

    func send(_ m: Message) { connection.send(m.json, framing: .ndjson) }

    /// The methods that set what later requests read (the negotiated revision, the log
    /// level): they take their claim in the order requests arrive. Both answer at once.
    static func changesState(_ method: String) -> Bool { method == MCPWire.initialize || method == MCPWire.setLevel }

    func notification(_ method: String, _ params: JSONValue?) {
        switch method {
        case MCPWire.cancelled:
            guard let raw = params?["requestId"], let id = RequestID(raw) else { return }
            let daemonID = state.withLock { s -> Int? in
                guard s.active.contains(id) else { return nil }
                s.cancelled.insert(id)
                return s.running[id]
            }
            if let daemonID { client.cancel(daemonID) }
        default: break  // notifications/initialized, roots/list_changed, …
        }
    }

    func answer(_ id: RequestID, _ method: String, _ params: JSONValue) async {
        let result: Result<JSONValue, ResponseError>
        switch method {
        case MCPWire.initialize: result = .success(initialize(params))
        case MCPWire.ping: result = .success(.object(JSONObject()))
        case MCPWire.toolsList:
            let outputs = state.withLock { $0.version } >= "2025-06-18"
            result = .success(["tools": .array(MCPToolSpec.all.map { $0.listing(outputSchemas: outputs) })])
        case MCPWire.toolsCall: result = await callTool(id, params)
        case MCPWire.resourcesList: result = await resources()
        case MCPWire.resourceTemplatesList: result = .success(["resourceTemplates": []])
        case MCPWire.resourcesRead: result = await read(params["uri"]?.stringValue ?? "")
        case MCPWire.promptsList: result = .success(["prompts": .array(MCPPrompts.all.map(\.listing))])
        case MCPWire.promptsGet: result = MCPPrompts.get(params)
        case MCPWire.setLevel:
            guard let l = params["level"]?.stringValue, let i = MCPWire.levels.firstIndex(of: l) else {
                result = .failure(.invalidParams("level must be one of \(MCPWire.levels.joined(separator: ", "))", data: ["path": "/level"]))
                break
            }
            state.withLock { $0.level = i }
            result = .success(.object(JSONObject()))
        default:
            result = .failure(ResponseError(.methodNotFound, "parlance mcp does not serve \(method)", data: ["method": .string(method)]))
        }
        let cancelled = state.withLock { s -> Bool in
            s.active.remove(id)
            return s.cancelled.remove(id) != nil
        }
        if cancelled { return }  // MCP: no answer to a cancelled request
        switch result {
        case .success(let v): send(.response(id: id, result: v))
        case .failure(let e): send(.errorResponse(id: id, error: e))
        }
    }

    func initialize(_ params: JSONValue) -> JSONValue {
        let version = MCPWire.negotiate(params["protocolVersion"]?.stringValue)
        state.withLock { $0.version = version }
        return [
            "protocolVersion": .string(version),
            "capabilities": ["tools": ["listChanged": false], "resources": ["subscribe": false, "listChanged": false],
                             "prompts": ["listChanged": false], "logging": .object(JSONObject())],
            "serverInfo": ["name": "parlance", "title": "Parlance", "version": .string(Server.version)],
            "instructions": "Parlance runs a language model on this machine: nothing leaves it. summarize, ask, analyze and compare read transcripts (SRT, WebVTT) or documents by path, uri or text; rewrite changes the tone of text and keeps its facts. Long work reports progress.",
        ]
    }

    /// MCP's log: `notifications/message` at or above the level the host set (default warning).
    func logToHost(_ level: String, _ text: String) {
        guard let i = MCPWire.levels.firstIndex(of: level), i >= state.withLock({ $0.level }) else { return }
        send(.notification(method: MCPWire.message, params: ["level": .string(level), "logger": "parlance", "data": .string(text)]))
    }

    // MARK: tools

    /// Unknown tools are protocol errors; everything else that fails (bad arguments, a file
    /// that cannot be read, a method's error) is a tool error: `isError` with the message,
    /// and the method's error code and data in `structuredContent`-free `_meta`.
    func callTool(_ id: RequestID, _ params: JSONValue) async -> Result<JSONValue, ResponseError> {
        guard let name = params["name"]?.stringValue, let tool = MCPToolSpec.named(name) else {
            return .failure(.invalidParams("unknown tool \(params["name"]?.serialized() ?? "(none)"); tools: \(MCPToolSpec.all.map(\.name).joined(separator: ", "))",
                                           data: ["error": "unknownTool", "tools": .array(MCPToolSpec.all.map { .string($0.name) })]))
        }
        let args = params["arguments"] ?? .object(JSONObject())
        if let v = SchemaValidator.validate(args, against: tool.inputSchema).first {
            return .success(toolError("invalid arguments for \(name): \(v.description)", code: ErrorCode.invalidParams.rawValue,
                                      data: ["path": .string(v.path), "keyword": .string(v.keyword)]))
        }
        var p: JSONObject
        do {
            p = try await prepare(tool, args.objectValue ?? JSONObject())
        } catch let e as InputError {
            return .success(toolError(e.description, code: ErrorCode.invalidParams.rawValue, data: nil))
        } catch let f as RequestFailure {
            return .success(toolError(f.message, code: f.code, data: f.data))
        } catch {
            return .success(toolError("\(error)", code: ErrorCode.internalError.rawValue, data: nil))
        }
        let method = tool.method(p)
        p["kind"] = nil
        let token = params["_meta"]?["progressToken"]
        let progress = token.map { token in progressReporter(token) }
        logToHost("info", "\(name): calling \(method)")
        // Cancelled while its document was opened: never sent (and never answered).
        if state.withLock({ $0.cancelled.contains(id) }) { return .failure(ResponseError(.requestCancelled, "cancelled")) }
        let outcome = await client.call(method, p, progress: progress, started: { daemonID in
            self.state.withLock { $0.running[id] = daemonID }
        })
        state.withLock { _ = $0.running.removeValue(forKey: id) }
        switch outcome {
        case .success(let r):
            var out = JSONObject([("content", .array([MCPWire.text(tool.render(r))])), ("isError", false)])
            if state.withLock({ $0.version }) >= "2025-06-18" { out["structuredContent"] = r }
            return .success(.object(out))
        case .failure(let f):
            logToHost("error", "\(name): \(f.message) (error \(f.code))")
            return .success(toolError(f.message, code: f.code, data: f.data))
        }
    }

    /// A tool error: the message (and the daemon's error data, serialized) as text; the
    /// code and data also in `_meta` for programs.
    func toolError(_ message: String, code: Int, data: JSONValue?) -> JSONValue {
        var text = message + " (error \(code))"
        if let data { text += "\ndata: " + data.serialized() }
        var meta = JSONObject([("code", .int(code))])
        if let data { meta["data"] = data }
        return ["content": .array([MCPWire.text(text)]), "isError": true, "_meta": ["parlance/error": .object(meta)]]
    }

    /// `notifications/progress` for the daemon's `$/progress`: `progress` counts the
    /// reports (it must grow), `total` is 100 while the work says how far it is, and
    /// `message` says what it is doing. Streamed text is not forwarded (MCP has no deltas).
    func progressReporter(_ token: JSONValue) -> @Sendable (ParlanceProtocol.Progress.Value) -> Void {
        let last = Mutex<(n: Double, said: String)>((0, ""))  // guards the count and the last message sent
        return { [self] v in
            let what = v.message ?? v.phase?.rawValue ?? (v.kind == .end ? "done" : "started")
            let said = what + (v.percentage.map { ", \($0)%" } ?? "")
            guard v.delta == nil || v.kind != .report else { return }
            let n = last.withLock { l -> Double? in
                if l.said == said && v.kind == .report { return nil }
                l.said = said
                l.n += 1
                return l.n
            }
            guard let n else { return }
            let p = JSONObject([("progressToken", token), ("progress", .double(n)), ("message", .string(said))])
            send(.notification(method: MCPWire.progress, params: .object(p)))
        }
    }

    /// The method's params from the tool's arguments: a `path` (or a file:// `uri` not
    /// open yet) is read and opened as a document, and the method gets its uri (rewrite
    /// gets its text).
    func prepare(_ tool: MCPToolSpec, _ args: JSONObject) async throws -> JSONObject {
        var p = args
        if tool.name == "compare" {
            var docs: [JSONValue] = []
            for d in p["documents"]?.arrayValue ?? [] {
                guard var o = d.objectValue else { docs.append(d); continue }
                if let path = o["path"]?.stringValue {
                    o["path"] = nil
                    o["uri"] = .string(try await open(path: path))
                    if o["title"] == nil { o["title"] = .string((path as NSString).lastPathComponent) }
                } else if let uri = o["uri"]?.stringValue { o["uri"] = .string(try await openIfFile(uri)) }
                docs.append(.object(o))
            }
            p["documents"] = .array(docs)
            return p
        }
        guard p["path"] != nil || p["uri"] != nil || p["text"] != nil else {
            throw InputError("\(tool.name) needs the \(tool.name == "rewrite" ? "text" : "document"): give path, \(tool.name == "rewrite" ? "" : "uri ")or text")
        }
        if let path = p["path"]?.stringValue {
            p["path"] = nil
            if tool.name == "rewrite" {
                p["text"] = .string(try Input.read(path))
            } else {
                p["uri"] = .string(try await open(path: path))
            }
        } else if let uri = p["uri"]?.stringValue {
            if tool.name == "rewrite" { throw InputError("rewrite takes text or path, not uri") }
            p["uri"] = .string(try await openIfFile(uri))
        }
        return p
    }

    /// Opens a file as a document (again, when it is open: its text may have changed); its uri.
    func open(path: String) async throws -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL
        let text = try Input.read(absolute.path)
        let uri = absolute.absoluteString
        switch await client.call(DocumentOpen.name, ["uri": .string(uri), "text": .string(text)]) {
        case .success:
            state.withLock { $0.opened[uri] = text }
            return uri
        case .failure(let f): throw f
        }
    }

    /// A file:// URI not opened yet is opened; the uri the document has (the file's, standardized).
    func openIfFile(_ uri: String) async throws -> String {
        guard state.withLock({ $0.opened[uri] == nil }), let url = URL(string: uri), url.isFileURL else { return uri }
        return try await open(path: url.path)
    }

    // MARK: resources

    func resources() async -> Result<JSONValue, ResponseError> {
        var out: [JSONValue] = []
        if case .success(let r) = await client.call(DocumentList.name) {
            for d in r["documents"]?.arrayValue ?? [] {
                guard let uri = d["uri"]?.stringValue else { continue }
                let segments = d["segments"]?.intValue ?? 0
                out.append(["uri": .string(uri), "name": .string(URL(string: uri)?.lastPathComponent ?? uri),
                            "description": .string("An open \(d["format"]?.stringValue ?? "text") document: \(segments) segment\(segments == 1 ? "" : "s"), language \(d["language"]?.stringValue ?? "?")"),
                            "mimeType": "text/plain", "size": d["bytes"] ?? .null])
            }
        }
        if case .success(let r) = await client.call(ComposeHistoryList.name, ["limit": 100]) {
            for e in r["entries"]?.arrayValue ?? [] {
                guard let id = e["id"]?.stringValue else { continue }
                let preview = e["preview"]?.stringValue ?? e["text"]?.stringValue ?? ""
                out.append(["uri": .string(MCPPrompts.historyPrefix + id), "name": .string("compose \(id)"),
                            "description": .string("A composition in the history: \(preview.prefix(80))"), "mimeType": "application/json"])
            }
        }
        return .success(["resources": .array(out)])
    }

    func read(_ uri: String) async -> Result<JSONValue, ResponseError> {
        if uri.hasPrefix(MCPPrompts.historyPrefix) {
            switch await client.call(ComposeHistoryGet.name, ["id": .string(String(uri.dropFirst(MCPPrompts.historyPrefix.count)))]) {
            case .success(let entry):
                return .success(["contents": [["uri": .string(uri), "mimeType": "application/json", "text": .string(entry.serialized())]]])
            case .failure(let f):
                return .failure(ResponseError(ErrorCode(rawValue: -32002), "resource not found: \(uri) (\(f.message))", data: ["uri": .string(uri)]))
            }
        }
        guard let text = state.withLock({ $0.opened[uri] }) else {
            return .failure(ResponseError(ErrorCode(rawValue: -32002), "resource not found: \(uri)", data: ["uri": .string(uri)]))
        }
        return .success(["contents": [["uri": .string(uri), "mimeType": "text/plain", "text": .string(text)]]])
    }
}

/// `parlance mcp`'s prompts: templates a host fills in and gives its own model.
struct MCPPrompts: Sendable {
    static let historyPrefix = "parlance://compose/"
    let name: String
    let title: String
    let description: String
    let arguments: [(name: String, description: String, required: Bool)]
    let text: @Sendable ([String: String]) throws -> String

    var listing: JSONValue {
        ["name": .string(name), "title": .string(title), "description": .string(description),
         "arguments": .array(arguments.map { ["name": .string($0.name), "description": .string($0.description), "required": .bool($0.required)] })]
    }

    static let all: [MCPPrompts] = [
        MCPPrompts(name: "rewrite", title: "Rewrite in a tone",
                   description: "Asks for a rewrite of text in a tone, keeping every fact: Parlance's rewrite rules as a prompt for the host's model.",
                   arguments: [("text", "The text to rewrite.", true), ("tone", "formal, casual, empathetic, direct or diplomatic (default formal).", false),
                               ("audience", "Who reads it (default: as the text implies).", false)]) { a in
            let tone = a["tone"] ?? "formal"
            guard let text = a["text"], !text.isEmpty else { throw ResponseError.invalidParams("the rewrite prompt needs text", data: ["path": "/arguments/text"]) }
            let audience = a["audience"].map { " for \($0)" } ?? ""
            return """
                Rewrite the text below in a \(tone) tone\(audience). Keep every fact exactly as written: names, numbers, amounts, dates and places. \
                Add nothing that is not in the text. Reply with the rewrite only.

                \(text)
                """
        },
        MCPPrompts(name: "summary", title: "Summarize a transcript",
                   description: "Asks for a summary of a transcript or document (from a file path or text): a short summary, the main topics and the key takeaways, each said in the text.",
                   arguments: [("path", "A file to summarize (SRT, WebVTT or plain text).", false), ("text", "The text, instead of path.", false)]) { a in
            let body: String
            if let path = a["path"], !path.isEmpty {
                do { body = try Input.read(path) } catch { throw ResponseError.invalidParams("\(error)", data: ["path": "/arguments/path"]) }
            } else if let t = a["text"], !t.isEmpty {
                body = t
            } else {
                throw ResponseError.invalidParams("the summary prompt needs path or text", data: ["path": "/arguments"])
            }
            return """
                Summarize the transcript below: a summary of two or three sentences, its main topics, and three to five key takeaways. \
                Use only what the transcript says.

                \(body)
                """
        },
    ]

    static func get(_ params: JSONValue) -> Result<JSONValue, ResponseError> {
        guard let name = params["name"]?.stringValue, let prompt = all.first(where: { $0.name == name }) else {
            return .failure(.invalidParams("unknown prompt \(params["name"]?.serialized() ?? "(none)"); prompts: \(all.map(\.name).joined(separator: ", "))",
                                           data: ["error": "unknownPrompt"]))
        }
        var args: [String: String] = [:]
        for (k, v) in params["arguments"]?.objectValue ?? JSONObject() { args[k] = v.stringValue ?? v.serialized() }
        do {
            let text = try prompt.text(args)
            return .success(["description": .string(prompt.description), "messages": [["role": "user", "content": MCPWire.text(text)]]])
        } catch let e as ResponseError {
            return .failure(e)
        } catch {
            return .failure(.invalidParams("\(error)"))
        }
    }
}

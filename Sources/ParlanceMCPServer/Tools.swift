import Foundation
import JSONRPC
import ParlanceInProcess
import ParlanceJSON
import ParlanceMCP
import ParlanceProtocol
import ParlanceSchema
import Synchronization

/// `tools/call`: the tool, its arguments, and the host's progress token.
struct CallToolParams: MCPParams {
    /// The tool's name as sent (an unknown one is echoed in the error).
    var name: JSONValue?
    var arguments: JSONValue?
    /// `_meta.progressToken`: progress goes to the host under it.
    var progressToken: JSONValue?
    enum CodingKeys: String, CodingKey { case name, arguments, _meta }
    enum MetaKeys: String, CodingKey { case progressToken }
    init() {}
    init(from decoder: any Decoder) throws {
        let c = decoder.fields(CodingKeys.self)
        name = c?.sent(.name)
        arguments = c?.sent(.arguments)
        let meta = try? c?.nestedContainer(keyedBy: MetaKeys.self, forKey: ._meta)
        progressToken = meta?.sent(.progressToken)
    }
}

extension MCPServer {
    /// The tools as `tools/list` shows them (with output schemas from revision 2025-06-18 on).
    func toolList() -> JSONValue {
        let outputs = structuredResults
        return ["tools": .array(MCPToolSpec.all.map { $0.listing(outputSchemas: outputs) })]
    }

    /// Unknown tools are protocol errors; everything else that fails (bad arguments, a file
    /// that cannot be read, a method's error) is a tool error: `isError` with the message,
    /// and the method's error code and data in `structuredContent`-free `_meta`.
    func callTool(_ id: RequestID, _ params: CallToolParams) async -> Result<JSONValue, ResponseError> {
        guard let name = params.name?.stringValue, let tool = MCPToolSpec.named(name) else {
            return .failure(.invalidParams("unknown tool \(params.name?.serialized() ?? "(none)"); tools: \(MCPToolSpec.all.map(\.name).joined(separator: ", "))",
                                           data: ["error": "unknownTool", "tools": .array(MCPToolSpec.all.map { .string($0.name) })]))
        }
        let args = params.arguments ?? .object(JSONObject())
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
        let progress = params.progressToken.map { token in progressReporter(token) }
        logToHost("info", "\(name): calling \(method)")
        // Cancelled while its document was opened: never sent (and never answered).
        if state.withLock({ $0.cancelled.contains(id) }) { return .failure(ResponseError(.requestCancelled, "cancelled")) }
        let outcome = await client.call(method, p, progress: progress, started: { daemonID in
            self.state.withLock { $0.running[id] = daemonID }
        })
        state.withLock { _ = $0.running.removeValue(forKey: id) }
        switch outcome {
        case .success(let r):
            // A result that did not pass its checks says so in its text (the host shows text).
            let warnings = Render.notPassed(r).map { "Warning: \($0)." }.joined(separator: "\n")
            let text = tool.render(r) + (warnings.isEmpty ? "" : "\n" + warnings + "\n")
            var out = JSONObject([("content", .array([MCPWire.text(text)])), ("isError", false)])
            if structuredResults { out["structuredContent"] = r }
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
    /// gets its text); ask's `paths` (or file:// `uris`) likewise become its `uris`.
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
        if tool.name == "ask", p["paths"] != nil || p["uris"] != nil {
            if p["paths"] != nil, p["uris"] != nil { throw InputError("ask takes paths or uris, not both") }
            if p["path"] != nil { throw InputError("ask takes path (one document) or \(p["paths"] != nil ? "paths" : "uris") (several), not both") }
            var uris: [JSONValue] = []
            for path in p["paths"]?.arrayValue?.compactMap(\.stringValue) ?? [] { uris.append(.string(try await open(path: path))) }
            for uri in p["uris"]?.arrayValue?.compactMap(\.stringValue) ?? [] { uris.append(.string(try await openIfFile(uri))) }
            p["paths"] = nil
            p["uris"] = .array(uris)
            return p
        }
        guard p["path"] != nil || p["uri"] != nil || p["text"] != nil else {
            throw InputError("\(tool.name) needs the \(tool.name == "rewrite" ? "text" : "document"): give path, \(tool.name == "rewrite" ? "" : tool.name == "ask" ? "uri, paths, uris " : "uri ")or text")
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
}

import Foundation
import JSONRPC
import ParlanceJSON
import ParlanceProtocol

/// `resources/read`: the resource's uri.
struct ReadResourceParams: MCPParams {
    var uri: String?
    enum CodingKeys: String, CodingKey { case uri }
    init() {}
    init(from decoder: any Decoder) throws { uri = decoder.fields(CodingKeys.self)?.loose(.uri) }
}

/// `parlance mcp`'s resources: the documents opened through its tools (their text as it
/// was read) and the compose history (each entry as JSON, under `parlance://compose/`).
extension MCPServer {
    static let historyPrefix = "parlance://compose/"

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
                out.append(["uri": .string(MCPServer.historyPrefix + id), "name": .string("compose \(id)"),
                            "description": .string("A composition in the history: \(preview.prefix(80))"), "mimeType": "application/json"])
            }
        }
        return .success(["resources": .array(out)])
    }

    func read(_ uri: String) async -> Result<JSONValue, ResponseError> {
        if uri.hasPrefix(MCPServer.historyPrefix) {
            switch await client.call(ComposeHistoryGet.name, ["id": .string(String(uri.dropFirst(MCPServer.historyPrefix.count)))]) {
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

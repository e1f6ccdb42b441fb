import JSONRPC
import ParlanceJSON
import ParlanceMCP
import ParlanceProtocol

/// A session's tools from their sources, once, at `session/create`: the client's as given,
/// and MCP servers' (`server/tool` entries, and every tool of each of `mcpServers`) from
/// the servers' own listings, started for it.
enum ToolSources {
    static func resolve(_ given: [ToolDefinition], mcpServers: [String], _ ctx: RequestContext) async throws -> [ToolDefinition] {
        let mcp = ctx.services.mcp
        let known = JSONValue.array(mcp.names.map { .string($0) })
        func unknown(_ server: String, path: String) -> ResponseError {
            .invalidParams("no MCP server named '\(server)' (configured: \(mcp.names.isEmpty ? "none; add one with --mcp-server NAME=COMMAND or the config file's mcpServers" : mcp.names.joined(separator: ", ")))",
                           data: ["error": "unknownMCPServer", "path": .string(path), "servers": known])
        }
        for (i, server) in mcpServers.enumerated() where !mcp.names.contains(server) { throw unknown(server, path: "/mcpServers/\(i)") }
        for (i, t) in given.enumerated() {
            if let (server, _) = t.mcpName, !mcp.names.contains(server) { throw unknown(server, path: "/tools/\(i)/name") }
        }
        var listed: [String: [MCPTool]] = [:]
        func list(_ server: String) async throws -> [MCPTool] {
            if let l = listed[server] { return l }
            do {
                let l = try await mcp.tools(of: server)
                listed[server] = l
                return l
            } catch let f as MCPFault {
                let command = mcp.specs.first { $0.name == server }?.command ?? ""
                throw ResponseError(ErrorCode(rawValue: ProtocolError.mcpServerFailed.code), "MCP server '\(server)' could not be used: \(f)", data: [
                    "error": "mcpServerFailed", "server": .string(server), "command": .string(command), "reason": .string(f.reason), "message": .string(f.description),
                ])
            }
        }
        var out: [ToolDefinition] = []
        for (i, t) in given.enumerated() {
            guard let (server, name) = t.mcpName else {
                out.append(t)
                continue
            }
            let tools = try await list(server)
            guard let m = tools.first(where: { $0.name == name }) else {
                throw ResponseError.invalidParams("MCP server '\(server)' has no tool '\(name)' (it has: \(tools.map(\.name).joined(separator: ", ")))",
                                                  data: ["error": "unknownTool", "path": .string("/tools/\(i)/name"), "tools": .array(tools.map { .string(server + "/" + $0.name) })])
            }
            out.append(ToolDefinition(name: t.name, description: t.description ?? m.description, parameters: t.parameters ?? modelSchema(m.inputSchema)))
        }
        for (i, server) in mcpServers.enumerated() {
            for m in try await list(server) where !out.contains(where: { $0.name == server + "/" + m.name }) {
                let name = server + "/" + m.name
                guard name.range(of: ToolDefinition.namePattern, options: .regularExpression) != nil else {
                    throw ResponseError.invalidParams("MCP server '\(server)' has a tool whose name Parlance cannot use: '\(m.name)' (letters, digits, '_', '-', '.'; at most 128)",
                                                      data: ["error": "invalidToolName", "path": .string("/mcpServers/\(i)"), "tool": .string(m.name)])
                }
                out.append(ToolDefinition(name: name, description: m.description, parameters: modelSchema(m.inputSchema)))
            }
        }
        if out.count > maxTools {
            throw ResponseError.invalidParams("the session would have \(out.count) tools, more than \(maxTools): name the tools it needs (tools: [{\"name\": \"server/tool\"}]) instead of whole servers",
                                              data: ["error": "tooManyTools", "path": "/mcpServers", "count": .int(out.count), "maxTools": .int(maxTools)])
        }
        return out
    }

    /// A server's input schema without the keywords that only annotate (`title`, `$schema`,
    /// `examples`, `default`): the grammar and the validator read the rest, and the server
    /// still checks its own schema.
    static let maxTools = 32

    static func modelSchema(_ s: JSONValue) -> JSONValue {
        switch s {
        case .object(let o):
            var out = JSONObject()
            for (k, v) in o {
                if ["title", "$schema", "examples", "default", "$comment"].contains(k) { continue }
                // Values, not schemas: kept as they are.
                if k == "enum" || k == "const" {
                    out[k] = v
                    continue
                }
                // These map names to schemas: their keys are names, never keywords.
                if ["properties", "patternProperties", "$defs", "definitions"].contains(k), case .object(let props) = v {
                    var p = JSONObject()
                    for (name, schema) in props { p[name] = modelSchema(schema) }
                    out[k] = .object(p)
                } else {
                    out[k] = modelSchema(v)
                }
            }
            return .object(out)
        case .array(let a): return .array(a.map(modelSchema))
        default: return s
        }
    }
}

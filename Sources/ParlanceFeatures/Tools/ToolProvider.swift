import JSONRPC
import ParlanceJSON
import ParlanceMCP
import ParlanceProtocol

/// Where a session's tool runs: the client (`tool/call`) or an MCP server (`tools/call`).
/// The tool loop hands a call to its provider and gets the tool's output, or the tool's
/// error (the model is told), or a fault that ends the turn (`toolCallFailed`).
enum ToolProvider {
    case client
    case mcp(server: String, tool: String)

    init(_ tool: ToolDefinition) {
        if let (server, name) = tool.mcpName { self = .mcp(server: server, tool: name) } else { self = .client }
    }

    enum Outcome {
        case output(JSONValue)
        case failed(ToolCallError)
    }

    /// The call could not be completed: `reason` is `data.reason` of toolCallFailed.
    struct Fault: Error {
        let reason: String
        let message: String
        let server: String?
    }

    func run(_ r: ToolCallRecord, sessionId: String, timeoutMs: Int, ctx: RequestContext) async throws -> Outcome {
        switch self {
        case .client:
            let params = try JSONValue(encoding: ToolCall.Params(sessionId: sessionId, callId: r.callId, name: r.name, arguments: r.arguments))
            do {
                let answer = try await ctx.services.client.request(ToolCall.name, params, timeout: .milliseconds(timeoutMs))
                guard let content = answer["content"] else {
                    return .failed(ToolCallError(code: ErrorCode.invalidParams.rawValue, message: "the client's answer to tool/call has no content: \(answer.serialized().prefix(200))"))
                }
                return .output(content)
            } catch let e as ResponseError {
                return .failed(ToolCallError(code: e.code.rawValue, message: e.message))
            } catch let f as Outgoing.Failure {
                switch f {
                case .timedOut: throw Fault(reason: "timedOut", message: "the client did not answer tool/call \(r.name) (\(r.callId)) within \(timeoutMs) ms", server: nil)
                case .closed: throw Fault(reason: "disconnected", message: "the connection closed before the client answered tool/call \(r.name) (\(r.callId))", server: nil)
                }
            }
        case .mcp(let server, let tool):
            do {
                let result = try await ctx.services.mcp.call(server, tool: tool, arguments: r.arguments, timeoutMs: timeoutMs)
                let text = MCPWire.text(ofToolResult: result)
                if result["isError"]?.boolValue == true {
                    return .failed(ToolCallError(code: ToolCallError.mcpToolError, message: text.isEmpty ? "\(r.name) failed (isError, no message)" : text))
                }
                return .output(.string(text))
            } catch let e as ResponseError {
                return .failed(ToolCallError(code: e.code.rawValue, message: "MCP server '\(server)' answered an error: \(e.message)"))
            } catch let f as MCPFault {
                throw Fault(reason: f.reason, message: "MCP server '\(server)', tool \(tool) (\(r.callId)): \(f)", server: server)
            }
        }
    }
}

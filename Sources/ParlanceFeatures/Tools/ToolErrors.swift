import JSONRPC
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// The tool settings checked before any work, and the errors a tool turn ends with.
extension ToolLoop {
    /// -32602 for tools from a client that cannot run them, duplicate names, parameters the
    /// grammar cannot express, or a toolChoice the tools do not allow.
    static func validate(tools: [ToolDefinition], settings: ToolSettings, runsTools: Bool, answer: JSONValue?) throws {
        if tools.contains(where: { $0.mcpName == nil }) && !runsTools {
            throw ResponseError.invalidParams(
                "this client did not declare that it runs tools: send capabilities.tools = true in initialize to create a session with tools",
                data: ["error": "toolsNotSupportedByClient", "path": "/tools"])
        }
        var seen: Set<String> = []
        for (i, t) in tools.enumerated() {
            guard seen.insert(t.name).inserted else {
                throw ResponseError.invalidParams("tool name '\(t.name)' is used twice", data: ["error": "duplicateToolName", "path": .string("/tools/\(i)/name")])
            }
            if let type = t.argumentsSchema["type"], type != "object" {
                throw ResponseError.invalidParams("tools[\(i)].parameters must be an object schema (type object), got type \(type.serialized())",
                                                  data: ["error": "invalidToolParameters", "path": .string("/tools/\(i)/parameters/type")])
            }
            do {
                _ = try ToolCallFormat.gbnf(tools: [.init(name: t.name, parameters: t.argumentsSchema)], maxCalls: 1, answer: .callOnly)
            } catch {
                throw ResponseError.invalidParams("tools[\(i)].parameters: \(error)", data: ["error": "invalidToolParameters", "path": .string("/tools/\(i)/parameters")])
            }
        }
        // The largest step grammar this turn can use (every tool, the answer) must build too.
        if !tools.isEmpty {
            do {
                _ = try ToolCallFormat.gbnf(tools: tools.map { .init(name: $0.name, parameters: $0.argumentsSchema) },
                                            maxCalls: settings.maxToolCalls ?? defaultMaxCalls, answer: answer.map { .schema($0) } ?? .text)
            } catch {
                throw ResponseError.invalidParams("the tools and the answer schema together: \(error)", data: ["error": "invalidToolParameters", "path": "/tools"])
            }
        }
        let names = JSONValue.array(tools.map { .string($0.name) })
        switch settings.toolChoice {
        case .required? where tools.isEmpty:
            throw ResponseError.invalidParams("toolChoice required needs tools, and this session has none", data: ["error": "invalidToolChoice", "tools": names])
        case .named(let n)? where !tools.contains { $0.name == n }:
            throw ResponseError.invalidParams("toolChoice names '\(n)', which is not one of the session's tools", data: ["error": "invalidToolChoice", "tools": names])
        default: break
        }
    }

    /// The call could not be completed (the client did not answer in time, the connection
    /// closed, an MCP server failed): -32010 toolCallFailed.
    static func failed(_ r: ToolCallRecord, _ f: ToolProvider.Fault, timeoutMs: Int, before: [ToolCallRecord]) -> ResponseError {
        var data: JSONObject = [
            "error": "toolCallFailed", "tool": .string(r.name), "callId": .string(r.callId), "arguments": r.arguments,
            "reason": .string(f.reason), "timeoutMs": .int(timeoutMs), "toolCalls": (try? JSONValue(encoding: before)) ?? .array([]),
        ]
        if let server = f.server {
            data["server"] = .string(server)
            data["message"] = .string(f.message)
        }
        return ResponseError(ErrorCode(rawValue: ProtocolError.generationFailed.code), f.message, data: .object(data))
    }

    /// Which of a step's calls were made already in this turn.
    enum Repeated { case noCall, someCalls, everyCall }

    /// Which of `calls` repeat a call of this turn (same tool, same arguments). A repeat of a
    /// call that failed ends the turn with that failure (-32010 toolCallFailed, reason
    /// `repeatedFailure`): the model was told of the failure and made the same call again,
    /// so another step would only loop.
    static func repeats(_ calls: [ToolCallFormat.ParsedCall], of records: [ToolCallRecord]) throws -> Repeated {
        let earlier = calls.compactMap { c in records.first { $0.name == c.name && $0.arguments == c.arguments } }
        if let failed = earlier.first(where: { $0.error != nil }), let error = failed.error {
            throw ResponseError(ErrorCode(rawValue: ProtocolError.generationFailed.code),
                                "the model made the call \(failed.callId) to \(failed.name) again with the same arguments after it failed: \(error.message)",
                                data: ["error": "toolCallFailed", "reason": "repeatedFailure", "tool": .string(failed.name), "callId": .string(failed.callId),
                                       "arguments": failed.arguments, "toolError": (try? JSONValue(encoding: error)) ?? .null,
                                       "toolCalls": (try? JSONValue(encoding: records)) ?? .array([])])
        }
        return earlier.isEmpty ? .noCall : earlier.count == calls.count ? .everyCall : .someCalls
    }

    /// -32800 with what the turn had produced: the partial text, the calls made, and the
    /// turn's transcript entries (the session itself stays as it was before the turn).
    static func cancelled(partial: String, generatedTokens: Int, records: [ToolCallRecord], turn: [SessionEntry]) -> ResponseError {
        ResponseError(.requestCancelled, "request cancelled", data: [
            "partial": .string(partial), "generatedTokens": .int(generatedTokens),
            "toolCalls": (try? JSONValue(encoding: records)) ?? .array([]),
            "transcript": (try? JSONValue(encoding: turn.map(\.turn))) ?? .array([]),
        ])
    }
}

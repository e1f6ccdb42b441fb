import ParlanceJSON

/// Parlance's error codes beyond JSON-RPC's and LSP's, with the shape of their `data`.
/// `data.error` always names the case, as FoundationModels names its errors, so a program
/// can switch on it.
public struct ProtocolError: Sendable, Hashable {
    public var code: Int
    public var name: String
    public var meaning: String
    /// JSON Schema of `data`.
    public var data: JSONValue

    /// The model is not available: `data.reason` is `modelNotFound`, `invalidModelFile`,
    /// `loading`, `contextTooSmall` or `memoryBudget` (loading it would pass
    /// `--max-loaded-models`, `--max-model-bytes` or the memory the system has available,
    /// and the loaded models in the way are busy: the numbers are in `neededBytes`,
    /// `loadedBytes`, `maxModelBytes`, `availableBytes`, `loadedModels`, `maxLoadedModels`,
    /// `busy`). `data.model` names the registry entry. A store name that does not resolve:
    /// `notDownloaded` (with `suggestions`, the closest names on disk, and `pullCommand`),
    /// `invalidName` or `incomplete` (a split model missing a part). A failed `model/pull`:
    /// `notFound` (`available`: the quantizations or tags that exist), `unauthorized` (a gated
    /// repository: set HF_TOKEN), `network` (`url`, `status`), `diskFull` (`neededBytes`,
    /// `freeBytes`), `checksum`, `insecure` (plain http:// off loopback) or `cancelled`.
    public static let modelUnavailable = ProtocolError(
        code: -32001, name: "modelUnavailable", meaning: "The model cannot be used; data.reason says why.",
        data: ["type": "object", "properties": [
            "error": ["const": "modelUnavailable"], "reason": ["type": "string", "enum": ["modelNotFound", "invalidModelFile", "loading", "contextTooSmall", "memoryBudget", "remoteUnavailable", "notDownloaded", "invalidName", "incomplete", "notFound", "unauthorized", "network", "diskFull", "checksum", "insecure", "cancelled"]],
            "message": ["type": "string"], "path": ["type": "string"], "model": ["type": "string"],
            "suggestions": ["type": "array", "items": ["type": "string"]], "pullCommand": ["type": "string"],
            "available": ["type": "array", "items": ["type": "string"]], "freeBytes": ["type": "integer"], "url": ["type": "string"], "status": ["type": "integer"],
            "neededBytes": ["type": "integer"], "loadedBytes": ["type": "integer"], "maxModelBytes": ["type": "integer"], "availableBytes": ["type": "integer"],
            "loadedModels": ["type": "array", "items": ["type": "string"]], "maxLoadedModels": ["type": "integer"],
            "busy": ["type": "array", "items": ["type": "string"]]], "required": ["error", "reason", "message"]])

    /// Generation failed: `data.error` is `exceededContextWindowSize` (with token counts),
    /// `decodingFailure`, `concurrentRequests` (queue full), `unsupportedLanguageOrLocale` or
    /// `toolCallFailed` (the client did not answer a `tool/call`, or an MCP server failed a
    /// call: `tool`, `callId`, `arguments`, `reason`, `timeoutMs`, for MCP `server` and
    /// `message`, and the calls made so far in `toolCalls`; reason `repeatedFailure` when the
    /// model made a call that had failed again with the same arguments, with that failure in
    /// `toolError`).
    public static let generationFailed = ProtocolError(
        code: -32010, name: "generationFailed", meaning: "The model could not produce the result; data.error names the case.",
        data: ["type": "object", "properties": [
            "error": ["type": "string", "enum": ["exceededContextWindowSize", "decodingFailure", "concurrentRequests", "unsupportedLanguageOrLocale", "invalidGeneratedContent", "toolCallFailed"]],
            "promptTokens": ["type": "integer"], "maxTokens": ["type": "integer"], "contextSize": ["type": "integer"],
            "language": ["type": "string"], "supportedLanguages": ["type": "array", "items": ["type": "string"]],
            "queueCapacity": ["type": "integer"], "detail": ["type": "string"],
            "tool": ["type": "string"], "callId": ["type": "string"], "arguments": [:],
            "reason": ["type": "string", "enum": ["timedOut", "disconnected", "serverExited", "malformedOutput", "protocolError", "notFound", "couldNotStart",
                                                   "repeatedFailure"]],
            "server": ["type": "string"], "message": ["type": "string"],
            "toolError": ["type": "object", "properties": ["code": ["type": "integer"], "message": ["type": "string"]]],
            "timeoutMs": ["type": "integer"], "toolCalls": ["type": "array"]], "required": ["error"]])

    /// A remote model's server failed the call: `data.error` is `remoteUnavailable` (no
    /// connection: refused, DNS, TLS), `remoteTimeout` (no first byte in time, or the stream
    /// stalled), `remoteError` (HTTP 4xx/5xx: `status`, `serverMessage`), `rateLimited`
    /// (HTTP 429: `retryAfterMs` when the server said) or `remoteProtocol` (a malformed event,
    /// a stream cut short). `model` and `endpoint` (host:port) say where; `attempts` how many
    /// calls were made (failures before the first token are retried with backoff). `partial`:
    /// the text streamed before a stream broke. A pool adds `reason` (`poolSaturated`: every
    /// endpoint full for longer than the pool's queue timeout, with `inFlight`, `capacity`,
    /// `waitedMs`, `queueTimeoutMs`; `poolUnavailable`: no endpoint may serve) and `endpoints`
    /// (each one's health, circuit, load and last error).
    public static let remoteFailed = ProtocolError(
        code: -32011, name: "remoteFailed", meaning: "A remote model's server could not produce the result; data.error names the fault.",
        data: ["type": "object", "properties": [
            "error": ["type": "string", "enum": ["remoteUnavailable", "remoteTimeout", "remoteError", "rateLimited", "remoteProtocol"]],
            "message": ["type": "string"], "model": ["type": "string"], "endpoint": ["type": "string"], "status": ["type": "integer"],
            "serverMessage": ["type": "string"], "retryAfterMs": ["type": "integer"], "attempts": ["type": "integer"],
            "partial": ["type": "string"], "reason": ["type": "string", "enum": ["poolSaturated", "poolUnavailable"]],
            "inFlight": ["type": "integer"], "capacity": ["type": "integer"], "waitedMs": ["type": "integer"], "queueTimeoutMs": ["type": "integer"],
            "endpoints": ["type": "array", "items": ["type": "object", "properties": [
                "endpoint": ["type": "string"], "health": ["type": "string"], "circuit": ["type": "string"], "inFlight": ["type": "integer"],
                "capacity": ["type": "integer"], "lastError": ["type": "string"], "message": ["type": "string"]]]]],
            "required": ["error", "message", "model", "endpoint", "attempts"]])

    /// A referenced resource (document uri, session id, history entry) does not exist.
    public static let notFound = ProtocolError(
        code: -32004, name: "notFound", meaning: "The uri, session or entry named in params does not exist.",
        data: ["type": "object", "properties": ["error": ["const": "notFound"], "kind": ["type": "string"], "id": ["type": "string"]], "required": ["error", "kind", "id"]])

    /// An MCP server a session names could not be used (started, initialized, listed):
    /// `data.server`, `data.reason` (`notFound`: no such command; `couldNotStart`,
    /// `serverExited`, `timedOut`, `malformedOutput`, `protocolError`) and `data.message`.
    public static let mcpServerFailed = ProtocolError(
        code: -32012, name: "mcpServerFailed", meaning: "An MCP server the session uses could not be started or listed; data.reason says why.",
        data: ["type": "object", "properties": [
            "error": ["const": "mcpServerFailed"], "server": ["type": "string"], "command": ["type": "string"],
            "reason": ["type": "string", "enum": ["notFound", "couldNotStart", "serverExited", "timedOut", "malformedOutput", "protocolError"]],
            "message": ["type": "string"]], "required": ["error", "server", "reason", "message"]])

    public static let all: [ProtocolError] = [modelUnavailable, generationFailed, remoteFailed, notFound, mcpServerFailed]

    /// The generic codes every method may answer, for the spec.
    public static let standard: [(code: Int, name: String, meaning: String)] = [
        (-32700, "parseError", "The message is not valid JSON (or its framing is broken); id is null."),
        (-32600, "invalidRequest", "Not a valid JSON-RPC request, a second initialize, or a request after shutdown."),
        (-32601, "methodNotFound", "No such method; data.method names it."),
        (-32602, "invalidParams", "Params do not match the method's schema; data.path and data.keyword point at the problem."),
        (-32603, "internalError", "A bug in Parlance; the daemon keeps running."),
        (-32002, "serverNotInitialized", "A request arrived before initialize."),
        (-32800, "requestCancelled", "Cancelled by $/cancelRequest or shutdown; data.partial holds text generated so far."),
        (-32801, "contentModified", "LSP: the editor buffer changed since the rewrite was offered; nothing was applied (data.offeredVersion, data.currentVersion)."),
        (-32803, "requestFailed", "LSP: the request could not be served; data.error names why (rewriteRejected, applyEditUnsupported)."),
    ]
}

extension [ProtocolError] {
    /// What a method that generates can fail with.
    public static var generating: Self { [.modelUnavailable, .generationFailed, .remoteFailed] }
    /// What a method that generates from a document, a session or a stored item can fail
    /// with: also `notFound` for the uri or id it names.
    public static var generatingFromSource: Self { generating + [.notFound] }
}

import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// Every failure a handler can raise, as the JSON-RPC error the client sees.
public enum ErrorMapping {
    public static func response(for error: any Error) -> ResponseError {
        switch error {
        case let e as ResponseError: return e
        case let e as EngineError: return engine(e)
        case let e as RemoteCallError: return remote(e)
        case let e as SchemaGrammarError:
            if case .unsupportedKeyword(let keyword, let path) = e {
                return .invalidParams("schema keyword '\(keyword)' at \(path) is not supported", data: ["keyword": .string(keyword), "path": .string(path)])
            }
            return .invalidParams("invalid schema: \(e)")
        case is CancellationError:
            return ResponseError(.requestCancelled, "request cancelled", data: ["partial": "", "generatedTokens": 0])
        default:
            return .internalError("internal error: \(error)")
        }
    }

    static func engine(_ e: EngineError) -> ResponseError {
        let unavailable = ErrorCode(rawValue: ProtocolError.modelUnavailable.code)
        let failed = ErrorCode(rawValue: ProtocolError.generationFailed.code)
        switch e {
        case .modelNotFound(let path, let searched):
            var data: JSONObject = ["error": "modelUnavailable", "reason": "modelNotFound", "message": .string(e.description), "path": .string(path)]
            if !searched.isEmpty { data["searched"] = .array(searched.map { .string($0) }) }
            return ResponseError(unavailable, e.description, data: .object(data))
        case .invalidModelFile(let path, _):
            return ResponseError(unavailable, e.description, data: ["error": "modelUnavailable", "reason": "invalidModelFile", "message": .string(e.description), "path": .string(path)])
        case .contextCreationFailed, .contextTooSmall:
            return ResponseError(unavailable, e.description, data: ["error": "modelUnavailable", "reason": "contextTooSmall", "message": .string(e.description)])
        case .exceededContextWindowSize(let p, let m, let c):
            return ResponseError(failed, e.description, data: ["error": "exceededContextWindowSize", "promptTokens": .int(p), "maxTokens": .int(m), "contextSize": .int(c)])
        case .decodingFailure(let d), .grammarRejected(let d):
            return ResponseError(failed, e.description, data: ["error": "decodingFailure", "detail": .string(d)])
        case .queueFull(let cap):
            return ResponseError(failed, e.description, data: ["error": "concurrentRequests", "queueCapacity": .int(cap)])
        case .cancelled(let partial, let n):
            return ResponseError(.requestCancelled, "request cancelled", data: ["partial": .string(partial), "generatedTokens": .int(n)])
        case .notOnDisk(let name, let reason, _, let suggestions, let pull):
            var data: JSONObject = ["error": "modelUnavailable", "reason": .string(reason), "message": .string(e.description), "model": .string(name),
                                   "suggestions": .array(suggestions.map { .string($0) })]
            if let pull { data["pullCommand"] = .string(pull) }
            return ResponseError(unavailable, e.description, data: .object(data))
        case .shutDown:
            return ResponseError(.requestCancelled, "the server is shutting down", data: ["partial": "", "generatedTokens": 0])
        }
    }

    static func remote(_ e: RemoteCallError) -> ResponseError {
        var data: JSONObject = ["error": .string(e.fault.kind.rawValue), "message": .string(e.fault.message), "model": .string(e.model),
                                "endpoint": .string(e.host), "attempts": .int(e.attempts)]
        if let s = e.fault.status { data["status"] = .int(s) }
        if let m = e.fault.serverMessage { data["serverMessage"] = .string(m) }
        if let r = e.fault.retryAfterMs { data["retryAfterMs"] = .int(r) }
        if let p = e.partial { data["partial"] = .string(p) }
        for (k, v) in e.details { data[k] = v }
        let tries = e.attempts > 1 ? " (after \(e.attempts) attempts)" : ""
        return ResponseError(ErrorCode(rawValue: ProtocolError.remoteFailed.code), "model '\(e.model)': \(e.fault.message)\(tries)", data: .object(data))
    }

    public static func notFound(_ kind: String, _ id: String) -> ResponseError {
        ResponseError(ErrorCode(rawValue: ProtocolError.notFound.code), "unknown \(kind) '\(id)'",
                      data: ["error": "notFound", "kind": .string(kind), "id": .string(id)])
    }

    public static func unsupportedLanguage(_ tag: String, supported: [String]) -> ResponseError {
        ResponseError(ErrorCode(rawValue: ProtocolError.generationFailed.code), "unsupported language or locale '\(tag)'",
                      data: ["error": "unsupportedLanguageOrLocale", "language": .string(tag), "supportedLanguages": .array(supported.map { .string($0) })])
    }
}

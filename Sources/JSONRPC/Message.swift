#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// A request id: JSON-RPC allows numbers and strings.
public enum RequestID: Hashable, Sendable, CustomStringConvertible {
    case int(Int)
    case string(String)

    public init?(_ v: JSONValue) {
        switch v {
        case .int(let i): self = .int(i)
        case .string(let s): self = .string(s)
        default: return nil
        }
    }
    public var json: JSONValue {
        switch self {
        case .int(let i): return .int(i)
        case .string(let s): return .string(s)
        }
    }
    public var description: String {
        switch self {
        case .int(let i): return String(i)
        case .string(let s): return "\"\(s)\""
        }
    }
}

/// One decoded JSON-RPC message.
public enum Message: Sendable, Equatable {
    case request(id: RequestID, method: String, params: JSONValue?)
    case notification(method: String, params: JSONValue?)
    case response(id: RequestID, result: JSONValue)
    case errorResponse(id: RequestID?, error: ResponseError)

    /// Decodes a JSON value as a message. On failure the error keeps the request id when
    /// one could be read, so the sender still gets an answer it can match.
    public static func decode(_ v: JSONValue) -> Result<Message, MessageDecodeFailure> {
        guard case .object(let o) = v else {
            return .failure(.init(id: nil, error: .invalidRequest("a message must be a JSON object, got \(v.typeName)")))
        }
        var id: RequestID? = nil
        var idIsInvalid = false
        if let rawID = o["id"] {
            if let parsed = RequestID(rawID) { id = parsed } else if !rawID.isNull { idIsInvalid = true }
        }
        func fail(_ m: String, _ data: JSONValue? = nil) -> Result<Message, MessageDecodeFailure> {
            .failure(.init(id: id, error: .invalidRequest(m, data: data)))
        }
        if idIsInvalid {
            return fail("'id' must be a string or an integer, got \(o["id"]!.typeName)")
        }
        guard let version = o["jsonrpc"] else { return fail("missing 'jsonrpc': \"2.0\"") }
        guard version == .string("2.0") else { return fail("'jsonrpc' must be \"2.0\"") }
        if let method = o["method"] {
            guard case .string(let name) = method else { return fail("'method' must be a string, got \(method.typeName)") }
            // `"params": null` is read as no params: LSP clients (eglot's `shutdown`) send it.
            let params = o["params"] == .null ? nil : o["params"]
            if let params {
                switch params {
                case .object, .array: break
                default: return fail("'params' must be an object or an array, got \(params.typeName)")
                }
            }
            if o["id"] == .null {
                return fail("'id' must not be null in a request (omit it for a notification)")
            }
            if let id { return .success(.request(id: id, method: name, params: params)) }
            return .success(.notification(method: name, params: params))
        }
        if let result = o["result"] {
            guard let id else { return fail("a response needs an 'id'") }
            return .success(.response(id: id, result: result))
        }
        if let err = o["error"] {
            guard case .object(let e) = err, let code = e["code"]?.intValue, let message = e["message"]?.stringValue else {
                return fail("'error' must be {code, message, data?}")
            }
            return .success(.errorResponse(id: id, error: ResponseError(ErrorCode(rawValue: code), message, data: e["data"])))
        }
        return fail("a message needs 'method' (request or notification) or 'result'/'error' (response)")
    }

    public var json: JSONValue {
        var o = JSONObject()
        o["jsonrpc"] = "2.0"
        switch self {
        case .request(let id, let method, let params):
            o["id"] = id.json
            o["method"] = .string(method)
            if let params { o["params"] = params }
        case .notification(let method, let params):
            o["method"] = .string(method)
            if let params { o["params"] = params }
        case .response(let id, let result):
            o["id"] = id.json
            o["result"] = result
        case .errorResponse(let id, let error):
            o["id"] = id?.json ?? .null
            o["error"] = error.json
        }
        return .object(o)
    }
}

public struct MessageDecodeFailure: Error, Sendable {
    public var id: RequestID?
    public var error: ResponseError
}

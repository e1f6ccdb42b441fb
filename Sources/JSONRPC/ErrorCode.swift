#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// A JSON-RPC error code. Open struct (not an enum) so protocol layers can add codes.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let parseError = ErrorCode(rawValue: -32700)
    public static let invalidRequest = ErrorCode(rawValue: -32600)
    public static let methodNotFound = ErrorCode(rawValue: -32601)
    public static let invalidParams = ErrorCode(rawValue: -32602)
    public static let internalError = ErrorCode(rawValue: -32603)
    /// LSP: a request arrived before `initialize`.
    public static let serverNotInitialized = ErrorCode(rawValue: -32002)
    /// LSP: the request was cancelled by `$/cancelRequest` (or the client went away).
    public static let requestCancelled = ErrorCode(rawValue: -32800)
    /// LSP: the document changed since the request's answer was computed (a rewrite
    /// offered for an older version of the buffer).
    public static let contentModified = ErrorCode(rawValue: -32801)
    /// LSP: the request failed for a reason the client can read in `data`.
    public static let requestFailed = ErrorCode(rawValue: -32803)
}

/// An error answered to a request: `{code, message, data?}`.
public struct ResponseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var data: JSONValue?

    public init(_ code: ErrorCode, _ message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public var json: JSONValue {
        var o = JSONObject()
        o["code"] = .int(code.rawValue)
        o["message"] = .string(message)
        if let data { o["data"] = data }
        return .object(o)
    }

    public static func invalidParams(_ message: String, data: JSONValue? = nil) -> ResponseError {
        ResponseError(.invalidParams, message, data: data)
    }
    public static func invalidRequest(_ message: String, data: JSONValue? = nil) -> ResponseError {
        ResponseError(.invalidRequest, message, data: data)
    }
    public static func internalError(_ message: String, data: JSONValue? = nil) -> ResponseError {
        ResponseError(.internalError, message, data: data)
    }
}

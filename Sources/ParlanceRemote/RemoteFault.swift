import Foundation

/// Why a call to a remote engine failed, as `data.error` names it. Faults of the other
/// process are bad input like any other: each is a typed error, never a crash or a hang.
public struct RemoteFault: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// No connection: refused, DNS failure, TLS failure, network unreachable.
        case remoteUnavailable
        /// No first byte within the timeout, or the stream stalled for longer than it.
        case remoteTimeout
        /// HTTP 4xx/5xx (other than 429), with the server's own error text.
        case remoteError
        /// HTTP 429; `retryAfterMs` from `Retry-After` when the server sent one.
        case rateLimited
        /// The answer is not what the OpenAI API says: malformed JSON or SSE, a stream cut
        /// before its end.
        case remoteProtocol
    }
    public var kind: Kind
    public var message: String
    public var status: Int?
    public var serverMessage: String?
    public var retryAfterMs: Int?
    /// Whether sending the same call again may succeed.
    public var retryable: Bool

    public init(_ kind: Kind, _ message: String, status: Int? = nil, serverMessage: String? = nil, retryAfterMs: Int? = nil, retryable: Bool) {
        self.kind = kind
        self.message = message
        self.status = status
        self.serverMessage = serverMessage
        self.retryAfterMs = retryAfterMs
        self.retryable = retryable
    }

    public var description: String { message }

    /// An HTTP error status with the server's body (its `error.message` when it is the
    /// OpenAI error object).
    public static func http(_ status: Int, body: Data, retryAfter: String?, host: String) -> RemoteFault {
        let text = serverText(body)
        if status == 429 {
            let ms = retryAfter.flatMap(parseRetryAfter)
            return RemoteFault(.rateLimited, "\(host) is rate limiting requests (HTTP 429)\(text.isEmpty ? "" : ": \(text)")",
                               status: status, serverMessage: text.isEmpty ? nil : text, retryAfterMs: ms, retryable: true)
        }
        // 5xx and 408 may pass; other 4xx are this request's fault and will not.
        let retryable = status >= 500 || status == 408
        // A 503 with Retry-After is a busy server saying when to come back.
        return RemoteFault(.remoteError, "\(host) answered HTTP \(status)\(text.isEmpty ? "" : ": \(text)")",
                           status: status, serverMessage: text.isEmpty ? nil : text,
                           retryAfterMs: retryable ? retryAfter.flatMap(parseRetryAfter) : nil, retryable: retryable)
    }

    /// The server's error text: OpenAI's `{"error": {"message": …}}`, llama.cpp's and
    /// Ollama's `{"error": "…"}`, else the body's first 500 characters.
    static func serverText(_ body: Data) -> String {
        if let obj = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            if let e = obj["error"] as? [String: Any], let m = e["message"] as? String { return String(m.prefix(500)) }
            if let m = obj["error"] as? String { return String(m.prefix(500)) }
            if let m = obj["message"] as? String { return String(m.prefix(500)) }
            if let m = obj["detail"] as? String { return String(m.prefix(500)) }
        }
        let s = String(decoding: body.prefix(500), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return s
    }

    /// `Retry-After`: delay-seconds, or an HTTP date.
    static func parseRetryAfter(_ value: String) -> Int? {
        let v = value.trimmingCharacters(in: .whitespaces)
        if let s = Double(v), s >= 0 { return Int(s * 1000) }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = f.date(from: v) else { return nil }
        return max(0, Int(date.timeIntervalSinceNow * 1000))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ParlanceRemote

/// A response being read: its head (after any redirects) and the body still to come.
struct PullResponse {
    var status: Int
    /// Header names lower-cased.
    var headers: [String: String]
    /// The URL that answered (after redirects).
    var url: URL
    var body: AsyncThrowingStream<HTTPClient.Chunk, any Error>.AsyncIterator

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// HTTP for pulls over `HTTPClient`: the scheme check on every hop (plain http:// only to
/// loopback), redirects followed here (at most 10, to other hosts too) so that the token
/// never leaves the host it was meant for and a redirect cannot downgrade to http://,
/// and every failure as a `PullError`.
enum PullHTTP {
    static let maxRedirects = 10
    /// No byte for this long ends a call (a trickle that keeps sending is fine).
    static let idleTimeout: Duration = .seconds(60)
    static let userAgent = "parlance-pull/1"

    enum Redirects {
        /// Every redirect, to any host (a file's bytes from a CDN).
        case all
        /// Only to the same host: a renamed repository, not the CDN (the metadata HEAD,
        /// as huggingface_hub does it, reads the headers of the redirect itself).
        case sameHost
    }

    /// Whether `host` is this machine: localhost, 127.0.0.0/8 or ::1.
    static func isLoopback(_ host: String) -> Bool {
        var h = host.lowercased()
        if h.hasPrefix("[") && h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h == "localhost" || h.hasSuffix(".localhost") || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let octets = h.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// https://, or http:// to a loopback host; anything else is refused before connecting.
    static func checkSecure(_ url: URL) throws(PullError) {
        let scheme = url.scheme?.lowercased() ?? ""
        guard let host = url.host, !host.isEmpty else {
            throw PullError(.network, "\(url.absoluteString) names no host", url: url.absoluteString)
        }
        switch scheme {
        case "https": return
        case "http":
            if isLoopback(host) { return }
            throw PullError(.insecure, "refusing plain http:// to \(host), which is not this machine: use https://", url: url.absoluteString)
        default:
            throw PullError(.network, "unsupported URL scheme '\(scheme)' in \(url.absoluteString)", url: url.absoluteString)
        }
    }

    /// "host" or "host:port": the authority a token belongs to.
    static func authority(_ url: URL) -> String {
        (url.host?.lowercased() ?? "") + (url.port.map { ":\($0)" } ?? "")
    }

    /// Sends the request and reads up to the head, following redirects by `redirects`.
    /// `authorization` goes only to the first URL's host (not to a CDN it redirects to).
    static func open(_ url: URL, method: String = "GET", headers: [String: String] = [:], authorization: String? = nil,
                     redirects: Redirects = .all) async throws(PullError) -> PullResponse {
        var current = url
        var method = method
        let tokenHost = authority(url)
        var hops = 0
        while true {
            try checkSecure(current)
            if Task.isCancelled { throw PullError(.cancelled, "the pull was cancelled", url: current.absoluteString) }
            var request = URLRequest(url: current)
            request.httpMethod = method
            request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
            if let authorization, authority(current) == tokenHost { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
            let host = current.host ?? "?"
            let stream = HTTPClient.shared.send(request, timeout: idleTimeout, host: host, followRedirects: false)
            var it = stream.makeAsyncIterator()
            let first: HTTPClient.Chunk?
            do { first = try await it.next() } catch { throw fault(error, url: current) }
            guard case .head(let status, let head)? = first else {
                if Task.isCancelled { throw PullError(.cancelled, "the pull was cancelled", url: current.absoluteString) }
                throw PullError(.network, "\(host) closed the connection without answering", url: current.absoluteString)
            }
            if [301, 302, 303, 307, 308].contains(status), let location = head["location"], !location.isEmpty {
                guard let next = URL(string: location, relativeTo: current)?.absoluteURL else {
                    throw PullError(.network, "\(host) redirected to an invalid URL '\(location.prefix(200))'", url: current.absoluteString, status: status)
                }
                if redirects == .sameHost && authority(next) != authority(current) {
                    return PullResponse(status: status, headers: head, url: current, body: it)
                }
                hops += 1
                if hops > maxRedirects {
                    throw PullError(.network, "too many redirects (more than \(maxRedirects)) starting from \(url.absoluteString)",
                                    url: url.absoluteString, status: status)
                }
                if status == 303 && method != "HEAD" { method = "GET" }
                current = next
                continue  // (dropping `it` closes the redirect's connection)
            }
            return PullResponse(status: status, headers: head, url: current, body: it)
        }
    }

    /// The rest of a (small) body, at most `limit` bytes.
    static func readBody(_ response: inout PullResponse, limit: Int = 64 << 20) async throws(PullError) -> Data {
        var data = Data()
        do {
            while let chunk = try await response.body.next() {
                if case .body(let d) = chunk {
                    data.append(d)
                    if data.count > limit {
                        throw PullError(.network, "\(response.url.host ?? "?") sent more than \(limit) bytes for \(response.url.path)",
                                        url: response.url.absoluteString)
                    }
                }
            }
        } catch let e as PullError {
            throw e
        } catch {
            throw fault(error, url: response.url)
        }
        if Task.isCancelled { throw PullError(.cancelled, "the pull was cancelled", url: response.url.absoluteString) }
        return data
    }

    /// A GET whose whole body is wanted (JSON): the response and its body, any status.
    static func fetch(_ url: URL, headers: [String: String] = [:], authorization: String? = nil) async throws(PullError) -> (PullResponse, Data) {
        var r = try await open(url, headers: headers, authorization: authorization)
        let body = try await readBody(&r)
        return (r, body)
    }

    /// A transport failure as a `PullError`.
    static func fault(_ error: any Error, url: URL) -> PullError {
        if let e = error as? PullError { return e }
        if error is CancellationError || Task.isCancelled {
            return PullError(.cancelled, "the pull was cancelled", url: url.absoluteString)
        }
        if let f = error as? RemoteFault {
            return PullError(.network, f.message, url: url.absoluteString)
        }
        return PullError(.network, "\(url.host ?? "?"): \(error)", url: url.absoluteString)
    }

    /// The server's own words in an error body: `{"error": "..."}`, `{"errors": [{"message"}]}`
    /// (OCI), `{"message": ...}`, else the start of the text.
    static func serverText(_ body: Data) -> String {
        if let obj = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            if let m = obj["error"] as? String { return String(m.prefix(300)) }
            if let e = obj["error"] as? [String: Any], let m = e["message"] as? String { return String(m.prefix(300)) }
            if let es = obj["errors"] as? [[String: Any]], let m = es.first?["message"] as? String { return String(m.prefix(300)) }
            if let m = obj["message"] as? String { return String(m.prefix(300)) }
        }
        return String(decoding: body.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// An unexpected status as a `PullError`: 404 notFound, 401/403 unauthorized, the rest
    /// (5xx, 429, …) network.
    static func statusError(_ status: Int, body: Data, url: URL, what: String, available: [String] = []) -> PullError {
        let text = serverText(body)
        let said = text.isEmpty ? "" : ": \(text)"
        switch status {
        case 404:
            return PullError(.notFound, "\(what) was not found (HTTP 404 from \(url.host ?? "?"))\(said)", available: available,
                             url: url.absoluteString, status: status)
        case 401, 403:
            return PullError(.unauthorized, "\(url.host ?? "?") refused access to \(what) (HTTP \(status))\(said)", url: url.absoluteString,
                             status: status)
        default:
            return PullError(.network, "\(url.host ?? "?") answered HTTP \(status) for \(what)\(said)", url: url.absoluteString, status: status)
        }
    }

    /// Whether a failure may pass if the request is sent again (the connection, a timeout,
    /// a server error), rather than being the request's own fault.
    static func retryable(_ e: PullError) -> Bool {
        guard e.reason == .network else { return false }
        guard let s = e.status else { return true }
        return s >= 500 || s == 408 || s == 429
    }
}

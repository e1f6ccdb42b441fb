import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ParlanceJSON

/// Where a remote model is served and how to talk to it.
public struct OpenAIEndpoint: Sendable, Hashable {
    /// The API's base URL, e.g. `http://gpu-box:8000/v1` (`/chat/completions` is under it).
    public var baseURL: URL
    /// The served model's name (`model` in each request); nil: the server's first.
    public var servedModel: String?
    /// The environment variable holding the API key (sent as a bearer token).
    public var apiKeyVariable: String?
    /// No first byte within this long, or a stream silent this long: `remoteTimeout`.
    public var timeout: Duration
    /// At most this many calls in flight to this endpoint; more wait their turn.
    public var maxConcurrentRequests: Int
    /// The context length to plan prompts for; nil: what the server says (else 4096).
    public var contextSize: Int?

    public init(baseURL: URL, servedModel: String? = nil, apiKeyVariable: String? = nil, timeout: Duration = .seconds(60), maxConcurrentRequests: Int = 4,
                contextSize: Int? = nil) {
        self.contextSize = contextSize
        self.baseURL = baseURL
        self.servedModel = servedModel
        self.apiKeyVariable = apiKeyVariable
        self.timeout = timeout
        self.maxConcurrentRequests = maxConcurrentRequests
    }

    /// `host:port`, what errors and provenance name (never the key, never the path's query).
    public var host: String {
        let h = baseURL.host ?? "?"
        return baseURL.port.map { "\(h):\($0)" } ?? h
    }

    /// The server's root: the base URL without a trailing `/v1` (llama-server's and vLLM's
    /// `/tokenize`, `/props`, `/health` live there).
    public var root: URL {
        var s = baseURL.absoluteString
        while s.hasSuffix("/") { s.removeLast() }
        if s.hasSuffix("/v1") { s.removeLast(3) }
        return URL(string: s) ?? baseURL
    }

    /// Plain `http://` only on loopback; anywhere else the key and the text go over TLS.
    public static func checkScheme(_ url: URL) -> String? {
        switch url.scheme?.lowercased() {
        case "https": return nil
        case "http":
            let host = (url.host ?? "").lowercased()
            if host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.") { return nil }
            return "plain http:// is allowed only on loopback (localhost, 127.0.0.1, ::1); use https:// for \(host)"
        default: return "the URL must start with http:// or https://"
        }
    }
}

/// One streamed chat completion's pieces.
public enum ChatEvent: Sendable {
    case delta(String)
    case finish(String)
    case usage(prompt: Int, completion: Int, cached: Int?)
}

/// The calls Parlance makes to an OpenAI-compatible server: `/chat/completions` streamed
/// as server-sent events, `/models`, and where the server has them llama.cpp's and vLLM's
/// `/tokenize` and llama-server's `/props`.
public struct OpenAIClient: Sendable {
    public let endpoint: OpenAIEndpoint
    let apiKey: String?
    let http: HTTPClient
    /// Whether a key is sent (the key itself never leaves this struct but in the header).
    public var hasKey: Bool { apiKey != nil }

    public init(_ endpoint: OpenAIEndpoint, environment: [String: String] = ProcessInfo.processInfo.environment, http: HTTPClient = .shared) {
        self.endpoint = endpoint
        self.apiKey = endpoint.apiKeyVariable.flatMap { environment[$0] }.flatMap { $0.isEmpty ? nil : $0 }
        self.http = http
    }

    func request(_ url: URL, method: String, body: JSONValue?, stream: Bool = false) -> URLRequest {
        var r = URLRequest(url: url)
        r.httpMethod = method
        if let body {
            r.httpBody = Data(body.serialized().utf8)
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        r.setValue(stream ? "text/event-stream" : "application/json", forHTTPHeaderField: "Accept")
        r.setValue("close", forHTTPHeaderField: "Connection")
        if let apiKey { r.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
        return r
    }

    /// A JSON call (GET when `body` is nil): the parsed answer, or a `RemoteFault`.
    public func json(_ url: URL, body: JSONValue? = nil, timeout: Duration? = nil) async throws -> JSONValue {
        let chunks = http.send(request(url, method: body == nil ? "GET" : "POST", body: body), timeout: timeout ?? endpoint.timeout, host: endpoint.host)
        var status = 0, headers: [String: String] = [:]
        var data = Data()
        for try await c in chunks {
            switch c {
            case .head(let s, let h): (status, headers) = (s, h)
            case .body(let d): data.append(d)
            }
        }
        guard (200..<300).contains(status) else {
            throw RemoteFault.http(status, body: data, retryAfter: headers["retry-after"], host: endpoint.host)
        }
        do {
            return try JSONParser.parse(Array(data))
        } catch {
            throw RemoteFault(.remoteProtocol, "\(endpoint.host) answered \(url.path) with invalid JSON (\(error)): \(String(decoding: data.prefix(200), as: UTF8.self))",
                              retryable: false)
        }
    }

    /// `POST /chat/completions` with `stream: true`: text deltas as they come, the finish
    /// reason, and the server's usage (asked for with `stream_options.include_usage`).
    public func streamChat(_ body: JSONValue) -> ChatStream {
        let url = endpoint.baseURL.appendingPathComponent("chat/completions")
        let chunks = http.send(request(url, method: "POST", body: body, stream: true), timeout: endpoint.timeout, host: endpoint.host)
        return ChatStream(chunks: chunks, host: endpoint.host)
    }

    /// The events of one streamed completion, parsed as the consumer pulls them (no task
    /// or buffer of its own between the socket and the consumer: one hop less per token).
    public struct ChatStream: AsyncSequence, Sendable {
        public typealias Element = ChatEvent
        let chunks: AsyncThrowingStream<HTTPClient.Chunk, any Error>
        let host: String

        public func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks.makeAsyncIterator(), host: host) }

        public struct Iterator: AsyncIteratorProtocol {
            var chunks: AsyncThrowingStream<HTTPClient.Chunk, any Error>.AsyncIterator
            let host: String
            var status = 0, headers: [String: String] = [:]
            var errorBody = Data(), plain = Data()
            var sse = ServerSentEvents()
            var pending: [ChatEvent] = []
            var finished = false, done = false, ended = false

            init(chunks: AsyncThrowingStream<HTTPClient.Chunk, any Error>.AsyncIterator, host: String) {
                self.chunks = chunks
                self.host = host
            }

            public mutating func next() async throws -> ChatEvent? {
                while pending.isEmpty {
                    if ended { return nil }
                    guard let c = try await chunks.next() else {
                        ended = true
                        try end()
                        continue
                    }
                    switch c {
                    case .head(let s, let h): (status, headers) = (s, h)
                    case .body(let d):
                        if status != 200 { errorBody.append(d); continue }
                        if !(headers["content-type"] ?? "").contains("event-stream") { plain.append(d); continue }
                        for event in sse.feed(d) {
                            // The end, whether or not the server closes the body after it.
                            if event == "[DONE]" { done = true; ended = true; break }
                            for e in try OpenAIClient.events(in: event, host: host) {
                                if case .finish = e { finished = true }
                                pending.append(e)
                            }
                        }
                    }
                }
                return pending.removeFirst()
            }

            mutating func end() throws {
                if status != 200 {
                    throw RemoteFault.http(status, body: errorBody, retryAfter: headers["retry-after"], host: host)
                }
                if !plain.isEmpty {
                    // A server that answered without streaming: one whole completion.
                    guard let v = try? JSONParser.parse(Array(plain)) else {
                        throw RemoteFault(.remoteProtocol, "\(host) answered with neither an event stream nor JSON: \(String(decoding: plain.prefix(200), as: UTF8.self))", retryable: false)
                    }
                    pending += try OpenAIClient.events(in: v, host: host, whole: true)
                    finished = true
                }
                if !done && !finished {
                    throw RemoteFault(.remoteProtocol, "the stream from \(host) ended before the completion did (no finish_reason, no [DONE])", retryable: false)
                }
            }
        }
    }

    static func events(in data: String, host: String) throws -> [ChatEvent] {
        guard let v = try? JSONParser.parse(data) else {
            throw RemoteFault(.remoteProtocol, "\(host) sent a malformed event (not JSON): \(data.prefix(200))", retryable: false)
        }
        return try events(in: v, host: host, whole: false)
    }

    static func events(in v: JSONValue, host: String, whole: Bool) throws -> [ChatEvent] {
        if let e = v["error"] {
            let message = e["message"]?.stringValue ?? e.stringValue ?? e.serialized()
            throw RemoteFault(.remoteError, "\(host) reported an error mid-stream: \(message)", serverMessage: message, retryable: false)
        }
        guard case .object = v else {
            throw RemoteFault(.remoteProtocol, "\(host) sent an event that is not a JSON object: \(v.serialized().prefix(200))", retryable: false)
        }
        var out: [ChatEvent] = []
        if let choice = v["choices"]?.arrayValue?.first {
            let text = (whole ? choice["message"]?["content"] : choice["delta"]?["content"])?.stringValue
            if let text, !text.isEmpty { out.append(.delta(text)) }
            if let f = choice["finish_reason"]?.stringValue { out.append(.finish(f)) }
        } else if v["choices"] == nil && v["usage"] == nil {
            throw RemoteFault(.remoteProtocol, "\(host) sent an event without choices: \(v.serialized().prefix(200))", retryable: false)
        }
        if let u = v["usage"], let p = u["prompt_tokens"]?.intValue, let c = u["completion_tokens"]?.intValue {
            out.append(.usage(prompt: p, completion: c, cached: u["prompt_tokens_details"]?["cached_tokens"]?.intValue))
        }
        return out
    }

    /// `GET /models`: the served models' ids, and each one's context length when the
    /// server says (vLLM's `max_model_len`, llama-server's `meta.n_ctx_train`).
    public func models(timeout: Duration? = nil) async throws -> [(id: String, contextLength: Int?)] {
        let v = try await json(endpoint.baseURL.appendingPathComponent("models"), timeout: timeout)
        guard let data = v["data"]?.arrayValue ?? v["models"]?.arrayValue else {
            throw RemoteFault(.remoteProtocol, "\(endpoint.host)/models answered without a data list: \(v.serialized().prefix(200))", retryable: false)
        }
        return data.compactMap { m in
            guard let id = m["id"]?.stringValue ?? m["name"]?.stringValue ?? m["model"]?.stringValue else { return nil }
            return (id, m["max_model_len"]?.intValue ?? m["meta"]?["n_ctx_train"]?.intValue ?? m["context_length"]?.intValue)
        }
    }

    /// llama-server's `/props`: the context each slot has (`n_ctx`), when it is one.
    public func contextPerSlot() async -> Int? {
        guard let v = try? await json(endpoint.root.appendingPathComponent("props"), timeout: .seconds(5)) else { return nil }
        return v["default_generation_settings"]?["n_ctx"]?.intValue ?? v["n_ctx"]?.intValue
    }

    /// What an active health check found.
    public enum Health: Sendable, Equatable {
        /// Ready to serve.
        case ready
        /// Up but still loading its model (llama-server's 503 "Loading model"): not ready,
        /// and not a failure.
        case loading
        /// Not serving: no connection, a timeout, an error status.
        case failed(RemoteFault)
    }

    /// `GET /health` at the server's root (llama-server, vLLM): 200 is ready, 503 "Loading
    /// model" is loading. A server without it (Ollama: 404) is asked `GET /models` instead.
    public func health(timeout: Duration) async -> Health {
        func get(_ url: URL) async -> (status: Int, body: Data, fault: RemoteFault?) {
            var status = 0
            var body = Data()
            do {
                for try await c in http.send(request(url, method: "GET", body: nil), timeout: timeout, host: endpoint.host) {
                    switch c {
                    case .head(let s, _): status = s
                    case .body(let d): body.append(d)
                    }
                }
            } catch let f as RemoteFault {
                return (0, body, f)
            } catch {
                return (0, body, RemoteFault(.remoteUnavailable, "cannot reach \(endpoint.host): \(error)", retryable: true))
            }
            return (status, body, nil)
        }
        let h = await get(endpoint.root.appendingPathComponent("health"))
        if let f = h.fault { return .failed(f) }
        if h.status == 200 { return .ready }
        if h.status == 503, RemoteFault.serverText(h.body).lowercased().contains("loading") { return .loading }
        if h.status == 404 || h.status == 501 {
            let m = await get(endpoint.baseURL.appendingPathComponent("models"))
            if let f = m.fault { return .failed(f) }
            if m.status == 200 { return .ready }
            return .failed(RemoteFault.http(m.status, body: m.body, retryAfter: nil, host: endpoint.host))
        }
        return .failed(RemoteFault.http(h.status, body: h.body, retryAfter: nil, host: endpoint.host))
    }

    /// llama-server's `/props` `total_slots` (its `--parallel`): requests it runs at once; nil
    /// when the server has no `/props`.
    public func totalSlots() async -> Int? {
        guard let v = try? await json(endpoint.root.appendingPathComponent("props"), timeout: .seconds(5)) else { return nil }
        return v["total_slots"]?.intValue
    }

    /// Requests the server is working on now, by its own account: llama-server's `/slots`
    /// (slots `is_processing`), else vLLM's `/metrics` (`vllm:num_requests_running` plus
    /// `vllm:num_requests_waiting`); nil when it reports neither.
    public func busyRequests() async -> Int? {
        if let v = try? await json(endpoint.root.appendingPathComponent("slots"), timeout: .seconds(5)), let slots = v.arrayValue {
            return slots.filter { $0["is_processing"]?.boolValue == true }.count
        }
        guard let text = try? await self.text(endpoint.root.appendingPathComponent("metrics"), timeout: .seconds(5)) else { return nil }
        var total: Double? = nil
        for line in text.split(separator: "\n") where line.hasPrefix("vllm:num_requests_running") || line.hasPrefix("vllm:num_requests_waiting") {
            if let v = line.split(separator: " ").last.flatMap({ Double($0) }) { total = (total ?? 0) + v }
        }
        return total.map { Int($0.rounded()) }
    }

    /// A GET whose answer is text (Prometheus metrics).
    func text(_ url: URL, timeout: Duration) async throws -> String {
        var status = 0
        var data = Data()
        for try await c in http.send(request(url, method: "GET", body: nil), timeout: timeout, host: endpoint.host) {
            switch c {
            case .head(let s, _): status = s
            case .body(let d): data.append(d)
            }
        }
        guard (200..<300).contains(status) else { throw RemoteFault.http(status, body: data, retryAfter: nil, host: endpoint.host) }
        return String(decoding: data, as: UTF8.self)
    }

    /// Exact token count from the server's `/tokenize` (llama-server: `content`; vLLM:
    /// `prompt` and `model`); nil when the server has none.
    public func tokenize(_ text: String) async throws -> Int? {
        var body: JSONObject = ["content": .string(text), "prompt": .string(text), "add_special": false]
        if let m = endpoint.servedModel { body["model"] = .string(m) }
        do {
            let v = try await json(endpoint.root.appendingPathComponent("tokenize"), body: .object(body))
            return v["count"]?.intValue ?? v["tokens"]?.arrayValue?.count
        } catch let f as RemoteFault where f.kind == .remoteError && [404, 405, 501].contains(f.status ?? 0) {
            return nil
        }
    }
}

import Foundation
import ParlanceJSON
import Synchronization

/// A `parlance --stdio` child process driven over pipes, as any client would: used by the
/// integration tests and the benchmark. Speaks NDJSON or LSP framing.
public final class DaemonProcess: @unchecked Sendable {
    public let process = Process()
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()
    let framing: Framing
    private let state = Mutex<State>(State())  // guards received messages and the decoder buffer
    private let arrived = NSCondition()
    private let ids = Mutex<Int>(0)  // guards the last request id issued
    private let errors = Mutex<[UInt8]>([])  // guards the first 64 KiB the daemon wrote to stderr

    public enum Framing: Sendable { case ndjson, lsp }

    struct State {
        var messages: [JSONValue] = []
        var buffer: [UInt8] = []
        var closed = false
        var received = 0
    }

    public static var binary: String {
        if let b = ProcessInfo.processInfo.environment["PARLANCE_BIN"] { return b }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for config in ["release", "debug"] {
            let p = root.appendingPathComponent(".build/\(config)/parlance").path
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return root.appendingPathComponent(".build/release/parlance").path
    }

    public static var repoRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    public init(args: [String] = [], framing: Framing = .ndjson, env: [String: String] = [:], isolatedCaches: Bool = true, binary: String? = nil) throws {
        self.framing = framing
        process.executableURL = URL(fileURLWithPath: binary ?? DaemonProcess.binary)
        process.arguments = ["--stdio"] + args
        var e = ProcessInfo.processInfo.environment
        if isolatedCaches {
            let tmp = NSTemporaryDirectory() + "parlance-test-\(UUID().uuidString)"
            scratch = tmp
            e["PARLANCE_CACHE_DIR"] = tmp + "/cache"
            e["PARLANCE_DATA_DIR"] = tmp + "/data"
        }
        // Never the user's config file: tests say what they configure.
        e["XDG_CONFIG_HOME"] = (scratch ?? NSTemporaryDirectory() + "parlance-test-no-config") + "/config"
        for (k, v) in env { e[k] = v }
        process.environment = e
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        stdout.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            self?.receive(d)
        }
        stderr.fileHandleForReading.readabilityHandler = { [weak self] h in
            let d = h.availableData
            self?.errors.withLock { if $0.count < 1 << 16 { $0 += d.prefix((1 << 16) - $0.count) } }
        }
        try process.run()
    }

    /// The private cache and data directories of an `isolatedCaches` daemon, removed with it.
    private var scratch: String? = nil

    deinit {
        stdout.fileHandleForReading.readabilityHandler = nil
        stderr.fileHandleForReading.readabilityHandler = nil
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        if let scratch { try? FileManager.default.removeItem(atPath: scratch) }
    }

    private func receive(_ d: Data) {
        arrived.lock()
        state.withLock { s in
            if d.isEmpty { s.closed = true; return }
            s.buffer += d
            while let msg = DaemonProcess.takeFrame(&s.buffer) {
                if let v = try? JSONParser.parse(msg) { s.messages.append(v); s.received += 1 }
            }
        }
        arrived.broadcast()
        arrived.unlock()
    }

    /// Pulls one frame (either framing) off the front of the buffer.
    static func takeFrame(_ buf: inout [UInt8]) -> [UInt8]? {
        while let f = buf.first, f == 0x0A || f == 0x0D || f == 0x20 { buf.removeFirst() }
        guard let first = buf.first else { return nil }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
            guard let nl = buf.firstIndex(of: 0x0A) else { return nil }
            let line = Array(buf[..<nl])
            buf.removeFirst(nl + 1)
            return line
        }
        let sep: [UInt8] = [13, 10, 13, 10]
        guard let r = buf.indices.first(where: { Array(buf[$0..<min($0 + 4, buf.count)]) == sep }) else { return nil }
        let header = String(decoding: buf[..<r], as: UTF8.self)
        guard let len = header.split(separator: "\r\n").compactMap({ l -> Int? in
            let parts = l.split(separator: ":", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "content-length" ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : nil
        }).first, buf.count >= r + 4 + len else { return nil }
        let body = Array(buf[(r + 4)..<(r + 4 + len)])
        buf.removeFirst(r + 4 + len)
        return body
    }

    public func writeRaw(_ bytes: [UInt8]) {
        try? stdin.fileHandleForWriting.write(contentsOf: Data(bytes))
    }

    public func send(_ v: JSONValue) { writeRaw(frame(v)) }

    /// Several messages in one write, so the daemon reads them together.
    public func send(together values: [JSONValue]) { writeRaw(values.flatMap(frame)) }

    /// A message in this daemon's framing.
    public func frame(_ v: JSONValue) -> [UInt8] {
        let body = Array(v.serialized().utf8)
        switch framing {
        case .ndjson: return body + [0x0A]
        case .lsp: return Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
        }
    }

    /// A request message with a fresh id (to send later, e.g. `send(together:)`).
    public func request(_ method: String, _ params: JSONValue? = nil, id: Int? = nil) -> (id: Int, message: JSONValue) {
        let id = id ?? makeID()
        var o = JSONObject([("jsonrpc", "2.0"), ("id", .int(id)), ("method", .string(method))])
        if let params { o["params"] = params }
        return (id, .object(o))
    }

    public func makeID() -> Int { ids.withLock { $0 += 1; return $0 } }

    /// Sends a request and returns its id (without waiting).
    @discardableResult
    public func start(_ method: String, _ params: JSONValue? = nil, id: Int? = nil) -> Int {
        let r = request(method, params, id: id)
        send(r.message)
        return r.id
    }

    public func notify(_ method: String, _ params: JSONValue? = nil) {
        var o = JSONObject([("jsonrpc", "2.0"), ("method", .string(method))])
        if let params { o["params"] = params }
        send(.object(o))
    }

    /// Waits for the message matching `predicate` (and removes it from the inbox).
    public func waitFor(timeout: TimeInterval = 120, _ predicate: (JSONValue) -> Bool) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        arrived.lock()
        defer { arrived.unlock() }
        while true {
            let found = state.withLock { s -> JSONValue? in
                guard let i = s.messages.firstIndex(where: predicate) else { return nil }
                return s.messages.remove(at: i)
            }
            if let found { return found }
            if state.withLock({ $0.closed }) || !arrived.wait(until: deadline) {
                return state.withLock { s in s.messages.firstIndex(where: predicate).map { s.messages.remove(at: $0) } }
            }
        }
    }

    public func response(_ id: Int, timeout: TimeInterval = 300) -> JSONValue? {
        waitFor(timeout: timeout) { $0["id"] == .int(id) && ($0["result"] != nil || $0["error"] != nil) }
    }

    /// Sends a request and waits for its response (`null` on timeout).
    public func call(_ method: String, _ params: JSONValue? = nil, timeout: TimeInterval = 300) -> JSONValue {
        let id = start(method, params)
        return response(id, timeout: timeout) ?? .null
    }

    /// Peak resident set size of the daemon (VmHWM), in bytes.
    public var peakRSS: Int? {
        guard let s = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else { return nil }
        for line in s.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        return nil
    }

    /// All `$/progress` notifications received so far for a token (removed from the inbox).
    public func progress(token: JSONValue) -> [JSONValue] {
        state.withLock { s in
            let mine = s.messages.filter { $0["method"] == "$/progress" && $0["params"]?["token"] == token }
            s.messages.removeAll { $0["method"] == "$/progress" && $0["params"]?["token"] == token }
            return mine.compactMap { $0["params"]?["value"] }
        }
    }

    public func initialize() -> JSONValue {
        let r = call("initialize", ["clientInfo": ["name": "tests"], "capabilities": ["window": ["workDoneProgress": true]]])
        notify("initialized", [:])
        return r
    }

    public func closeInput() { try? stdin.fileHandleForWriting.close() }

    /// Waits for the process to exit; returns its status or nil on timeout.
    public func waitExit(timeout: TimeInterval = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return process.isRunning ? nil : process.terminationStatus
    }

    public var isRunning: Bool { process.isRunning }

    /// What the daemon wrote to stderr so far (its first 64 KiB): usage errors, logs
    /// without --log-file.
    public var stderrText: String { String(decoding: errors.withLock { $0 }, as: UTF8.self) }

    /// Messages received since start.
    public var receivedCount: Int { state.withLock { $0.received } }

    /// Waits until at least `count` messages have been received in total.
    public func waitForReceived(_ count: Int, timeout: TimeInterval = 120) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        arrived.lock()
        defer { arrived.unlock() }
        while state.withLock({ $0.received }) < count {
            if !arrived.wait(until: deadline) { return false }
        }
        return true
    }

    /// Drops every message waiting in the inbox.
    public func discardMessages() { state.withLock { $0.messages = [] } }
}

extension JSONValue {
    public var errorCode: Int? { self["error"]?["code"]?.intValue }
    public var result: JSONValue? { self["result"] }
}

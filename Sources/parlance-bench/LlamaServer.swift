import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import ParlanceJSON

/// A llama-server on loopback, started and stopped by the bench.
final class LlamaServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private static let nextPort = Mutex(0)

    init(path: String, modelPath: String, threads: Int, extra: [String]) throws {
        port = LlamaServer.nextPort.withLock { $0 += 1; return 20_000 + Int(getpid() % 500) * 8 + $0 % 8 }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-m", modelPath, "--host", "127.0.0.1", "--port", "\(port)", "-t", "\(threads)", "--no-webui"] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // /health answers 503 while the model loads, 200 once it can serve.
        for _ in 0..<600 {
            if let r = try? RawHTTP.exchange(port: port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), r.hasPrefix("HTTP/1.1 200") { return }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        stop()
        throw BenchError("llama-server did not become healthy on port \(port)")
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    func post(_ path: String, _ body: JSONValue) throws -> JSONValue {
        let payload = body.serialized()
        let r = try RawHTTP.exchange(port: port, "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: \(payload.utf8.count)\r\n\r\n\(payload)")
        guard let split = r.range(of: "\r\n\r\n") else { throw BenchError("llama-server: no HTTP answer to \(path)") }
        return try JSONParser.parse(String(r[split.upperBound...]))
    }

    func tokenCount(_ text: String) throws -> Int {
        guard let n = try post("/tokenize", ["content": .string(text)])["tokens"]?.arrayValue?.count else { throw BenchError("llama-server: /tokenize failed") }
        return n
    }

    /// The Prometheus counters of `/metrics` (needs `--metrics`), by name.
    func metrics() throws -> [String: Double] {
        let r = try RawHTTP.exchange(port: port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        guard let split = r.range(of: "\r\n\r\n") else { throw BenchError("llama-server: no /metrics") }
        var out: [String: Double] = [:]
        for line in r[split.upperBound...].split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count >= 2, let v = Double(parts[1]) { out[String(parts[0])] = v }
        }
        return out
    }
}

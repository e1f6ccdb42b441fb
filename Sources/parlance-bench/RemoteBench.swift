import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ParlanceClient
import ParlanceJSON

/// Remote engines: the same chat completion straight to llama-server (a bare HTTP/1.1
/// client over a socket, no library in the way) and through Parlance (`session/respond`
/// on a remote model) — Parlance's added time to first token and its streamed throughput
/// relative to llama-server's own. Runs alternate, so drift hits both alike.
func remoteBench(daemonPath: String, modelPath: String, serverPath: String, threads: Int, rounds: Int = 24) throws -> JSONValue {
    func r2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let port = 19_000 + Int(getpid() % 1000)
    let server = Process()
    server.executableURL = URL(fileURLWithPath: serverPath)
    server.arguments = ["-m", modelPath, "--host", "127.0.0.1", "--port", "\(port)", "-c", "4096", "-np", "1", "-t", "\(threads)", "--no-webui"]
    server.standardOutput = FileHandle.nullDevice
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer { server.terminate(); server.waitUntilExit() }
    var healthy = false
    for _ in 0..<600 {
        if let r = try? RawHTTP.exchange(port: port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), r.hasPrefix("HTTP/1.1 200") { healthy = true; break }
        Thread.sleep(forTimeInterval: 0.1)
    }
    guard healthy else { throw BenchError("llama-server did not start") }
    let served = modelPath
    let prompt = "Write a short story about a lighthouse keeper and a storm."
    let maxTokens = 128
    // Exactly what Parlance sends for session/respond with these options.
    let body: JSONValue = [
        "messages": [["role": "user", "content": .string(prompt)]], "stream": true, "stream_options": ["include_usage": true],
        "max_tokens": .int(maxTokens), "temperature": 0.0, "top_p": 0.9, "seed": 1, "model": .string(served),
        "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1, "repetition_penalty": 1.1,
    ]
    let d = try DaemonProcess(args: ["--model", "r=openai:http://127.0.0.1:\(port)/v1"], binary: daemonPath)
    _ = d.initialize()
    guard d.call("model/load", ["model": "r"]).result != nil else { throw BenchError("the remote model did not answer model/load") }

    var direct: [(ttft: Double, rate: Double)] = []
    var through: [(ttft: Double, rate: Double)] = []
    for round in 0..<rounds {
        for which in (round % 2 == 0 ? [0, 1] : [1, 0]) {
            if which == 0 {
                direct.append(try RawHTTP.streamChat(port: port, body: body))
            } else {
                let sid = d.call("session/create", ["model": "r"]).result?["sessionId"] ?? .null
                let token: JSONValue = .string("b\(round)")
                let t0 = Date()
                let id = d.start("session/respond", ["sessionId": sid, "prompt": .string(prompt), "workDoneToken": token,
                                                     "options": ["maxTokens": .int(maxTokens), "temperature": 0, "seed": 1]])
                _ = d.waitFor { $0["params"]?["token"] == token && $0["params"]?["value"]?["delta"] != nil }
                let first = Date()
                let r = d.response(id)
                let end = Date()
                _ = d.progress(token: token)
                guard let n = r?["result"]?["usage"]?["generatedTokens"]?.intValue, n > 1 else { throw BenchError("no result through Parlance: \(r ?? .null)") }
                through.append((first.timeIntervalSince(t0) * 1000, Double(n - 1) / end.timeIntervalSince(first)))
                _ = d.call("session/close", ["sessionId": sid])
            }
        }
    }
    _ = d.call("shutdown")
    d.notify("exit")
    let directTtft = median(direct.map(\.ttft)), throughTtft = median(through.map(\.ttft))
    let directRate = median(direct.map(\.rate)), throughRate = median(through.map(\.rate))
    let added = throughTtft - directTtft
    let ratio = throughRate / directRate
    return [
        "rounds": .int(rounds), "maxTokens": .int(maxTokens),
        "directFirstTokenMsMedian": r2(directTtft), "parlanceFirstTokenMsMedian": r2(throughTtft), "addedFirstTokenMsMedian": r2(added),
        "directTokPerSecMedian": r2(directRate), "parlanceTokPerSecMedian": r2(throughRate), "throughputRatio": .double((ratio * 1000).rounded() / 1000),
        "targets": ["addedFirstToken<=10ms": .bool(added <= 10), "throughput>=97%": .bool(ratio >= 0.97)],
    ]
}

/// HTTP/1.1 over a plain socket: what "straight to llama-server" means in the benchmark.
enum RawHTTP {
    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket() failed") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard ok == 0 else { close(fd); throw BenchError("connect failed") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    static func write(_ fd: Int32, _ s: String) {
        let bytes = Array(s.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Sends a request and reads until the server closes.
    static func exchange(port: Int, _ request: String) throws -> String {
        let fd = try connect(port: port)
        defer { close(fd) }
        write(fd, request)
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            out += buf[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// One streamed chat completion: ms from sending to the first content delta, and
    /// tokens per second after it (completion tokens from the server's usage).
    static func streamChat(port: Int, body: JSONValue) throws -> (ttft: Double, rate: Double) {
        let payload = body.serialized()
        let fd = try connect(port: port)
        defer { close(fd) }
        let t0 = Date()
        write(fd, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nConnection: close\r\nContent-Length: \(payload.utf8.count)\r\n\r\n\(payload)")
        var first: Date?
        var tokens = 0
        var pending = ""
        var buf = [UInt8](repeating: 0, count: 65536)
        reading: while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            pending += String(decoding: buf[0..<n], as: UTF8.self)
            while let nl = pending.firstIndex(of: "\n") {
                let line = pending[..<nl].trimmingCharacters(in: .whitespaces)
                pending = String(pending[pending.index(after: nl)...])
                guard line.hasPrefix("data: ") else { continue }
                let data = line.dropFirst(6)
                if data == "[DONE]" { break reading }
                guard let v = try? JSONParser.parse(String(data)) else { continue }
                if first == nil, let c = v["choices"]?.arrayValue?.first?["delta"]?["content"]?.stringValue, !c.isEmpty { first = Date() }
                if let c = v["usage"]?["completion_tokens"]?.intValue { tokens = c }
            }
        }
        let end = Date()
        guard let first, tokens > 1 else { throw BenchError("no tokens from llama-server") }
        return (first.timeIntervalSince(t0) * 1000, Double(tokens - 1) / end.timeIntervalSince(first))
    }
}

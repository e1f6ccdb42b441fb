#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlanceClient
import ParlanceJSON

/// The command line's time to the first token of `parlance ask` and `parlance rewrite`,
/// against the same request through `parlance --stdio`, each from process start (the
/// model load included on both sides) to the first token a person sees: the CLI's first
/// byte on a terminal (a pseudo-terminal, where it streams), the daemon's first `$/progress`
/// delta. Alternating rounds, medians; each run has its own empty caches.
func cliBench(daemonPath: String, modelPath: String, threads: Int, rounds: Int = 5) throws -> JSONValue {
    func r2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
    let sample = DaemonProcess.repoRoot.appendingPathComponent("Samples/podcast-sample.srt").path
    let transcript = try String(contentsOfFile: sample, encoding: .utf8)
    let question = "What did the guest measure?"
    let selection = "hey team, we're moving the design review to friday at 10, bring your mockups"
    let common = ["--model", modelPath, "--threads", String(threads)]
    struct Job { let name: String; let cli: [String]; let method: String; let params: JSONObject; let skipParts: Set<String> }
    let jobs = [
        Job(name: "ask", cli: ["ask", sample, question, "--seed", "7", "--max-tokens", "96"], method: "ask/stream",
            params: ["text": .string(transcript), "question": .string(question), "seed": 7, "maxTokens": 96], skipParts: []),
        Job(name: "rewrite", cli: ["rewrite", "--tone", "formal", "--seed", "7", "--max-tokens", "96", selection], method: "compose/variations",
            params: ["text": .string(selection), "tones": ["formal"], "seed": 7, "maxTokens": 96], skipParts: ["analysis", "prefix"]),
    ]
    var out = JSONObject()
    var targets = JSONObject()
    for job in jobs {
        var cliMs: [Double] = [], stdioMs: [Double] = []
        for _ in 0..<rounds {
            stdioMs.append(try stdioFirstToken(daemonPath, common, job.method, job.params, job.skipParts))
            cliMs.append(try cliFirstByte(daemonPath, job.cli + common))
        }
        let cli = median(cliMs), stdio = median(stdioMs)
        out[job.name] = ["cliFirstTokenMsMedian": r2(cli), "stdioFirstTokenMsMedian": r2(stdio), "ratio": r2(cli / max(stdio, 1e-9)),
                         "rounds": .int(rounds)]
        targets["\(job.name)Cli<=1.1xStdio"] = .bool(cli <= 1.1 * stdio)
    }
    out["targets"] = .object(targets)
    return .object(out)
}

private func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? 0 : s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

private func scratchEnv() -> [String: String] {
    let tmp = NSTemporaryDirectory() + "parlance-bench-cli-\(UUID().uuidString)"
    var e = ProcessInfo.processInfo.environment
    e["PARLANCE_CACHE_DIR"] = tmp + "/cache"
    e["PARLANCE_DATA_DIR"] = tmp + "/data"
    e["XDG_CONFIG_HOME"] = tmp + "/config"
    return e
}

/// Spawn → the first delta of the request's streamed part, through `--stdio`.
private func stdioFirstToken(_ binary: String, _ args: [String], _ method: String, _ params: JSONObject, _ skip: Set<String>) throws -> Double {
    let t0 = Date()
    let d = try DaemonProcess(args: args, binary: binary)
    _ = d.start("initialize", [:])
    var p = params
    p["workDoneToken"] = "first"
    let id = d.start(method, .object(p))
    guard d.waitFor(timeout: 300, { m in
        guard m["params"]?["token"] == "first", let v = m["params"]?["value"], let delta = v["delta"]?.stringValue, !delta.isEmpty else { return false }
        return !(v["part"]?.stringValue.map(skip.contains) ?? false)
    }) != nil else { throw BenchError("no streamed token from \(method)") }
    let ms = Date().timeIntervalSince(t0) * 1000
    _ = d.response(id)
    _ = d.call("shutdown")
    d.notify("exit")
    _ = d.waitExit()
    return ms
}

/// Spawn → the first byte `parlance COMMAND` writes to its terminal.
private func cliFirstByte(_ binary: String, _ args: [String]) throws -> Double {
    var master: Int32 = -1, slave: Int32 = -1
    guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw BenchError("openpty failed") }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: binary)
    p.arguments = args
    p.environment = scratchEnv()
    p.standardOutput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
    p.standardError = FileHandle(forWritingAtPath: "/dev/null")
    p.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    let t0 = Date()
    try p.run()
    close(slave)
    var buf = [UInt8](repeating: 0, count: 4096)
    var first: Double? = nil
    while true {
        let n = buf.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }  // EIO once the child has closed the terminal
        if first == nil, buf[0..<n].contains(where: { $0 > 0x20 }) { first = Date().timeIntervalSince(t0) * 1000 }
    }
    close(master)
    p.waitUntilExit()
    guard p.terminationStatus == 0, let first else { throw BenchError("parlance \(args.first ?? "") exited \(p.terminationStatus) before writing") }
    return first
}

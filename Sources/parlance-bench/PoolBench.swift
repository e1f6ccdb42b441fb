import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ParlanceClient
import ParlanceJSON

/// Pools: three llama-servers of the model (one thread, two slots each) behind two pools of
/// the same endpoints, one routed by cost and one round-robin. Each round asks three
/// questions about each of four documents, new to every server (a fresh copy line), and
/// rounds alternate between the two pools. Figures: prompt tokens the servers evaluated
/// (their usage: prompt minus cached) and the follow-ups' time to first token. Then the
/// throughput after a kill: six requests kept in flight on a pool of the three with
/// `continueOnFailure`, one server killed, counted from 5 s after, against the two that
/// remain as a pool of their own. Last, the router's own cost on a stand-in endpoint.
func poolBench(daemonPath: String, modelPath: String, serverPath: String, standIn: String?, rounds: Int = 2) throws -> JSONValue {
    func r2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
    func median(_ xs: [Double]) -> Double { xs.isEmpty ? 0 : xs.sorted()[xs.count / 2] }
    let servers = try (0..<3).map { _ in try LlamaServer(path: serverPath, modelPath: modelPath, threads: 1, extra: ["-c", "4096", "-np", "2"]) }
    defer { for s in servers { s.stop() } }
    let ports = servers.map(\.port)
    let endpoints: JSONValue = .array(ports.map { ["url": .string("http://127.0.0.1:\($0)/v1")] })
    let two: JSONValue = .array(ports.prefix(2).map { ["url": .string("http://127.0.0.1:\($0)/v1")] })
    let config: JSONValue = ["models": [
        "cost": ["endpoints": endpoints], "rr": ["endpoints": endpoints, "routing": "roundRobin"],
        "two": ["endpoints": two], "kill": ["endpoints": endpoints, "continueOnFailure": true, "healthCheckSeconds": 1],
    ], "defaultModel": "cost"]
    let dir = NSTemporaryDirectory() + "parlance-poolbench-\(getpid())"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try Data(config.serialized().utf8).write(to: URL(fileURLWithPath: dir + "/config.json"))
    let d = try DaemonProcess(args: ["--config", dir + "/config.json"], binary: daemonPath)
    _ = d.initialize()
    for m in ["cost", "rr", "two", "kill"] { guard d.call("model/load", ["model": .string(m)]).result != nil else { throw BenchError("pool \(m) did not load") } }

    var evaluated = ["cost": 0, "rr": 0]
    var followUpTtft = ["cost": [Double](), "rr": [Double]()]
    for round in 0..<rounds {
        for model in (round % 2 == 0 ? ["cost", "rr"] : ["rr", "cost"]) {
            let r = try poolQuestions(d, model: model, copy: "\(model)-\(round)")
            evaluated[model, default: 0] += r.evaluated
            followUpTtft[model, default: []] += r.followUpTtftMs
        }
    }
    // After a kill: the pool's throughput from 5 s after one server dies, against the two
    // that remain as a pool of their own under the same load.
    let remaining = try steadyThroughput(d, model: "two", seconds: 20)
    let survived = try steadyThroughput(d, model: "kill", seconds: 25, after: 5) { kill(servers[2].process.processIdentifier, SIGKILL) }
    _ = d.call("shutdown")
    d.notify("exit")
    let afterKill = survived.rate / max(1e-9, remaining.rate)
    let tokens = Double(evaluated["cost"] ?? 0) / Double(max(1, evaluated["rr"] ?? 1))
    let ttft = median(followUpTtft["cost"] ?? []) / max(1e-9, median(followUpTtft["rr"] ?? []))
    var out: JSONObject = [
        "rounds": .int(rounds), "questionsPerRound": 12,
        "promptTokensEvaluatedCost": .int(evaluated["cost"] ?? 0), "promptTokensEvaluatedRoundRobin": .int(evaluated["rr"] ?? 0),
        "promptTokensVsRoundRobin": r2(tokens),
        "followUpFirstTokenMsMedianCost": r2(median(followUpTtft["cost"] ?? [])),
        "followUpFirstTokenMsMedianRoundRobin": r2(median(followUpTtft["rr"] ?? [])), "followUpFirstTokenVsRoundRobin": r2(ttft),
        "afterKillTokPerSec": r2(survived.rate), "twoEndpointsTokPerSec": r2(remaining.rate), "afterKillVsTwoEndpoints": r2(afterKill),
        "afterKillFailedRequests": .int(survived.failed),
    ]
    var targets: JSONObject = ["tokens<=0.5xRoundRobin": .bool(tokens <= 0.5), "followUpFirstToken<=0.7xRoundRobin": .bool(ttft <= 0.7),
                               "afterKill>=0.95xRemaining": .bool(afterKill >= 0.95)]
    if let standIn {
        let overhead = try routerOverhead(daemonPath: daemonPath, standIn: standIn)
        out["routerOverheadMsMedian"] = r2(overhead)
        targets["routerOverhead<=2ms"] = .bool(overhead <= 2)
    } else {
        out["routerOverheadMsMedian"] = "skipped: Tests/Fixtures/fake-pool-endpoint.py not found"
    }
    out["targets"] = .object(targets)
    return .object(out)
}

/// Generated tokens per second through pool `model` with six requests kept in flight for
/// `seconds`, counted from `after` seconds in; `event` runs at the start (a kill).
func steadyThroughput(_ d: DaemonProcess, model: String, seconds: Double, after: Double = 0,
                      event: () -> Void = {}) throws -> (rate: Double, failed: Int) {
    func send(_ n: Int) -> Int {
        let sid = d.call("session/create", ["model": .string(model)])["result"]?["sessionId"] ?? .null
        return d.start("session/respond", ["sessionId": sid, "prompt": .string("Story \(n): tell a short story about a lighthouse."),
                                           "options": ["maxTokens": 48, "temperature": 0.7, "seed": .int(n)]])
    }
    var outstanding = Set((0..<6).map(send))
    var sent = 6, tokens = 0, failed = 0
    let start = Date()
    event()
    while Date().timeIntervalSince(start) < seconds {
        guard let r = d.waitFor(timeout: 120, { m in m["id"]?.intValue.map(outstanding.contains) == true && (m["result"] != nil || m["error"] != nil) }),
              let id = r["id"]?.intValue else { throw BenchError("no answer within 120 s through pool \(model)") }
        outstanding.remove(id)
        if Date().timeIntervalSince(start) >= after {
            if let n = r["result"]?["usage"]?["generatedTokens"]?.intValue { tokens += n } else { failed += 1 }
        }
        outstanding.insert(send(sent))
        sent += 1
    }
    for id in outstanding { _ = d.response(id, timeout: 120) }
    return (Double(tokens) / (seconds - after), failed)
}

/// The stand-in endpoints the pool tests use (the router's own cost is timed on them).
func standInScript(daemonPath: String) -> String? {
    let rel = "Tests/Fixtures/fake-pool-endpoint.py"
    let p = URL(fileURLWithPath: daemonPath).deletingLastPathComponent().appendingPathComponent("../../" + rel).standardizedFileURL.path
    return FileManager.default.fileExists(atPath: p) ? p : FileManager.default.fileExists(atPath: rel) ? rel : nil
}

/// Twelve questions (three rounds over four documents) through pool `model`: the prompt
/// tokens the servers evaluated, and the first-token times of the eight follow-ups.
func poolQuestions(_ d: DaemonProcess, model: String, copy: String) throws -> (evaluated: Int, followUpTtftMs: [Double]) {
    let topics = [("the harbour renovation", "cranes", "Marta"), ("the school library", "books", "Jonas"),
                  ("the bakery expansion", "ovens", "Priya"), ("the cycling club", "bicycles", "Tomas")]
    for (i, (topic, thing, person)) in topics.enumerated() {
        let text = (["Copy \(copy). Notes on \(topic)."] + (1...24).map { n in
            "Point \(n): \(person) reported that the \(thing) for \(topic) cost \(n * 130) euros in week \(n), and the next review is on day \(n + 3)."
        }).joined(separator: "\n")
        guard d.call("document/open", ["uri": .string("file:///\(copy)-\(i).txt"), "text": .string(text)]).result != nil else { throw BenchError("document/open failed") }
    }
    var evaluated = 0
    var followUps: [Double] = []
    for (q, question) in ["How much did week 2 cost?", "Who reported the costs?", "When is the next review after week 5?"].enumerated() {
        for i in topics.indices {
            let r = d.call("ask/stream", ["uri": .string("file:///\(copy)-\(i).txt"), "question": .string(question), "model": .string(model),
                                          "maxTokens": 128, "verify": false, "maxAttempts": 1, "temperature": 0], timeout: 300)
            guard let u = r["result"]?["usage"] else { throw BenchError("ask/stream on pool \(model) failed: \(r)") }
            evaluated += (u["promptTokens"]?.intValue ?? 0) - (u["cachedPromptTokens"]?.intValue ?? 0)
            if q > 0, let f = u["firstTokenMs"]?.doubleValue { followUps.append(f) }
        }
    }
    return (evaluated, followUps)
}

/// The router's added time per request: a stand-in endpoint that answers at once, called as
/// a plain remote model and through a pool (beside a stand-in that never finishes loading,
/// so every call goes to the same endpoint), alternated; the median difference in ms.
func routerOverhead(daemonPath: String, standIn: String, rounds: Int = 200) throws -> Double {
    let fake = Process()
    fake.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    fake.arguments = ["python3", standIn]
    let pipe = Pipe()
    fake.standardOutput = pipe
    fake.standardError = FileHandle.nullDevice
    try fake.run()
    defer { fake.terminate(); fake.waitUntilExit() }
    var line = Data()
    while let b = try pipe.fileHandleForReading.read(upToCount: 1), !b.isEmpty, b != Data("\n".utf8) { line += b }
    let ports = try JSONParser.parse(String(decoding: line, as: UTF8.self))
    guard let ok = ports["ok"]?.intValue, let loading = ports["loading"]?.intValue else { throw BenchError("the stand-in printed no ports") }
    let url = "http://127.0.0.1:\(ok)/v1"
    let d = try DaemonProcess(args: ["--model", "one=openai:\(url)", "--model", "pool=openai:\(url),http://127.0.0.1:\(loading)/v1"], binary: daemonPath)
    _ = d.initialize()
    var one: [Double] = [], pool: [Double] = []
    for round in 0..<rounds {
        for model in (round % 2 == 0 ? ["one", "pool"] : ["pool", "one"]) {
            let sid = d.call("session/create", ["model": .string(model)])["result"]?["sessionId"] ?? .null
            let t0 = Date()
            let r = d.call("session/respond", ["sessionId": sid, "prompt": "Say hello.", "options": ["maxTokens": 16]])
            let ms = Date().timeIntervalSince(t0) * 1000
            guard r["result"] != nil else { throw BenchError("the stand-in call failed through \(model): \(r)") }
            _ = d.call("session/close", ["sessionId": sid])
            if round >= 10 { model == "one" ? one.append(ms) : pool.append(ms) }
        }
    }
    _ = d.call("shutdown")
    d.notify("exit")
    return one.isEmpty ? 0 : pool.sorted()[pool.count / 2] - one.sorted()[one.count / 2]
}

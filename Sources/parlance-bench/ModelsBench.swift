import Foundation
import ParlanceClient
import ParlanceJSON

/// The registry's figures: `initialize` with a model configured (nothing loads on that
/// path), a cold model's first token (the load included), and RSS with one model loaded
/// and with two.
func modelsBench(daemonPath: String, modelPath: String, threads: Int) throws -> JSONValue {
    func r2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
    // A second model file: the same weights under another name (its own mapping).
    let copy = NSTemporaryDirectory() + "parlance-bench-second-\(UUID().uuidString).gguf"
    try FileManager.default.copyItem(atPath: modelPath, toPath: copy)
    defer { try? FileManager.default.removeItem(atPath: copy) }

    var initMs: [Double] = []
    var spawnMs: [Double] = []
    var coldMs: [Double] = []
    var loadMs: [Double] = []
    for _ in 0..<5 {
        let spawned = Date()
        let d = try DaemonProcess(args: ["--model", "a=\(modelPath)", "--model", "b=\(copy)", "--threads", String(threads)], binary: daemonPath)
        // The process is up once it answers (-32002 before initialize): time initialize
        // itself, and apart from it the process start.
        guard d.call("model/status").errorCode == -32002 else { throw BenchError("the daemon did not answer") }
        spawnMs.append(Date().timeIntervalSince(spawned) * 1000)
        let start = Date()
        let r = d.initialize()
        initMs.append(Date().timeIntervalSince(start) * 1000)
        guard r.result?["model"]?["state"] == "unloaded" else { throw BenchError("initialize loaded a model: \(r)") }
        let sid = d.call("session/create", [:]).result?["sessionId"] ?? .null
        let t0 = Date()
        let id = d.start("session/respond", ["sessionId": sid, "prompt": "Say hello.", "workDoneToken": "cold", "options": ["maxTokens": 4, "temperature": 0]])
        _ = d.waitFor { $0["params"]?["token"] == "cold" && $0["params"]?["value"]?["phase"] == "loading" }
        let loading = Date()
        _ = d.waitFor { $0["params"]?["token"] == "cold" && $0["params"]?["value"]?["phase"] == "prompt" }
        loadMs.append(Date().timeIntervalSince(loading) * 1000)
        _ = d.waitFor { $0["params"]?["token"] == "cold" && $0["params"]?["value"]?["delta"] != nil }
        coldMs.append(Date().timeIntervalSince(t0) * 1000)
        _ = d.response(id)
        _ = d.call("shutdown")
        d.notify("exit")
        _ = d.waitExit()
    }
    let d = try DaemonProcess(args: ["--model", "a=\(modelPath)", "--model", "b=\(copy)", "--threads", String(threads)], binary: daemonPath)
    _ = d.initialize()
    let none = d.call("model/list").result?["residentBytes"]?.intValue ?? 0
    _ = d.call("model/load", ["model": "a"])
    let one = d.call("model/list").result?["residentBytes"]?.intValue ?? 0
    _ = d.call("model/load", ["model": "b"])
    let listTwo = d.call("model/list").result
    let two = listTwo?["residentBytes"]?.intValue ?? 0
    let perModel = listTwo?["models"]?.arrayValue?.first?["memory"]?["totalBytes"]?.intValue ?? 0
    _ = d.call("shutdown")
    d.notify("exit")
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    return [
        "initializeMsMedian": r2(median(initMs)), "initializeMsMax": r2(initMs.max() ?? 0),
        "processStartMsMedian": r2(median(spawnMs)),
        "coldFirstTokenMsMedian": r2(median(coldMs)), "coldLoadMsMedian": r2(median(loadMs)),
        "rssNoModelBytes": .int(none), "rssOneModelBytes": .int(one), "rssTwoModelsBytes": .int(two),
        "secondModelAddsBytes": .int(two - one), "modelTotalBytes": .int(perModel),
        "targets": ["initialize<=50ms": .bool(median(initMs) <= 50)],
    ]
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

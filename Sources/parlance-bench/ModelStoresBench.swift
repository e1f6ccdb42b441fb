import Foundation
import ParlanceJSON
import ParlanceModelStores
import Synchronization

/// Models on disk: listing stores that hold 50 models (their GGUF headers read the first
/// time, then from Parlance's header index), resolving a store name, and a pull from a
/// loopback server against curl fetching the same file, interleaved.
func storesBench(modelPath: String, hubServer: String?) throws -> JSONValue {
    func r2(_ x: Double) -> JSONValue { .double((x * 100).rounded() / 100) }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let fm = FileManager.default
    let home = NSTemporaryDirectory() + "parlance-bench-stores-\(UUID().uuidString)"
    defer { try? fm.removeItem(atPath: home) }
    // 50 models, each its own hard link to the model file (one inode, fifty paths):
    // 20 in Ollama's layout, 20 in the Hugging Face cache, 10 in LM Studio's folder.
    func link(_ to: String) throws {
        try fm.createDirectory(atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try fm.linkItem(atPath: modelPath, toPath: to)
    }
    let ollama = home + "/.ollama/models"
    for i in 0..<20 {
        let digest = String(format: "%064x", i + 1)
        try link("\(ollama)/blobs/sha256-\(digest)")
        let manifest: JSONValue = ["schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                                   "layers": [["mediaType": "application/vnd.ollama.image.model", "digest": .string("sha256:\(digest)"),
                                               "size": .int((try fm.attributesOfItem(atPath: modelPath)[.size] as? Int) ?? 0)]]]
        let path = "\(ollama)/manifests/registry.ollama.ai/library/model\(i)/latest"
        try fm.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(manifest.serialized().utf8).write(to: URL(fileURLWithPath: path))
    }
    let hub = home + "/.cache/huggingface/hub"
    for i in 0..<20 {
        let top = "\(hub)/models--bench--repo\(i)-GGUF"
        let blob = "\(top)/blobs/\(String(format: "%064x", 100 + i))"
        try link(blob)
        let commit = String(repeating: "a", count: 40)
        try fm.createDirectory(atPath: "\(top)/snapshots/\(commit)", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(top)/snapshots/\(commit)/repo\(i)-Q4_1.gguf", withDestinationPath: "../../blobs/\((blob as NSString).lastPathComponent)")
        try fm.createDirectory(atPath: "\(top)/refs", withIntermediateDirectories: true)
        try Data(commit.utf8).write(to: URL(fileURLWithPath: "\(top)/refs/main"))
    }
    for i in 0..<10 { try link("\(home)/.lmstudio/models/bench/repo\(i)-GGUF/repo\(i)-Q4_1.gguf") }

    let env = StoreEnvironment(variables: ["HOME": home, "XDG_CACHE_HOME": home + "/.cache", "XDG_DATA_HOME": home + "/.local/share"], home: home)
    let catalogue = ModelCatalogue(env)
    var first = 0.0, count = 0
    var warm: [Double] = []
    for round in 0..<6 {
        let t0 = ContinuousClock.now
        let listed = catalogue.list()
        let ms = seconds(ContinuousClock.now - t0) * 1000
        if round == 0 { first = ms; count = listed.count } else { warm.append(ms) }
    }
    guard count == 50 else { throw BenchError("the stores bench listed \(count) models, not 50") }
    var resolveMs: [Double] = []
    for i in 0..<21 {
        let name = ["ollama:model\(i % 20)", "hf:bench/repo\(i % 20)-GGUF:Q4_1", "lmstudio:bench/repo\(i % 10)-GGUF"][i % 3]
        let t0 = ContinuousClock.now
        _ = try catalogue.resolve(name)
        resolveMs.append(seconds(ContinuousClock.now - t0) * 1000)
    }

    var result: JSONObject = [
        "listed": .int(count), "listFirstMs": r2(first), "listWarmMsMedian": r2(median(warm)),
        "resolveMsMedian": r2(median(resolveMs)), "resolveMsMax": r2(resolveMs.max() ?? 0),
    ]
    var targets: JSONObject = ["list50<100ms": .bool(median(warm) < 100 && first < 100), "resolve<5ms": .bool(median(resolveMs) < 5)]
    if let hubServer {
        let pull = try pullVersusCurl(modelPath: modelPath, hubServer: hubServer, home: home + "/pull")
        result["pull"] = pull
        targets["pull>=0.9xCurl"] = .bool((pull["vsCurl"]?.doubleValue ?? 0) >= 0.9)
    } else {
        result["pull"] = ["skipped": "tests/hub_server.py not found"]
    }
    result["targets"] = .object(targets)
    return .object(result)
}

/// The model file served by the loopback hub server: `curl -o FILE` and `parlance`'s puller
/// (its Hugging Face path: API, HEAD, the redirect to the second port, the sha256 check and
/// the cache layout), alternately, three rounds each; rates are file bytes over wall time.
func pullVersusCurl(modelPath: String, hubServer: String, home: String) throws -> JSONValue {
    let fm = FileManager.default
    try fm.createDirectory(atPath: home, withIntermediateDirectories: true)
    let serve = home + "/serve"
    try fm.createDirectory(atPath: serve + "/tiny-GGUF", withIntermediateDirectories: true)
    try fm.linkItem(atPath: modelPath, toPath: serve + "/tiny-GGUF/tiny-Q4_1.gguf")
    let server = Process()
    server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    server.arguments = ["python3", hubServer, serve, "--exit-on-eof"]
    server.standardInput = Pipe()
    let out = Pipe()
    server.standardOutput = out
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer { server.terminate(); server.waitUntilExit() }
    // The server prints its port on its first line once it listens.
    var line = Data()
    while true {
        let b = out.fileHandleForReading.readData(ofLength: 1)
        if b.isEmpty || b == Data("\n".utf8) { break }
        line.append(b)
    }
    guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)) else {
        throw BenchError("hub server printed no port: \(String(decoding: line, as: UTF8.self))")
    }
    let bytes = Double((try fm.attributesOfItem(atPath: modelPath)[.size] as? Int) ?? 0)
    var curlRates: [Double] = [], pullRates: [Double] = []
    for round in 0..<3 {
        let target = home + "/curl-\(round).gguf"
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "-sSfL", "-o", target, "http://127.0.0.1:\(port)/bench/tiny-GGUF/resolve/main/tiny-Q4_1.gguf"]
        let t0 = ContinuousClock.now
        try curl.run()
        curl.waitUntilExit()
        guard curl.terminationStatus == 0 else { throw BenchError("curl failed (\(curl.terminationStatus))") }
        curlRates.append(bytes / seconds(ContinuousClock.now - t0))
        try? fm.removeItem(atPath: target)

        let cache = home + "/hf-\(round)"
        let env = StoreEnvironment(variables: ["HOME": home, "HF_ENDPOINT": "http://127.0.0.1:\(port)", "HF_HUB_CACHE": cache], home: home)
        let t1 = ContinuousClock.now
        let done = Handed<Result<PulledModel, PullError>>()
        let sem = DispatchSemaphore(value: 0)
        Task {
            do { done.set(.success(try await ModelPuller.pull("hf:bench/tiny-GGUF:Q4_1", environment: env) { _ in })) } catch {
                done.set(.failure(error as? PullError ?? PullError(.network, "\(error)")))
            }
            sem.signal()
        }
        sem.wait()
        if case .failure(let e) = done.get()! { throw BenchError("pull failed: \(e)") }
        pullRates.append(bytes / seconds(ContinuousClock.now - t1))
        try? fm.removeItem(atPath: cache)
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let c = median(curlRates), p = median(pullRates)
    return ["fileBytes": .int(Int(bytes)), "curlMBps": .double((c / 1e4).rounded() / 100), "pullMBps": .double((p / 1e4).rounded() / 100),
            "vsCurl": .double((p / c * 100).rounded() / 100), "rounds": 3]
}

func seconds(_ d: Duration) -> Double { d.inSeconds }

/// A value handed from a task to the thread that waits for it.
final class Handed<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)  // guards the value until the waiting thread takes it
    func set(_ v: T) { value.withLock { $0 = v } }
    func get() -> T? { value.withLock { $0 } }
}

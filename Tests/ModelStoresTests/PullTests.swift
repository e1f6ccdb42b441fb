import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ParlanceHash
@testable import ParlanceModelStores
import Synchronization
import XCTest

/// Pulls against tests/hub_server.py: a loopback Hugging Face hub (whose downloads redirect
/// to a second port, the "CDN") and an OCI registry, with faults asked for by name. Every
/// pull gets a fresh HOME; the proxy variables point at a closed port, so that nothing here
/// can reach a real hub (https:// goes through the proxy and fails; http:// is refused for
/// any host but loopback).
final class PullTests: XCTestCase {
    /// The server and its files, started once for the class.
    final class Hub: @unchecked Sendable {
        let dir: String
        let root: String
        let logPath: String
        let process = Process()
        let stdin = Pipe()
        let port: Int
        /// The real model (hard-linked, or symlinked across file systems), or nil without one.
        let realModel: String?
        let realSize: Int

        static let deadProxy = "http://127.0.0.1:9"
        static let proxyNames = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"]
        static let token = "hub-test-token"

        /// The proxy variables as they were before this server set them; `stop()` puts them back,
        /// so the suites that run after this one in the same process reach loopback directly.
        let savedProxyVariables: [String: String?]

        init() throws {
            // The client (libcurl, for https://) reads the proxy from the process's environment.
            let env = ProcessInfo.processInfo.environment
            savedProxyVariables = Dictionary(uniqueKeysWithValues: (Self.proxyNames + ["NO_PROXY", "no_proxy"]).map { ($0, env[$0]) })
            dir = NSTemporaryDirectory() + "parlance-pull-tests-\(getpid())"
            root = dir + "/hub"
            logPath = dir + "/requests.jsonl"
            let fm = FileManager.default
            try? fm.removeItem(atPath: dir)
            for repo in ["smollm", "small", "split", "tiny"] { try fm.createDirectory(atPath: root + "/" + repo, withIntermediateDirectories: true) }
            // Synthetic GGUF-looking files (deterministic bytes).
            try Self.synthetic(13_000_000, seed: 1).write(to: URL(fileURLWithPath: root + "/small/small-Q4_K_M.gguf"))
            try Self.synthetic(1_048_576, seed: 2).write(to: URL(fileURLWithPath: root + "/small/small-Q8_0.gguf"))
            try Self.synthetic(1_500_000, seed: 3).write(to: URL(fileURLWithPath: root + "/split/split-Q8_0-00001-of-00002.gguf"))
            try Self.synthetic(700_001, seed: 4).write(to: URL(fileURLWithPath: root + "/split/split-Q8_0-00002-of-00002.gguf"))
            try Self.synthetic(400_000, seed: 5).write(to: URL(fileURLWithPath: root + "/tiny/tiny-Q4_K_M.gguf"))
            // The real model: linked, never copied.
            var real: String?
            let environment = ProcessInfo.processInfo.environment  // the SmolLM2-135M file: the suites' model
            if let model = environment["PARLANCE_TEST_MODEL"] ?? environment["PARLANCE_DEFAULT_MODEL"], fm.fileExists(atPath: model) {
                let dest = root + "/smollm/" + (model as NSString).lastPathComponent
                if link(model, dest) != 0 { _ = symlink(model, dest) }
                real = dest
            }
            realModel = real
            var size = 0
            if let real, let attributes = try? fm.attributesOfItem(atPath: real), let n = attributes[.size] as? Int { size = n }
            realSize = size

            let out = Pipe()
            let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", repoRoot.appendingPathComponent("tests/hub_server.py").path, root, "--log", logPath, "--exit-on-eof"]
            process.standardOutput = out
            process.standardInput = stdin  // the server ends when this closes (with this process)
            _ = fm.createFile(atPath: dir + "/server.err", contents: nil)
            process.standardError = FileHandle(forWritingAtPath: dir + "/server.err")
            try process.run()
            var line: [UInt8] = []
            while true {
                let b = out.fileHandleForReading.readData(ofLength: 1)
                if b.isEmpty || b[0] == 0x0A { break }
                line.append(b[0])
            }
            guard let p = Int(String(decoding: line, as: UTF8.self)) else {
                process.terminate()
                throw NSError(domain: "PullTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "tests/hub_server.py did not print its port"])
            }
            port = p
            // Set last, so that a failure above leaves the environment as it was.
            for name in Self.proxyNames { setenv(name, Self.deadProxy, 1) }
            unsetenv("NO_PROXY")
            unsetenv("no_proxy")
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: dir)
            for (name, value) in savedProxyVariables {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }

        static func synthetic(_ count: Int, seed: UInt64) -> Data {
            var words = [UInt64](repeating: 0, count: (count + 7) / 8)
            var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
            for i in words.indices {
                x ^= x << 13
                x ^= x >> 7
                x ^= x << 17
                words[i] = x
            }
            var d = words.withUnsafeBytes { Data($0.prefix(count)) }
            d.replaceSubrange(0..<4, with: Array("GGUF".utf8))
            return d
        }

        /// The requests the server logged, for `key` (`org/repo/file`, or `ns/repo/sha256:…`).
        func requests(_ key: String) -> [[String: Any]] {
            guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
            return text.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }.filter { ($0["key"] as? String) == key }
        }

        /// The body transfers (GETs that sent bytes) of `key`.
        func transfers(_ key: String) -> [[String: Any]] {
            requests(key).filter { ($0["method"] as? String) == "GET" && $0["bytes"] != nil }
        }
    }

    nonisolated(unsafe) static var hubResult: Result<Hub, any Error>?

    override class func tearDown() {
        if case .success(let hub)? = hubResult { hub.stop() }
        hubResult = nil
        super.tearDown()
    }

    /// The class's server, started by the first test that needs it.
    func hub() throws -> Hub {
        if Self.hubResult == nil { Self.hubResult = Result { try Hub() } }
        return try Self.hubResult!.get()
    }

    /// A fresh HOME (its caches and data folder inside) with the hub as HF_ENDPOINT.
    func environment(_ extra: [String: String] = [:]) throws -> StoreEnvironment {
        let hub = try hub()
        let home = hub.dir + "/homes/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var v = ["HOME": home, "XDG_CACHE_HOME": home + "/.cache", "XDG_DATA_HOME": home + "/.local/share", "HF_ENDPOINT": "http://127.0.0.1:\(hub.port)"]
        for name in Hub.proxyNames { v[name] = Hub.deadProxy }
        v.merge(extra) { _, new in new }
        return StoreEnvironment(variables: v, home: home)
    }

    func hfCache(_ env: StoreEnvironment) -> String { env.home + "/.cache/huggingface/hub" }

    /// Progress events as they come.
    final class Recorder: Sendable {
        let events = Mutex<[(at: ContinuousClock.Instant, progress: PullProgress)]>([])
        func record(_ p: PullProgress) { events.withLock { $0.append((ContinuousClock.now, p)) } }
        var all: [PullProgress] { events.withLock { $0.map(\.progress) } }
        /// The most events in any one second.
        var busiestSecond: Int {
            let times = events.withLock { $0.map(\.at) }
            var most = 0
            for (i, t) in times.enumerated() { most = max(most, times[i...].prefix { $0 - t < .seconds(1) }.count) }
            return most
        }
    }

    func pull(_ name: String, _ env: StoreEnvironment, _ recorder: Recorder? = nil, file: StaticString = #filePath, line: UInt = #line) async throws -> PulledModel {
        do throws(PullError) {
            return try await ModelPuller.pull(name, environment: env) { recorder?.record($0) }
        } catch {
            XCTFail("pull of \(name) failed: \(error.reason): \(error.message)", file: file, line: line)
            throw error
        }
    }

    func failure(_ name: String, _ env: StoreEnvironment, file: StaticString = #filePath, line: UInt = #line) async -> PullError {
        do throws(PullError) {
            let r = try await ModelPuller.pull(name, environment: env) { _ in }
            XCTFail("pull of \(name) succeeded: \(r)", file: file, line: line)
            return PullError(.network, "(succeeded)")
        } catch {
            return error
        }
    }

    func sha256(_ path: String) throws -> String { try SHA256.hexOfFile(atPath: path) }

    /// Whether two files (symlinks followed) hold the same bytes.
    func sameBytes(_ a: String, _ b: String) -> Bool {
        guard let fa = FileHandle(forReadingAtPath: a), let fb = FileHandle(forReadingAtPath: b) else { return false }
        defer { try? fa.close(); try? fb.close() }
        while true {
            let da = (try? fa.read(upToCount: 8 << 20)) ?? nil, db = (try? fb.read(upToCount: 8 << 20)) ?? nil
            if da != db { return false }
            if da == nil || da!.isEmpty { return true }
        }
    }

    func listing(_ dir: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }

    func readLink(_ path: String) -> String? { try? FileManager.default.destinationOfSymbolicLink(atPath: path) }

    // MARK: End to end

    /// The real model from the hub: the cache laid out as huggingface_hub writes it; the
    /// bytes identical; a second pull transfers nothing.
    func testHuggingFacePullEndToEnd() async throws {
        let hub = try hub()
        guard let real = hub.realModel else { throw XCTSkip("PARLANCE_DEFAULT_MODEL is not set (scripts/setup.sh)") }
        let env = try environment()
        let recorder = Recorder()
        let fileName = (real as NSString).lastPathComponent
        let t0 = ContinuousClock.now
        let r = try await pull("hf:e2e/smollm", env, recorder)
        let elapsed = ContinuousClock.now - t0
        print(String(format: "PullTests: %d bytes from the hub in %.2f s (%.0f MB/s)", hub.realSize, seconds(elapsed), Double(hub.realSize) / 1e6 / seconds(elapsed)))

        XCTAssertEqual(r.name, "hf:e2e/smollm:Q4_1")
        XCTAssertTrue(r.downloaded)
        XCTAssertEqual(r.resumedBytes, 0)
        XCTAssertEqual(r.bytes, hub.realSize)
        XCTAssertEqual(r.parts, [r.path])
        XCTAssertTrue(sameBytes(r.path, real), "the pulled file differs from the served one")

        // The layout: blobs/<sha256>, snapshots/<commit>/<file> -> ../../blobs/<sha256>, refs/main.
        let repoDir = hfCache(env) + "/models--e2e--smollm"
        XCTAssertEqual(listing(repoDir), ["blobs", "refs", "snapshots"])
        XCTAssertEqual(listing(repoDir + "/blobs"), [r.sha256], "one blob named by its sha256, no .incomplete left")
        let commit = try String(contentsOfFile: repoDir + "/refs/main", encoding: .utf8)
        XCTAssertTrue(commit.count == 40 && commit.allSatisfy(\.isHexDigit), "refs/main holds the bare commit: '\(commit)'")
        XCTAssertEqual(listing(repoDir + "/snapshots"), [commit])
        let link = repoDir + "/snapshots/\(commit)/\(fileName)"
        XCTAssertEqual(r.path, link)
        XCTAssertEqual(readLink(link), "../../blobs/\(r.sha256)", "a relative symlink, as huggingface_hub makes")
        XCTAssertEqual(listing(hfCache(env) + "/.locks/models--e2e--smollm"), [r.sha256 + ".lock"], "huggingface_hub's lock file")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/sha256sum") {
            let p = Process(), out = Pipe()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
            p.arguments = [real]
            p.standardOutput = out
            try p.run()
            p.waitUntilExit()
            XCTAssertEqual(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64), Substring(r.sha256))
        }

        // Progress: bytes up to the total, at most ~5 a second.
        let events = recorder.all
        XCTAssertGreaterThanOrEqual(events.count, 2)
        XCTAssertEqual(events.last?.completedBytes, hub.realSize)
        XCTAssertTrue(events.allSatisfy { $0.totalBytes == hub.realSize && $0.file == fileName })
        XCTAssertEqual(events.map(\.completedBytes), events.map(\.completedBytes).sorted())
        XCTAssertLessThanOrEqual(recorder.busiestSecond, 7)

        // Again: complete on disk, nothing transferred.
        let key = "e2e/smollm/\(fileName)"
        XCTAssertEqual(hub.transfers(key).count, 1)
        let again = try await pull("hf:e2e/smollm", env)
        XCTAssertFalse(again.downloaded)
        XCTAssertEqual(again.path, r.path)
        XCTAssertEqual(again.sha256, r.sha256)
        XCTAssertEqual(again.resumedBytes, hub.realSize)
        XCTAssertEqual(hub.transfers(key).count, 1, "a second pull of a complete model sends no bytes")
    }

    /// The real model from the registry: blobs named by digest, the manifest written last,
    /// Parlance's data folder only.
    func testOllamaPullEndToEnd() async throws {
        let hub = try hub()
        guard let real = hub.realModel else { throw XCTSkip("PARLANCE_DEFAULT_MODEL is not set (scripts/setup.sh)") }
        let env = try environment()
        let r = try await pull("ollama:http://127.0.0.1:\(hub.port)/library/smollm", env)
        XCTAssertEqual(r.name, "ollama:127.0.0.1:\(hub.port)/library/smollm:latest")
        XCTAssertTrue(r.downloaded)
        let models = env.dataDir + "/models"
        XCTAssertTrue(models.hasPrefix(env.home + "/.local/share/parlance/"))
        XCTAssertEqual(r.path, models + "/blobs/sha256-" + r.sha256)
        XCTAssertTrue(sameBytes(r.path, real))
        XCTAssertFalse(FileManager.default.fileExists(atPath: env.home + "/.ollama"), "never Ollama's own store")

        let manifestPath = models + "/manifests/127.0.0.1:\(hub.port)/library/smollm/latest"
        let manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifestPath))) as? [String: Any])
        let layers = try XCTUnwrap(manifest["layers"] as? [[String: Any]]) + [try XCTUnwrap(manifest["config"] as? [String: Any])]
        let digests = layers.compactMap { $0["digest"] as? String }
        XCTAssertEqual(digests.count, 4)
        XCTAssertEqual(Set(listing(models + "/blobs")), Set(digests.map { $0.replacingOccurrences(of: ":", with: "-") }), "every blob, by digest, nothing partial")
        let manifestTime = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: manifestPath)[.modificationDate] as? Date)
        for d in digests {
            let path = models + "/blobs/" + d.replacingOccurrences(of: ":", with: "-")
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            if size < 1 << 20 { XCTAssertEqual("sha256:" + (try sha256(path)), d) }
            let t = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
            XCTAssertLessThanOrEqual(t, manifestTime, "the manifest is written after \(d)")
        }
        // Complete on disk: nothing is sent again.
        let again = try await pull("ollama:http://127.0.0.1:\(hub.port)/library/smollm:latest", env)
        XCTAssertFalse(again.downloaded)
        XCTAssertEqual(hub.transfers("library/smollm/sha256:\(r.sha256)").count, 1)
    }

    /// A blob whose bytes do not match its digest: no manifest, no blob, no partial.
    func testOllamaChecksumMismatchWritesNoManifest() async throws {
        let hub = try hub()
        let env = try environment()
        let e = await failure("ollama:http://127.0.0.1:\(hub.port)/badsum-o1/small:q8_0", env)
        XCTAssertEqual(e.reason, .checksum, e.message)
        let models = env.dataDir + "/models"
        let sha = try sha256(hub.root + "/small/small-Q8_0.gguf")
        XCTAssertFalse(FileManager.default.fileExists(atPath: models + "/manifests"), "no manifest for a model whose blob failed")
        XCTAssertFalse(listing(models + "/blobs").contains { $0.hasPrefix("sha256-" + sha) }, "no blob or partial: \(listing(models + "/blobs"))")
        XCTAssertTrue(e.message.contains(sha), e.message)
    }

    /// A split pair, and the quantization chosen by default (Q4_K_M before Q8_0) or by name.
    func testSplitPairAndQuantizationChoice() async throws {
        let hub = try hub()
        let env = try environment()
        let split = try await pull("hf:s1/split", env)
        XCTAssertEqual(split.name, "hf:s1/split:Q8_0")
        XCTAssertEqual(split.parts.map { ($0 as NSString).lastPathComponent }, ["split-Q8_0-00001-of-00002.gguf", "split-Q8_0-00002-of-00002.gguf"])
        XCTAssertEqual(split.path, split.parts[0])
        XCTAssertEqual(split.bytes, 2_200_001)
        for part in split.parts {
            let served = hub.root + "/split/" + (part as NSString).lastPathComponent
            XCTAssertTrue(sameBytes(part, served))
            XCTAssertEqual(readLink(part), "../../blobs/" + (try sha256(served)))
        }
        XCTAssertEqual(split.sha256, try sha256(hub.root + "/split/split-Q8_0-00001-of-00002.gguf"))

        let byDefault = try await pull("hf:q1/small", env)
        XCTAssertEqual(byDefault.name, "hf:q1/small:Q4_K_M")
        XCTAssertTrue(byDefault.path.hasSuffix("/small-Q4_K_M.gguf"))
        let named = try await pull("hf:q1/small:q8_0", env)
        XCTAssertEqual(named.name, "hf:q1/small:Q8_0")
        XCTAssertTrue(sameBytes(named.path, hub.root + "/small/small-Q8_0.gguf"))
        // Both in one repository folder, one snapshot.
        let repoDir = hfCache(env) + "/models--q1--small"
        XCTAssertEqual(listing(repoDir + "/blobs").count, 2)
        XCTAssertEqual(listing(repoDir + "/snapshots").count, 1)
    }

    // MARK: Interruptions

    /// The connection drops halfway: the pull resumes with a Range from the partial file.
    func testDroppedConnectionResumes() async throws {
        let hub = try hub()
        let env = try environment()
        let recorder = Recorder()
        let r = try await pull("hf:drop-r1/small:Q4_K_M", env, recorder)
        XCTAssertTrue(sameBytes(r.path, hub.root + "/small/small-Q4_K_M.gguf"))
        XCTAssertEqual(r.sha256, try sha256(hub.root + "/small/small-Q4_K_M.gguf"))
        XCTAssertGreaterThan(r.resumedBytes, 0)
        let t = hub.transfers("drop-r1/small/small-Q4_K_M.gguf")
        XCTAssertEqual(t.count, 2, "\(t)")
        XCTAssertEqual(t.first?["drop"] as? Bool, true)
        XCTAssertEqual(t.last?["status"] as? Int, 206)
        XCTAssertEqual(t.last?["range"] as? Int, r.resumedBytes)
        XCTAssertEqual(recorder.all.last?.resumedBytes, r.resumedBytes)
    }

    /// A server that answers a Range request with 200 and the whole body: start over.
    func testRangeAnsweredWithWholeBodyStartsOver() async throws {
        let hub = try hub()
        let env = try environment()
        let r = try await pull("hf:drop-ignorerange-r2/small:Q4_K_M", env)
        XCTAssertTrue(sameBytes(r.path, hub.root + "/small/small-Q4_K_M.gguf"))
        XCTAssertEqual(r.resumedBytes, 0)
        let t = hub.transfers("drop-ignorerange-r2/small/small-Q4_K_M.gguf")
        XCTAssertEqual(t.count, 2)
        XCTAssertGreaterThan(t.last?["range"] as? Int ?? 0, 0, "the second request asked for a range")
        XCTAssertEqual(t.last?["status"] as? Int, 200)
    }

    /// Cancelled mid-transfer: the partial stays, and the next pull resumes from it.
    func testCancelledPullLeavesPartialThatResumes() async throws {
        let hub = try hub()
        let env = try environment()
        let (moving, signal) = AsyncStream<Void>.makeStream()
        let task = Task {
            defer { signal.finish() }  // (so that the wait below ends even if no byte comes)
            return try await ModelPuller.pull("hf:trickle-k1/small:Q4_K_M", environment: env) { p in
                if p.completedBytes > 0 { signal.yield() }
            }
        }
        for await _ in moving { break }
        task.cancel()
        let outcome = await task.result
        guard case .failure(let error) = outcome else { return XCTFail("the cancelled pull completed") }
        XCTAssertEqual((error as? PullError)?.reason, .cancelled)
        let blobs = hfCache(env) + "/models--trickle-k1--small/blobs"
        let partials = listing(blobs).filter { $0.hasSuffix(".incomplete") }
        XCTAssertEqual(partials.count, 1, "\(listing(blobs))")
        let kept = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: blobs + "/" + partials[0])[.size] as? Int)
        XCTAssertGreaterThan(kept, 0)
        XCTAssertLessThan(kept, 13_000_000)

        let r = try await pull("hf:trickle-k1/small:Q4_K_M", env)
        XCTAssertEqual(r.resumedBytes, kept)
        XCTAssertTrue(r.downloaded)
        XCTAssertTrue(sameBytes(r.path, hub.root + "/small/small-Q4_K_M.gguf"))
        let t = hub.transfers("trickle-k1/small/small-Q4_K_M.gguf")
        XCTAssertEqual(t.last?["range"] as? Int, kept)
        XCTAssertEqual(t.last?["status"] as? Int, 206)
        XCTAssertFalse(listing(blobs).contains { $0.hasSuffix(".incomplete") })
    }

    /// A partial that is already complete is verified and renamed, not fetched again.
    func testCompletePartialIsVerifiedNotFetched() async throws {
        let hub = try hub()
        let env = try environment()
        let served = hub.root + "/small/small-Q8_0.gguf"
        let sha = try sha256(served)
        let blobs = hfCache(env) + "/models--cp1--small/blobs"
        try FileManager.default.createDirectory(atPath: blobs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: served, toPath: blobs + "/\(sha).incomplete")
        let r = try await pull("hf:cp1/small:Q8_0", env)
        XCTAssertFalse(r.downloaded)
        XCTAssertEqual(r.resumedBytes, 1_048_576)
        XCTAssertEqual(listing(blobs), [sha])
        XCTAssertEqual(hub.transfers("cp1/small/small-Q8_0.gguf").count, 0)

        // A partial of the full size but other bytes: dropped, and the file fetched whole.
        let env2 = try environment()
        let blobs2 = hfCache(env2) + "/models--cp2--small/blobs"
        try FileManager.default.createDirectory(atPath: blobs2, withIntermediateDirectories: true)
        try Hub.synthetic(1_048_576, seed: 99).write(to: URL(fileURLWithPath: blobs2 + "/\(sha).incomplete"))
        let r2 = try await pull("hf:cp2/small:Q8_0", env2)
        XCTAssertTrue(r2.downloaded)
        XCTAssertEqual(r2.resumedBytes, 0)
        XCTAssertTrue(sameBytes(r2.path, served))
        XCTAssertEqual(hub.transfers("cp2/small/small-Q8_0.gguf").map { $0["range"] is NSNull }, [true], "one whole transfer, no range")
    }

    /// Two pulls of one model at once: one transfer, and both succeed.
    func testConcurrentPullsShareOneTransfer() async throws {
        let hub = try hub()
        let env = try environment()
        async let a = ModelPuller.pull("hf:trickle-c1/small:Q8_0", environment: env) { _ in }
        async let b = ModelPuller.pull("hf:trickle-c1/small:Q8_0", environment: env) { _ in }
        let (ra, rb) = try await (a, b)
        XCTAssertEqual(ra.path, rb.path)
        XCTAssertEqual(ra.sha256, rb.sha256)
        XCTAssertEqual([ra.downloaded, rb.downloaded].filter { $0 }.count, 1, "one of them transferred, the other waited")
        XCTAssertEqual(hub.transfers("trickle-c1/small/small-Q8_0.gguf").count, 1)
        XCTAssertTrue(sameBytes(ra.path, hub.root + "/small/small-Q8_0.gguf"))
    }

    /// A slow trickle completes; progress still comes at most ~5 times a second, with a rate.
    func testSlowTrickleCompletes() async throws {
        let hub = try hub()
        let env = try environment()
        let recorder = Recorder()
        let r = try await pull("hf:trickleall-s1/tiny", env, recorder)
        XCTAssertTrue(sameBytes(r.path, hub.root + "/tiny/tiny-Q4_K_M.gguf"))
        let events = recorder.all
        XCTAssertGreaterThanOrEqual(events.count, 3, "progress while it trickles: \(events.map(\.completedBytes))")
        XCTAssertLessThanOrEqual(recorder.busiestSecond, 7)
        let rates = events.dropFirst().dropLast().map(\.bytesPerSecond)
        XCTAssertTrue(rates.contains { $0 > 0 }, "\(rates)")
        XCTAssertTrue(rates.allSatisfy { $0 < 2_000_000 }, "the trickle is ~650 KB/s: \(rates)")
    }

    /// Server errors are retried.
    func testServerErrorsAreRetried() async throws {
        let hub = try hub()
        let env = try environment()
        let r = try await pull("hf:error2-e1/small:Q8_0", env)
        XCTAssertTrue(sameBytes(r.path, hub.root + "/small/small-Q8_0.gguf"))
        XCTAssertEqual(hub.requests("error2-e1/small/small-Q8_0.gguf").filter { ($0["status"] as? Int) == 500 }.count, 2)
    }

    // MARK: Refusals

    func testWrongChecksumLeavesNothing() async throws {
        let hub = try hub()
        let env = try environment()
        let e = await failure("hf:badsum-c1/small:Q8_0", env)
        XCTAssertEqual(e.reason, .checksum)
        let sha = try sha256(hub.root + "/small/small-Q8_0.gguf")
        XCTAssertTrue(e.message.contains("expected \(sha)"), e.message)
        XCTAssertTrue(e.message.contains("sha256 is "), e.message)
        let repoDir = hfCache(env) + "/models--badsum-c1--small"
        XCTAssertEqual(listing(repoDir + "/blobs"), [], "no blob and no partial")
        XCTAssertFalse(FileManager.default.fileExists(atPath: repoDir + "/snapshots"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: repoDir + "/refs"))
    }

    /// A gated repository: unauthorized, naming HF_TOKEN; with the token, the pull works and
    /// the token goes to the hub only, not to the CDN.
    func testGatedRepositoryNeedsToken() async throws {
        let hub = try hub()
        let e = await failure("hf:gated-g1/small:Q8_0", try environment())
        XCTAssertEqual(e.reason, .unauthorized)
        XCTAssertEqual(e.status, 401)
        XCTAssertTrue(e.message.contains("HF_TOKEN"), e.message)

        let wrong = await failure("hf:gated-g1/small:Q8_0", try environment(["HF_TOKEN": "not-it"]))
        XCTAssertEqual(wrong.reason, .unauthorized)
        XCTAssertTrue(wrong.message.contains("HF_TOKEN"), wrong.message)

        let r = try await pull("hf:gated-g1/small:Q8_0", try environment(["HF_TOKEN": Hub.token]))
        XCTAssertTrue(sameBytes(r.path, hub.root + "/small/small-Q8_0.gguf"))
        let requests = hub.requests("gated-g1/small/small-Q8_0.gguf")
        let hubSide = requests.filter { ($0["server"] as? String) == "hub" && ($0["status"] as? Int) == 302 }
        let cdnSide = requests.filter { ($0["server"] as? String) == "cdn" }
        XCTAssertFalse(hubSide.isEmpty)
        XCTAssertTrue(hubSide.allSatisfy { $0["auth"] as? Bool == true })
        XCTAssertEqual(cdnSide.count, 1)
        XCTAssertTrue(cdnSide.allSatisfy { $0["auth"] as? Bool == false }, "the token must not follow the redirect to another host")
    }

    func testNotFoundListsWhatExists() async throws {
        let hub = try hub()
        let env = try environment()
        let noRepo = await failure("hf:x/no-such-repo", env)
        XCTAssertEqual(noRepo.reason, .notFound)
        XCTAssertEqual(noRepo.status, 404)

        let noQuant = await failure("hf:x/small:Q5_K_S", env)
        XCTAssertEqual(noQuant.reason, .notFound)
        XCTAssertEqual(noQuant.available, ["Q4_K_M", "Q8_0"])
        XCTAssertTrue(noQuant.message.contains("Q4_K_M, Q8_0"), noQuant.message)

        // Listed, but the file answers 404.
        let missing = await failure("hf:missing-m1/small:Q8_0", env)
        XCTAssertEqual(missing.reason, .notFound)
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.available, ["Q4_K_M", "Q8_0"])

        let noTag = await failure("ollama:http://127.0.0.1:\(hub.port)/library/small:q2_k", env)
        XCTAssertEqual(noTag.reason, .notFound)
        XCTAssertEqual(noTag.available, ["latest", "q4_k_m", "q8_0"])
        let noModel = await failure("ollama:http://127.0.0.1:\(hub.port)/library/nothing-here", env)
        XCTAssertEqual(noModel.reason, .notFound)
        XCTAssertFalse(FileManager.default.fileExists(atPath: env.dataDir + "/models/manifests"))
    }

    /// Plain http:// only to loopback (also after a redirect), at most 10 redirects, and
    /// https:// goes through the proxy the environment names.
    func testInsecureRedirectsAndProxy() async throws {
        let hub = try hub()
        let insecureEndpoint = await failure("hf:x/small", try environment(["HF_ENDPOINT": "http://hub.example.invalid"]))
        XCTAssertEqual(insecureEndpoint.reason, .insecure)
        let insecureRegistry = await failure("ollama:http://registry.example.invalid/library/small", try environment())
        XCTAssertEqual(insecureRegistry.reason, .insecure)

        let env = try environment()
        let downgrade = await failure("hf:insecure-i1/small:Q8_0", env)
        XCTAssertEqual(downgrade.reason, .insecure, downgrade.message)
        XCTAssertEqual(listing(hfCache(env) + "/models--insecure-i1--small/blobs"), [], "nothing written for a refused redirect")

        let loop = await failure("hf:loop-l1/small:Q8_0", env)
        XCTAssertEqual(loop.reason, .network)
        XCTAssertTrue(loop.message.contains("too many redirects"), loop.message)
        // The metadata HEAD follows a same-host redirect: the first and 10 more, then it stops.
        XCTAssertEqual(hub.requests("loop-l1/small/small-Q8_0.gguf").count, 11)

        // https:// to a host that is not loopback goes through HTTPS_PROXY (here a closed
        // port): the connection to the proxy is refused, no name is looked up.
        let proxied = await failure("hf:x/small", try environment(["HF_ENDPOINT": "https://hub.example.invalid"]))
        XCTAssertEqual(proxied.reason, .network)
        XCTAssertTrue(proxied.message.contains("cannot connect"), "expected the proxy's refusal, got: \(proxied.message)")
        XCTAssertFalse(proxied.message.contains("DNS"), "the name was looked up, not sent to the proxy: \(proxied.message)")
        print("PullTests: https through the closed proxy: \(proxied.message)")

        for bad in ["hf:", "hf:onlyorg", "hf:a/b/c", "ollama:", "ollama:a/b/c/d", "lmstudio:x/y", "hf:../x", "ollama:ftp://h/x"] {
            let e = await failure(bad, env)
            XCTAssertEqual(e.reason, .invalidName, bad)
        }
    }

    /// Not enough space: refused before any byte is sent; and a disk that fills during the
    /// transfer (ENOSPC) is diskFull too. A real tmpfs (mounting needs root).
    func testDiskFull() async throws {
        let hub = try hub()
        let mountPoint = hub.dir + "/tmpfs-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint]) == 0 else {
            throw XCTSkip("cannot mount a tmpfs here (needs root)")
        }
        addTeardownBlock { _ = self.run("/bin/umount", ["-l", mountPoint]) }
        let env = try environment(["HF_HUB_CACHE": mountPoint + "/hub"])

        let before = await failure("hf:df1/small:Q4_K_M", env)
        XCTAssertEqual(before.reason, .diskFull, before.message)
        XCTAssertEqual(before.neededBytes, 13_000_000)
        XCTAssertLessThanOrEqual(before.freeBytes ?? .max, 3 << 20)
        XCTAssertTrue(hub.transfers("df1/small/small-Q4_K_M.gguf").isEmpty, "refused before the transfer")

        // Fits at the start; the disk fills while the bytes trickle in.
        let (moving, signal) = AsyncStream<Void>.makeStream()
        let task = Task {
            defer { signal.finish() }
            return try await ModelPuller.pull("hf:trickle-df2/small:Q8_0", environment: env) { p in
                if p.completedBytes > 0 { signal.yield() }
            }
        }
        for await _ in moving { break }
        let filler = open(mountPoint + "/filler", O_WRONLY | O_CREAT, 0o644)
        XCTAssertGreaterThanOrEqual(filler, 0)
        let block = [UInt8](repeating: 0xAB, count: 64 << 10)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)
        let outcome = await task.result
        guard case .failure(let error) = outcome, let during = error as? PullError else { return XCTFail("the pull fit on a full disk") }
        XCTAssertEqual(during.reason, .diskFull, during.message)
        XCTAssertNotNil(during.neededBytes)
        XCTAssertNotNil(during.freeBytes)
    }

    // MARK: Pieces

    func testNames() throws {
        func hf(_ s: String) throws -> PullName.HF? { if case .huggingFace(let h) = try PullName.parse(s) { return h }; return nil }
        func ol(_ s: String) throws -> PullName.Ollama? { if case .ollama(let o) = try PullName.parse(s) { return o }; return nil }
        XCTAssertEqual(try hf("hf:bartowski/Llama-3.2-3B-Instruct-GGUF"), PullName.HF(org: "bartowski", repo: "Llama-3.2-3B-Instruct-GGUF", quant: nil))
        XCTAssertEqual(try hf("hf:a/b:q4_k_m")?.quant, "Q4_K_M")
        XCTAssertEqual(try ol("ollama:llama3.2")?.display, "ollama:llama3.2:latest")
        XCTAssertEqual(try ol("ollama:llama3.2:3b"), PullName.Ollama(scheme: "https", host: "registry.ollama.ai", namespace: "library", name: "llama3.2", tag: "3b"))
        XCTAssertEqual(try ol("ollama:team/model:v1")?.namespace, "team")
        XCTAssertEqual(try ol("ollama:example.com/model")?.host, "example.com")
        XCTAssertEqual(try ol("ollama:example.com:5000/team/model:v1"), PullName.Ollama(scheme: "https", host: "example.com:5000", namespace: "team", name: "model", tag: "v1"))
        XCTAssertEqual(try ol("ollama:http://127.0.0.1:8080/m")?.display, "ollama:127.0.0.1:8080/library/m:latest")
        XCTAssertEqual(HuggingFacePull.quantization(of: "Llama-3.2-3B-Instruct-Q4_K_M.gguf"), "Q4_K_M")
        XCTAssertEqual(HuggingFacePull.quantization(of: "sub/model.Q8_0-00001-of-00003.gguf"), "Q8_0")
        XCTAssertEqual(HuggingFacePull.quantization(of: "Qwen2.5-7B-Instruct-IQ4_XS.gguf"), "IQ4_XS")
        XCTAssertEqual(HuggingFacePull.quantization(of: "model-f16.gguf"), "F16")
        XCTAssertNil(HuggingFacePull.quantization(of: "Qwen2-7B.gguf"))
        XCTAssertEqual(HuggingFacePull.splitInfo("a/m-Q8_0-00002-of-00003.gguf")?.index, 2)
        XCTAssertNil(HuggingFacePull.splitInfo("m-Q8_0.gguf"))
        XCTAssertTrue(PullHTTP.isLoopback("127.0.0.1") && PullHTTP.isLoopback("localhost") && PullHTTP.isLoopback("[::1]"))
        XCTAssertFalse(PullHTTP.isLoopback("127.0.0.1.example.com") || PullHTTP.isLoopback("10.0.0.1"))
    }

    /// The fast hasher (OpenSSL's, where the process has it) agrees with ParlanceHash.SHA256.
    func testHasherAgreesWithReference() {
        var x: UInt64 = 88_172_645_463_325_252
        let data = (0..<300_001).map { _ -> UInt8 in
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            return UInt8(truncatingIfNeeded: x)
        }
        var reference = SHA256()
        reference.update(data)
        let expected = SHA256.hexString(reference.finalize())
        for allow in [true, false] {
            let h = PullHasher(allowOpenSSL: allow)
            var i = 0
            for step in [1, 63, 64, 65, 4096, 100_000] where i < data.count {
                let end = min(data.count, i + step)
                data[i..<end].withUnsafeBytes { h.update($0) }
                i = end
            }
            data[i...].withUnsafeBytes { h.update($0) }
            XCTAssertEqual(h.finalizeHex(), expected, h.implementation)
        }
        #if os(Linux)
        XCTAssertEqual(PullHasher().implementation, "openssl", "FoundationNetworking links libcrypto: the fast path should be found")
        #endif
    }

    /// For the record (PARLANCE_PULL_RATE=1): the pull's rate against curl's for the real
    /// model from the same loopback server, a few rounds each.
    func testRateAgainstCurl() async throws {
        guard ProcessInfo.processInfo.environment["PARLANCE_PULL_RATE"] == "1" else { throw XCTSkip("set PARLANCE_PULL_RATE=1 to measure") }
        let hub = try hub()
        guard let real = hub.realModel else { throw XCTSkip("PARLANCE_DEFAULT_MODEL is not set") }
        let file = (real as NSString).lastPathComponent
        var curl: [Double] = [], curlFile: [Double] = [], ours: [Double] = []
        for round in 0..<5 {
            let t0 = ContinuousClock.now
            XCTAssertEqual(run("/usr/bin/curl", ["-sfL", "--noproxy", "*", "-o", "/dev/null", "http://127.0.0.1:\(hub.port)/rate\(round)/smollm/resolve/main/\(file)"]), 0)
            curl.append(seconds(ContinuousClock.now - t0))
            // curl writing the file (to the same disk as the pull), a fairer baseline: a pull writes and hashes.
            let out = hub.dir + "/curl-\(round).gguf"
            let t2 = ContinuousClock.now
            XCTAssertEqual(run("/usr/bin/curl", ["-sfL", "--noproxy", "*", "-o", out, "http://127.0.0.1:\(hub.port)/ratefile\(round)/smollm/resolve/main/\(file)"]), 0)
            curlFile.append(seconds(ContinuousClock.now - t2))
            try? FileManager.default.removeItem(atPath: out)
            let env = try environment()
            let t1 = ContinuousClock.now
            _ = try await pull("hf:rate\(round)/smollm", env)
            ours.append(seconds(ContinuousClock.now - t1))
            try? FileManager.default.removeItem(atPath: env.home)
        }
        let mb = Double(hub.realSize) / 1e6
        func rates(_ xs: [Double]) -> String { xs.map { String(format: "%.0f", mb / $0) }.joined(separator: " ") }
        print("PullTests rate (MB/s): curl -o /dev/null [\(rates(curl))]; curl -o file [\(rates(curlFile))]; pull [\(rates(ours))]")
        print(String(format: "PullTests rate: medians: curl -o /dev/null %.0f MB/s, curl -o file %.0f MB/s, pull %.0f MB/s; pull/curl %.2f, pull/curl-to-file %.2f",
                     mb / median(curl), mb / median(curlFile), mb / median(ours), median(curl) / median(ours), median(curlFile) / median(ours)))
    }

    func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

    @discardableResult
    func run(_ path: String, _ args: [String]) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }
}

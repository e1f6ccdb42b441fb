import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// Long prefixes' KV states saved under the cache dir: restored after a restart instead of
/// evaluated again (token counts reported by the engine prove it); a corrupt state file is
/// dropped with a warning and the request still answers.
final class KVStateTests: XCTestCase {
    /// Instructions long enough (well over 256 tokens) to be worth a state file.
    static let instructions = "You answer questions about the Harbor Street project. "
        + (1...40).map { "Fact \($0): the harbor crane number \($0) lifts \($0 * 3) tonnes and was serviced in week \($0 % 52 + 1)." }.joined(separator: " ")

    func daemon(_ cache: String, _ args: [String] = []) throws -> DaemonProcess {
        let d = try DaemonProcess(args: args, env: ["PARLANCE_CACHE_DIR": cache], isolatedCaches: false)
        _ = d.initialize()
        return d
    }

    /// The usage of a new session's prewarm (or, with `prewarm` false, of its first turn).
    func usageOfFirstTurn(_ d: DaemonProcess, prewarm: Bool, instructions: String = KVStateTests.instructions) throws -> JSONValue {
        let sid = try XCTUnwrap(d.call("session/create", ["instructions": .string(instructions)]).result?["sessionId"])
        if prewarm {
            let r = d.call("session/prewarm", ["sessionId": sid])
            return try XCTUnwrap(r.result?["usage"], "\(r)")
        }
        let r = d.call("session/respond", ["sessionId": sid, "prompt": "Which crane lifts 30 tonnes?", "options": ["maxTokens": 8, "temperature": 0]])
        return try XCTUnwrap(r.result?["usage"], "\(r)")
    }

    func stateFiles(_ cache: String) -> [String] {
        let root = cache + "/kv"
        let dirs = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return dirs.flatMap { dir in
            ((try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(dir)")) ?? []).map { "\(root)/\(dir)/\($0)" }
        }.sorted()
    }

    func testStateSurvivesARestartAndACorruptFileIsDropped() throws {
        let cache = NSTemporaryDirectory() + "parlance-kv-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }

        // First daemon: the prewarmed instructions are evaluated and saved.
        var d = try daemon(cache)
        let cold = try usageOfFirstTurn(d, prewarm: true)
        XCTAssertEqual(cold["cachedPromptTokens"]?.intValue, 0, "\(cold)")
        let promptTokens = try XCTUnwrap(cold["promptTokens"]?.intValue)
        XCTAssertGreaterThan(promptTokens, 300)
        _ = d.call("shutdown")
        d.notify("exit")
        XCTAssertEqual(d.waitExit(), 0)
        let files = stateFiles(cache)
        XCTAssertEqual(files.filter { $0.hasSuffix(".kv") }.count, 1, "\(files)")
        XCTAssertEqual(files.filter { $0.hasSuffix(".tokens") }.count, 1, "\(files)")
        for f in files {
            let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: f)[.posixPermissions] as? Int)
            XCTAssertEqual(mode & 0o777, 0o600, f)
        }

        // Second daemon: nothing in memory, the instructions come back from disk.
        d = try daemon(cache)
        let warm = try usageOfFirstTurn(d, prewarm: false)
        let cached = try XCTUnwrap(warm["cachedPromptTokens"]?.intValue)
        XCTAssertGreaterThan(try XCTUnwrap(warm["promptTokens"]?.intValue), promptTokens)
        XCTAssertGreaterThanOrEqual(cached, promptTokens - 1, "restored from the state file: \(warm)")
        _ = d.call("shutdown")
        d.notify("exit")
        XCTAssertEqual(d.waitExit(), 0)

        // A corrupt state file: dropped (logged), the request evaluates the prompt afresh.
        let kv = try XCTUnwrap(stateFiles(cache).first { $0.hasSuffix(".kv") })
        try Data("not a llama.cpp state file".utf8).write(to: URL(fileURLWithPath: kv))
        let log = cache + "/daemon.log"
        d = try daemon(cache, ["--log-file", log])
        let afresh = try usageOfFirstTurn(d, prewarm: false)
        XCTAssertEqual(afresh["cachedPromptTokens"]?.intValue, 0, "\(afresh)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: kv), "the corrupt file is removed")
        let logged = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        XCTAssertTrue(logged.contains("[warning] dropping KV state file \(kv)"), logged)
        _ = d.call("shutdown")
        d.notify("exit")
        XCTAssertEqual(d.waitExit(), 0)
    }

    /// The store keeps to `--kv-state-bytes`: a second prefix that would overflow it
    /// replaces the least recently used one.
    func testStateFilesKeepToTheirByteLimit() throws {
        let cache = NSTemporaryDirectory() + "parlance-kv-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        var d = try daemon(cache)
        _ = try usageOfFirstTurn(d, prewarm: true)
        _ = d.call("shutdown")
        d.notify("exit")
        XCTAssertEqual(d.waitExit(), 0)
        let first = stateFiles(cache)
        let bytes = try first.reduce(0) { $0 + (try XCTUnwrap(FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int)) }
        XCTAssertGreaterThan(bytes, 1 << 20)

        // Room for one entry and a half: the second prefix evicts the first.
        d = try daemon(cache, ["--kv-state-bytes", String(bytes * 3 / 2)])
        _ = try usageOfFirstTurn(d, prewarm: true, instructions: "Another project entirely. " + KVStateTests.instructions)
        _ = d.call("shutdown")
        d.notify("exit")
        XCTAssertEqual(d.waitExit(), 0)
        let second = stateFiles(cache)
        XCTAssertEqual(second.count, 2, "\(second)")
        XCTAssertTrue(Set(second).isDisjoint(with: first), "the older entry went: \(first) -> \(second)")
    }
}

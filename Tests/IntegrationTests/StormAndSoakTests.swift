import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// Cancellation storms, soak, and process hygiene.
final class StormAndSoakTests: XCTestCase {
    /// 200 streaming requests; a third cancelled before they start, others at random
    /// points: every id gets exactly one response, and every slot comes back.
    func testCancellationStorm() throws {
        let d = try DaemonProcess()
        _ = d.initialize()
        var rng = SystemRandomNumberGenerator()
        let n = 200
        var ids: [Int] = []
        for i in 0..<n {
            let sid = d.call("session/create", ["instructions": "Reply briefly."]).result?["sessionId"] ?? .null
            let id = d.makeID()
            if i % 3 == 0 { d.notify("$/cancelRequest", ["id": .int(id)]) }  // cancelled before it starts
            d.start("session/respond", ["sessionId": sid, "prompt": .string("Say something about \(i)."), "workDoneToken": .string("storm-\(i)"),
                                        "options": ["maxTokens": .int(Int.random(in: 4...24, using: &rng)), "seed": .int(i)]], id: id)
            ids.append(id)
            if i % 3 == 1, Bool.random(using: &rng) { d.notify("$/cancelRequest", ["id": .int(ids[Int.random(in: 0..<ids.count, using: &rng)])]) }
        }
        for id in ids.shuffled(using: &rng).prefix(60) {
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.05, using: &rng))
            d.notify("$/cancelRequest", ["id": .int(id)])
        }
        let deadline = Date().addingTimeInterval(240)
        var outcomes: [Int: Int] = [:]
        for id in ids {
            let r = try XCTUnwrap(d.response(id, timeout: max(1, deadline.timeIntervalSinceNow)), "request \(id) never answered (deadlock?)")
            if r.result != nil { outcomes[0, default: 0] += 1 } else {
                XCTAssertEqual(r.errorCode, -32800, "\(r)")
                outcomes[-32800, default: 0] += 1
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        for id in ids { XCTAssertNil(d.waitFor(timeout: 0.01) { $0["id"] == .int(id) }, "duplicate response for \(id)") }
        XCTAssertEqual(outcomes.values.reduce(0, +), n)
        XCTAssertGreaterThanOrEqual(outcomes[-32800] ?? 0, n / 3)
        let engine = try XCTUnwrap(d.call("model/status").result?["engine"])
        XCTAssertEqual(engine["freeSlots"], engine["sequenceSlots"], "slot leak: \(engine)")
        XCTAssertEqual(engine["activeRequests"], 0)
        XCTAssertEqual(engine["queuedRequests"], 0)
    }

    /// Mixed requests over one daemon: RSS after warm-up stays flat. `make soak` runs
    /// 2,000; the test command runs a shorter form.
    func testSoak() throws {
        let total = ProcessInfo.processInfo.environment["PARLANCE_SOAK"] == "full" ? 2000 : 300
        let d = try DaemonProcess()
        _ = d.initialize()
        let sample = try String(contentsOf: DaemonProcess.repoRoot.appendingPathComponent("Samples/podcast-sample.srt"), encoding: .utf8)
        func round(_ i: Int) {
            switch i % 10 {
            case 0: XCTAssertNotNil(d.call("document/open", ["uri": .string("soak-\(i % 40)"), "text": .string(sample)]).result)
            case 1: _ = d.call("document/close", ["uri": .string("soak-\((i - 1) % 40)")])
            case 2:
                let sid = d.call("session/create", ["instructions": "Be brief."]).result?["sessionId"] ?? .null
                XCTAssertNotNil(d.call("session/respond", ["sessionId": sid, "prompt": .string("Word \(i)?"), "options": ["maxTokens": 3]]).result)
                _ = d.call("session/close", ["sessionId": sid])
            case 3: XCTAssertNotNil(d.call("analysis/summarize", ["text": "Alice: ship on Monday. Bob: fine, I will tell support.", "maxTokens": 200]).result)
            case 4: XCTAssertEqual(d.call("nope/\(i)").errorCode, -32601)
            case 5: XCTAssertEqual(d.call("session/respond", ["sessionId": "gone", "prompt": "x"]).errorCode, -32004)
            case 6: XCTAssertNotNil(d.call("document/list").result)
            default: XCTAssertNotNil(d.call("model/status").result)
            }
        }
        for i in 0..<min(200, total / 2) { round(i) }
        let warm = try XCTUnwrap(currentRSS(d.process.processIdentifier))
        for i in 0..<total { round(i) }
        let after = try XCTUnwrap(currentRSS(d.process.processIdentifier))
        let growth = after - warm
        print("soak: \(total) requests, RSS \(warm >> 20) MB -> \(after >> 20) MB (growth \(growth >> 10) KB)")
        XCTAssertLessThanOrEqual(growth, 10 << 20, "RSS grew \(growth >> 20) MB")
    }

    func currentRSS(_ pid: Int32) -> Int? {
        guard let s = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return s.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
    }

    // MARK: process hygiene

    func startGenerating(_ d: DaemonProcess) {
        _ = d.initialize()
        let sid = d.call("session/create", ["instructions": "Tell long stories."]).result?["sessionId"] ?? .null
        d.start("session/respond", ["sessionId": sid, "prompt": "A very long story, please.", "workDoneToken": "h", "options": ["maxTokens": 500]])
        _ = d.waitFor(timeout: 60) { $0["params"]?["value"]?["delta"] != nil }
    }

    func testStdinClosedMidStreamExitsWithinOneSecond() throws {
        let d = try DaemonProcess()
        startGenerating(d)
        let t0 = Date()
        d.closeInput()
        XCTAssertEqual(d.waitExit(timeout: 5), 0)
        XCTAssertLessThan(Date().timeIntervalSince(t0), 1.0)
    }

    func testSigtermAndSigintExitCleanly() throws {
        for sig in [SIGTERM, SIGINT] {
            let d = try DaemonProcess()
            startGenerating(d)
            let t0 = Date()
            kill(d.process.processIdentifier, sig)
            XCTAssertEqual(d.waitExit(timeout: 5), 0, "signal \(sig)")
            XCTAssertLessThan(Date().timeIntervalSince(t0), 1.0)
        }
    }

    func testCorruptCacheFileIsIgnoredAndReplaced() throws {
        let dir = NSTemporaryDirectory() + "parlance-cache-\(UUID().uuidString)"
        let text = "Maya: the release moves to May. Theo: then docs need an update by Friday."
        do {
            let d = try DaemonProcess(env: ["PARLANCE_CACHE_DIR": dir], isolatedCaches: false)
            _ = d.initialize()
            XCTAssertEqual(d.call("analysis/summarize", ["text": .string(text)]).result?["cached"], false)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/analysis").filter { $0.hasSuffix(".json") }
        XCTAssertFalse(files.isEmpty)
        for f in files {
            let attrs = try FileManager.default.attributesOfItem(atPath: dir + "/analysis/" + f)
            XCTAssertEqual((attrs[.posixPermissions] as? Int) ?? 0, 0o600)
            try Data("{ truncated".utf8).write(to: URL(fileURLWithPath: dir + "/analysis/" + f))
        }
        let d = try DaemonProcess(env: ["PARLANCE_CACHE_DIR": dir], isolatedCaches: false)
        _ = d.initialize()
        let r = d.call("analysis/summarize", ["text": .string(text)])
        XCTAssertEqual(r.result?["cached"], false, "corrupt entry ignored, recomputed: \(r)")
        let again = DaemonProcess.self
        _ = again
        let d2 = try DaemonProcess(env: ["PARLANCE_CACHE_DIR": dir], isolatedCaches: false)
        _ = d2.initialize()
        XCTAssertEqual(d2.call("analysis/summarize", ["text": .string(text)]).result?["cached"], true, "replaced and served after restart")
    }
}

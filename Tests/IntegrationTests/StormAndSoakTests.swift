import Foundation
import ParlanceClient
import ParlanceJSON
import ParlanceSchema
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
        // Cancels at random points: the jitter only spreads the sending; no assertion
        // depends on where a cancel lands.
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
        XCTAssertEqual(outcomes.values.reduce(0, +), n)
        XCTAssertGreaterThanOrEqual(outcomes[-32800] ?? 0, n / 3)
        // Every job has settled (no active or queued request, every slot free) once this
        // status is answered; a response to a later request on the same pipe is read after
        // anything written before it, so a duplicate would be in the inbox by now.
        let engine = try XCTUnwrap(d.call("model/status").result?["engine"])
        XCTAssertEqual(engine["freeSlots"], engine["sequenceSlots"], "slot leak: \(engine)")
        XCTAssertEqual(engine["activeRequests"], 0)
        XCTAssertEqual(engine["queuedRequests"], 0)
        XCTAssertNotNil(d.call("model/status").result, "the daemon stopped answering after the storm")
        for id in ids { XCTAssertNil(d.waitFor(timeout: 0) { $0["id"] == .int(id) }, "duplicate response for \(id)") }
    }

    /// Mixed requests over one daemon, every method, documents opened, changed and closed:
    /// RSS after warm-up grows at most 10 MB, the document and analysis caches stay within
    /// the byte limits the daemon was started with, and every result validates against its
    /// method's result schema from the daemon's own `rpc.discover`. `make soak` runs 2,000
    /// requests after the warm-up; the test command runs a shorter form: 72 requests, three
    /// cycles of the 24, document/close included. One attempt per result: what is soaked is
    /// memory and bounds, not the checks' retries.
    func testSoak() throws {
        let total = ProcessInfo.processInfo.environment["PARLANCE_SOAK"] == "full" ? 2000 : 48
        let documentLimit = 64 << 10, analysisLimit = 16 << 10
        let d = try DaemonProcess(args: ["--document-cache-bytes", String(documentLimit), "--analysis-cache-bytes", String(analysisLimit)])
        _ = d.initialize()
        var schemas: [String: JSONValue] = [:]
        for m in d.call("rpc.discover").result?["methods"]?.arrayValue ?? [] {
            if let name = m["name"]?.stringValue, let schema = m["result"]?["schema"] { schemas[name] = schema }
        }
        XCTAssertGreaterThanOrEqual(schemas.count, 28)
        var counts: [String: Int] = [:]
        var seconds: [String: TimeInterval] = [:]
        var peak = (documents: 0, analyses: 0)

        /// One request; its result must validate (or its error carry `code`).
        @discardableResult func send(_ method: String, _ params: JSONValue? = nil, error code: Int? = nil) -> JSONValue? {
            counts[method.hasPrefix("nope/") ? "nope/*" : method, default: 0] += 1  // unknown methods count as one
            let t0 = Date()
            let r = d.call(method, params)
            seconds[method.hasPrefix("nope/") ? "nope/*" : method, default: 0] += Date().timeIntervalSince(t0)
            if let code {
                XCTAssertEqual(r.errorCode, code, "\(method): \(r)")
                XCTAssertFalse((r["error"]?["message"]?.stringValue ?? "").isEmpty, "\(method): error without a message")
                return nil
            }
            guard let result = r.result else {
                XCTFail("\(method) \(params ?? .null) failed: \(r)")
                return nil
            }
            XCTAssertEqual(SchemaValidator.validate(result, against: schemas[method] ?? false), [], "\(method) result: \(result)")
            return result
        }
        let variants = (0..<3).map { v in
            """
            1
            00:00:0\(v),000 --> 00:00:05,000
            Dana: Welcome back. Today we test the \(["river", "garden", "harbor"][v]) sensors before the launch.

            2
            00:00:05,000 --> 00:00:11,000
            Lee: The calibration took two weeks, and the drift is now under one percent.

            3
            00:00:11,000 --> 00:00:17,000
            Dana: Next we ship the firmware to the Oslo team on Monday.

            4
            00:00:17,000 --> 00:00:24,000
            Lee: And we write a short guide so support can answer customer questions.

            """
        }
        let questions = ["When does the firmware ship?", "How long did calibration take?", "Who gets the guide?"]
        let tones = ["formal", "casual", "empathetic", "direct", "diplomatic"]
        let audiences = ["executive", "peer", "client", "team", "public"]
        let huge = String(repeating: "Too big for the document cache. ", count: documentLimit / 30)
        var session: JSONValue = .null

        func round(_ i: Int) {
            let cycle = i / 24, uri = JSONValue.string("soak-\(cycle % 8)")
            let text = variants[cycle % 3]
            switch i % 24 {
            case 0: send("document/open", ["uri": uri, "text": .string(text)])
            case 1: send("analysis/summarize", ["uri": uri, "maxAttempts": 1])  // compare (case 7) reads this summary
            case 2: send("analysis/tags", ["uri": uri, "maxAttempts": 1])
            case 3: send("analysis/entities", ["uri": uri, "maxAttempts": 1])
            case 4: send("analysis/highlights", ["uri": uri, "maxAttempts": 1])
            case 5: send("analysis/content", ["uri": uri, "maxAttempts": 1])
            case 6: send("analysis/worthIt", ["uri": uri, "comments": ["Great calibration detail.", "Ship it already!"], "maxAttempts": 1])
            case 7: send("analysis/compare", ["documents": [["uri": uri], ["text": .string(variants[(cycle + 1) % 3]), "title": "Next"]], "maxAttempts": 1])
            case 8: send("ask/stream", ["uri": uri, "question": .string(questions[cycle % 3]), "maxTokens": 64, "maxAttempts": 1, "workDoneToken": "soak"])
            case 9: session = send("session/create", ["instructions": "Answer in a few words."])?["sessionId"] ?? .null
            case 10: send("session/respond", ["sessionId": session, "prompt": .string("Name a color, \(i)."), "options": ["maxTokens": 4]])
            case 11: send("session/transcript", ["sessionId": session])
            case 12: send("session/close", ["sessionId": session])
            case 13:
                send("compose/variations", ["text": "Dana, the sensor report is late again and the launch slips a week. Please send it by Friday.",
                                            "tones": [.string(tones[cycle % 5])], "audience": .string(audiences[(cycle / 5) % 5]),
                                            "maxTokens": 48, "seed": 3, "maxAttempts": 1, "ephemeral": .bool(cycle % 2 == 0)])
            case 14: send("compose/history/list", ["limit": 3])
            case 15: send("document/list")
            case 16: send("document/change", ["uri": uri, "text": .string(variants[(cycle + 1) % 3])])
            case 17: send("nope/\(i)", error: -32601)
            case 18: send("session/respond", ["sessionId": "gone", "prompt": "x"], error: -32004)
            case 19: send("document/open", ["uri": "soak-huge", "text": .string(huge)], error: -32602)
            case 20: send("analysis/summarize", ["text": "Alice: ship on Monday. Bob: fine, I will tell support.", "maxTokens": 200, "maxAttempts": 1])
            case 21:
                if cycle >= 2 { send("document/close", ["uri": .string("soak-\((cycle + 6) % 8)")]) } else { send("rpc.discover") }
            default:
                let caches = send("model/status")?["caches"]
                let docBytes = caches?["documentBytes"]?.intValue ?? .max, analysisBytes = caches?["analysisBytes"]?.intValue ?? .max
                peak = (max(peak.documents, docBytes), max(peak.analyses, analysisBytes))
                XCTAssertLessThanOrEqual(docBytes, documentLimit, "document cache over its limit: \(caches ?? .null)")
                XCTAssertLessThanOrEqual(analysisBytes, analysisLimit, "analysis cache over its limit: \(caches ?? .null)")
            }
        }
        let warmUp = min(240, total / 2)
        for i in 0..<warmUp { round(i) }
        let warm = try XCTUnwrap(residentMemory(d.process.processIdentifier))
        for i in warmUp..<(warmUp + total) { round(i) }
        let after = try XCTUnwrap(residentMemory(d.process.processIdentifier))
        let growth = after.anon - warm.anon
        let sent = counts.values.reduce(0, +)
        print("soak: \(sent) requests (\(total) after a \(warmUp)-request warm-up) over \(counts.count) methods; RSS \(warm.total >> 20) MB -> \(after.total >> 20) MB "
              + "(anonymous \(warm.anon >> 10) -> \(after.anon >> 10) KB, growth \(growth >> 10) KB; file-backed \(warm.file >> 10) -> \(after.file >> 10) KB); "
              + "peak cache bytes: documents \(peak.documents)/\(documentLimit), analyses \(peak.analyses)/\(analysisLimit)")
        print("soak: seconds by method: " + seconds.sorted { $0.value > $1.value }.prefix(8).map { "\($0.key) \(String(format: "%.1f", $0.value))" }.joined(separator: ", "))
        // What a leak grows is anonymous memory. The file-backed part (the model's mapped
        // weights) is resident as the page cache lets it be, which the daemon does not decide.
        // A fresh clone's soak once measured 306 -> 320 MB in all, where every other run grows
        // 1-3 MB; which part grew was not recorded then, and the line above prints both now.
        XCTAssertLessThanOrEqual(growth, 10 << 20, "anonymous memory grew \(growth >> 20) MB")
        XCTAssertGreaterThan(peak.analyses, analysisLimit / 2, "the soak never filled the analysis cache, so its limit went untested")
        let engine = try XCTUnwrap(d.call("model/status").result?["engine"])
        XCTAssertEqual(engine["freeSlots"], engine["sequenceSlots"], "slot leak: \(engine)")
    }

    /// A client that never closes sessions cannot grow the daemon without bound: past
    /// 1,024 the least recently used idle session is closed.
    func testOpenSessionsAreBounded() throws {
        let d = try DaemonProcess()
        _ = d.initialize()
        let ids = (0..<1030).map { _ in d.call("session/create").result?["sessionId"] ?? .null }
        XCTAssertEqual(Set(ids.compactMap(\.stringValue)).count, 1030)
        XCTAssertEqual(d.call("model/status").result?["caches"]?["sessions"], 1024)
        XCTAssertEqual(d.call("session/transcript", ["sessionId": ids[0]]).errorCode, -32004, "the oldest session should be closed")
        XCTAssertNotNil(d.call("session/transcript", ["sessionId": ids[1029]]).result)
    }

    /// The process's resident memory in bytes, in all and split into anonymous and file-backed pages.
    func residentMemory(_ pid: Int32) -> (total: Int, anon: Int, file: Int)? {
        guard let s = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            s.split(separator: "\n").first { $0.hasPrefix(name + ":") }?.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        guard let total = field("VmRSS"), let anon = field("RssAnon"), let file = field("RssFile") else { return nil }
        return (total, anon, file)
    }

    // MARK: process hygiene

    /// Starts a long generation and returns its id once its first text has streamed.
    func startGenerating(_ d: DaemonProcess, maxTokens: Int = 500) throws -> Int {
        _ = d.initialize()
        let sid = d.call("session/create", ["instructions": "Tell long stories."]).result?["sessionId"] ?? .null
        let id = d.start("session/respond", ["sessionId": sid, "prompt": "A very long story, please.", "workDoneToken": "h", "options": ["maxTokens": .int(maxTokens)]])
        XCTAssertNotNil(d.waitFor(timeout: 300) { $0["params"]?["value"]?["delta"] != nil }, "no streamed text before stopping the daemon")
        return id
    }

    /// The daemon exited with code 0 and did not finish the generation first: the request
    /// in flight never got a result (it was cancelled, answered -32800 or not at all).
    func assertExitedMidStream(_ d: DaemonProcess, _ id: Int, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        // Its response, or the end of the daemon's output, whichever comes first.
        let r = d.waitFor(timeout: 300) { $0["id"] == .int(id) }
        XCTAssertEqual(d.waitExit(timeout: 300), 0, what, file: file, line: line)
        XCTAssertNil(r?.result, "\(what): the generation ran to its end before the exit: \(String(describing: r))", file: file, line: line)
        if let r { XCTAssertEqual(r.errorCode, -32800, "\(what): \(r)", file: file, line: line) }
    }

    /// End of input drains: the generation in flight runs to its end, is answered, then the
    /// daemon exits 0 (a pipe keeps every answer).
    func testStdinClosedMidStreamFinishesTheGenerationThenExits() throws {
        let d = try DaemonProcess()
        let id = try startGenerating(d, maxTokens: 64)
        d.closeInput()
        let r = d.waitFor(timeout: 300) { $0["id"] == .int(id) }
        XCTAssertNotNil(r?.result, "end of input: the request in flight was not answered with its result: \(String(describing: r))")
        XCTAssertEqual(d.waitExit(timeout: 300), 0)
    }

    func testSigtermAndSigintExitCleanly() throws {
        for sig in [SIGTERM, SIGINT] {
            let d = try DaemonProcess()
            let id = try startGenerating(d)
            kill(d.process.processIdentifier, sig)
            assertExitedMidStream(d, id, "signal \(sig)")
        }
    }

    func testCorruptCacheFileIsIgnoredAndReplaced() throws {
        let dir = NSTemporaryDirectory() + "parlance-cache-\(UUID().uuidString)"
        let text = "Maya: the release moves to May. Theo: then docs need an update by Friday."
        // One short attempt: what is under test is the cache file, not the summary.
        let params: JSONValue = ["text": .string(text), "maxTokens": 160, "maxAttempts": 1]
        do {
            let d = try DaemonProcess(env: ["PARLANCE_CACHE_DIR": dir], isolatedCaches: false)
            _ = d.initialize()
            XCTAssertEqual(d.call("analysis/summarize", params).result?["cached"], false)
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
        let r = d.call("analysis/summarize", params)
        XCTAssertEqual(r.result?["cached"], false, "corrupt entry ignored, recomputed: \(r)")
        let d2 = try DaemonProcess(env: ["PARLANCE_CACHE_DIR": dir], isolatedCaches: false)
        _ = d2.initialize()
        XCTAssertEqual(d2.call("analysis/summarize", params).result?["cached"], true, "replaced and served after restart")
    }
}

import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// Many long requests at once: every one answered, none with a false context overflow, a
/// shared document evaluated once, no decode that finds the KV cache full, no crash. One
/// daemon for the class, logging to a file the tests read. Its context is 2,048 tokens and a
/// document about 620: the pressure of 1,200-token documents on the default 4,096 (sixteen
/// questions on four documents need more cells than there are), at about half the prompt work. Questions are answered in at most
/// 64 tokens and one attempt: what is under test is the prompts (their sharing, their KV
/// cells), not the answers' length or their checks. The fourteen-request mix keeps its
/// defaults: it is the load that once crashed the engine.
final class ConcurrencyTests: XCTestCase {
    nonisolated(unsafe) static var shared: DaemonProcess!
    static let context = 2048
    static let log = NSTemporaryDirectory() + "parlance-concurrency-\(UUID().uuidString).log"

    override class func setUp() {
        shared = try! DaemonProcess(args: ["--ctx", String(context), "--log-file", log, "--log-level", "warning"])
        _ = shared.initialize()
    }
    override class func tearDown() {
        shared = nil
        try? FileManager.default.removeItem(atPath: log)
    }
    var d: DaemonProcess { ConcurrencyTests.shared }

    /// About 620 prompt tokens per question (20 cues): three tenths of the context, as a
    /// 39-cue podcast episode is of the default one.
    func open(_ uri: String, cues: Int = 20, seed: Int = 0) throws -> Int {
        var text = LongTranscript.srt(cues: cues + seed)
        if seed > 0 { text = text.components(separatedBy: "\n\n").dropFirst(seed).joined(separator: "\n\n") }
        let info = try XCTUnwrap(d.call("document/open", ["uri": .string(uri), "text": .string(text)]).result)
        return try XCTUnwrap(info["tokens"]?.intValue)
    }

    static let questions: [String] = LongTranscript.topics.flatMap { t in
        ["What do they say about \(t.name)?", "Who \(t.verbs[0]) \(t.objects[0])?"]
    }

    /// Sends every request in one write and returns the responses in order.
    func together(_ requests: [(String, JSONValue)]) throws -> [JSONValue] {
        let rs = requests.map { d.request($0.0, $0.1) }
        d.send(together: rs.map(\.message))
        return try rs.map { try XCTUnwrap(d.response($0.id, timeout: 900), "no answer to \($0.message)") }
    }

    func assertAllAnswered(_ responses: [JSONValue], file: StaticString = #filePath, line: UInt = #line) {
        for r in responses {
            XCTAssertNotNil(r.result, "\(r)", file: file, line: line)
            XCTAssertNotEqual(r["error"]?["data"]?["error"], "exceededContextWindowSize", "a false context overflow: \(r)", file: file, line: line)
        }
    }

    /// Every request answered, the engine goes idle: a generation a check stopped while it
    /// streamed (`StreamWatch`) may be answered before the engine's next step drops it.
    func assertEngineIdleAndLogClean(file: StaticString = #filePath, line: UInt = #line) throws {
        var engine = try XCTUnwrap(d.call("model/status").result?["engine"])
        let deadline = Date().addingTimeInterval(60)
        while engine["activeRequests"] != 0 || engine["freeSlots"] != engine["sequenceSlots"], Date() < deadline {
            engine = try XCTUnwrap(d.call("model/status").result?["engine"])
        }
        XCTAssertEqual(engine["freeSlots"], engine["sequenceSlots"], file: file, line: line)
        XCTAssertEqual(engine["activeRequests"], 0, file: file, line: line)
        XCTAssertEqual(engine["queuedRequests"], 0, file: file, line: line)
        let log = (try? String(contentsOfFile: ConcurrencyTests.log, encoding: .utf8)) ?? ""
        XCTAssertFalse(log.contains("failed to find a memory slot"), "llama_decode found the KV cache full", file: file, line: line)
        XCTAssertFalse(log.contains("KV cache accounting was wrong"), file: file, line: line)
    }

    func testEightQuestionsOnOneLongDocumentShareItsEvaluation() throws {
        let uri = "file:///eight.srt"
        let docTokens = try open(uri)
        let rs = try together(ConcurrencyTests.questions.prefix(8).map { ("ask/stream", ["uri": .string(uri), "question": .string($0), "maxTokens": 64, "maxAttempts": 1]) })
        assertAllAnswered(rs)
        // The document is evaluated once: every other question copies it.
        let evaluatedWhole = rs.filter { r in
            let u = r.result?["usage"]
            return (u?["cachedPromptTokens"]?.intValue ?? 0) < docTokens / 2 && (u?["promptTokens"]?.intValue ?? 0) > docTokens
        }
        XCTAssertLessThanOrEqual(evaluatedWhole.count, 1, rs.map { "\($0.result?["usage"] ?? .null)" }.joined(separator: "\n"))
        try assertEngineIdleAndLogClean()
    }

    func testSixteenQuestionsOnOneLongDocument() throws {
        let uri = "file:///sixteen.srt"
        _ = try open(uri)
        let rs = try together(ConcurrencyTests.questions.prefix(16).map { ("ask/stream", ["uri": .string(uri), "question": .string("\($0) Briefly."), "maxTokens": 64, "maxAttempts": 1]) })
        assertAllAnswered(rs)
        try assertEngineIdleAndLogClean()
    }

    func testSixteenQuestionsAcrossFourDocuments() throws {
        let uris = (0..<4).map { "file:///doc-\($0).srt" }
        for (i, u) in uris.enumerated() { _ = try open(u, seed: i * 3) }
        let rs = try together((0..<16).map { k in
            ("ask/stream", ["uri": .string(uris[k % 4]), "question": .string(ConcurrencyTests.questions[k]), "maxTokens": 64, "maxAttempts": 1])
        })
        assertAllAnswered(rs)
        try assertEngineIdleAndLogClean()
    }

    /// The request mix that once spun the engine for minutes and then crashed it (SIGSEGV).
    func testFourteenMixedRequestsOnOneDocument() throws {
        let uri = "file:///fourteen.srt"
        _ = try open(uri, seed: 1)
        var requests: [(String, JSONValue)] = [("analysis/summarize", ["uri": .string(uri)]), ("analysis/highlights", ["uri": .string(uri)])]
        requests += ConcurrencyTests.questions.suffix(12).map { ("ask/stream", ["uri": .string(uri), "question": .string($0)]) }
        let rs = try together(requests)
        assertAllAnswered(rs)
        XCTAssertTrue(d.isRunning)
        try assertEngineIdleAndLogClean()
    }

    /// A request that can never fit gets the real numbers at once; the others still run.
    func testARequestThatCannotFitIsRefusedWithTrueNumbers() throws {
        let sid = try XCTUnwrap(d.call("session/create", [:]).result?["sessionId"]?.stringValue)
        let long = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 150)  // ~1,500 tokens
        let rs = try together([
            ("session/respond", ["sessionId": .string(sid), "prompt": .string(long), "options": ["maxTokens": 2000]]),
            ("ask/stream", ["text": .string(LongTranscript.srt(cues: 12)), "question": "What does the beekeeper do?"]),
        ])
        XCTAssertEqual(rs[0]["error"]?["data"]?["error"], "exceededContextWindowSize")
        let data = try XCTUnwrap(rs[0]["error"]?["data"])
        XCTAssertGreaterThan((data["promptTokens"]?.intValue ?? 0) + (data["maxTokens"]?.intValue ?? 0), ConcurrencyTests.context, "\(data)")
        XCTAssertEqual(data["contextSize"]?.intValue, ConcurrencyTests.context, "\(data)")
        XCTAssertNotNil(rs[1].result)
    }
}

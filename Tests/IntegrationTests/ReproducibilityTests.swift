import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// What Parlance promises for the same input, seed, model and options: with
/// `deterministic: true`, identical output in a fresh daemon, after other work, and while
/// other requests run. (Without it, batching beside other requests and reused prefixes
/// may change the numbers, and so sometimes the text: see the README.)
final class ReproducibilityTests: XCTestCase {
    static let uri = "file:///repro.srt"
    static let other = "file:///other.srt"

    /// The requests whose output must not change: answers, a story, rewrites. One attempt
    /// each: a retry is one more generation (the next seed, a stricter prompt), no less
    /// reproducible than the first, and retries in three daemons took a fifth of this test.
    func outputs(_ d: DaemonProcess, whileRunning background: [(String, JSONValue)] = []) throws -> [String] {
        let sid = try XCTUnwrap(d.call("session/create", ["instructions": "You are a storyteller."]).result?["sessionId"]?.stringValue)
        let load = background.map { d.start($0.0, $0.1) }
        let asks = ["What does the beekeeper protect?", "What does the telescope track?"].map { q in
            d.start("ask/stream", ["uri": .string(Self.uri), "question": .string(q), "maxTokens": 64, "temperature": 0.8, "seed": 11,
                                   "maxAttempts": 1, "deterministic": true])
        }
        let story = d.start("session/respond", ["sessionId": .string(sid), "prompt": "Tell a short story about a lighthouse.",
                                                "options": ["maxTokens": 32, "temperature": 0.9, "seed": 5, "deterministic": true]])
        let rewrite = d.start("compose/variations", ["text": "We cannot ship on Friday because two tests fail. Next Tuesday works.",
                                                     "tones": ["casual", "formal"], "maxTokens": 48, "seed": 9, "maxAttempts": 1, "deterministic": true,
                                                     "ephemeral": true])
        var out: [String] = []
        for id in asks {
            let answer = d.response(id)
            let r = try XCTUnwrap(answer?.result, "ask \(id): \(answer?["error"]?.serialized() ?? "no answer within the hang guard")")
            XCTAssertEqual(r["provenance"]?["deterministic"], true)
            out.append(r["answer"]?.stringValue ?? "")
        }
        out.append(try XCTUnwrap(d.response(story)?.result?["text"]?.stringValue))
        out += try XCTUnwrap(d.response(rewrite)?.result?["variations"]?.arrayValue).map { $0["text"]?.stringValue ?? "" }
        for id in load { XCTAssertNotNil(d.response(id)?.result) }
        return out
    }

    func daemon() throws -> DaemonProcess {
        let d = try DaemonProcess()
        _ = d.initialize()
        XCTAssertNotNil(d.call("document/open", ["uri": .string(Self.uri), "text": .string(LongTranscript.srt(cues: 16))]).result)
        XCTAssertNotNil(d.call("document/open", ["uri": .string(Self.other), "text": .string(LongTranscript.srt(cues: 18))]).result)
        return d
    }

    var otherWork: [(String, JSONValue)] {
        ["Who inspects the frames?", "What happens at high tide?", "What does the grandmaster sacrifice?"].map {
            ("ask/stream", ["uri": .string(Self.other), "question": .string($0), "maxTokens": 64, "maxAttempts": 1])
        } + [("analysis/summarize", ["uri": .string(Self.other), "maxTokens": 96, "maxAttempts": 1])]
    }

    func testSameRequestsGiveTheSameOutputFreshAfterOtherWorkAndUnderLoad() throws {
        let fresh = try outputs(try daemon())

        let after = try daemon()
        for (m, p) in otherWork { XCTAssertNotNil(after.call(m, p).result) }
        XCTAssertEqual(try outputs(after), fresh, "after other work")

        let during = try daemon()
        XCTAssertEqual(try outputs(during, whileRunning: otherWork), fresh, "while other requests run")
    }
}

import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// A request's claim on shared state is taken in the order requests arrive, whatever order
/// their work is scheduled in: messages are sent together (one write) so the daemon reads
/// them back to back, and every wait is for a response, never for a duration.
final class ArrivalOrderTests: XCTestCase {
    /// A turn that cannot end soon: the grammar demands a 900-character string.
    static let long: JSONValue = [
        "prompt": "Write a long essay about rivers.",
        "schema": ["type": "object", "properties": ["essay": ["type": "string", "minLength": 900]], "required": ["essay"],
                   "additionalProperties": false],
        "options": ["maxTokens": 3000],
    ]

    func session(_ d: DaemonProcess) -> String {
        d.call("session/create", ["instructions": "You are a writer."]).result?["sessionId"]?.stringValue ?? ""
    }

    func respond(_ sid: String, _ base: JSONValue) -> JSONValue {
        guard case .object(var o) = base else { return base }
        o["sessionId"] = .string(sid)
        return .object(o)
    }

    /// Two responds on one session sent together, 200 times per framing, while another
    /// session generates throughout: the first always holds the session, the second is
    /// always the one refused.
    func testTheFirstOfTwoRespondsAlwaysHoldsTheSession() throws {
        for framing in [DaemonProcess.Framing.ndjson, .lsp] {
            let d = try DaemonProcess(framing: framing)
            _ = d.initialize()
            let busy = session(d)
            var load = d.start("session/respond", respond(busy, ArrivalOrderTests.long))
            let sid = session(d)
            for round in 0..<200 {
                let a = d.request("session/respond", respond(sid, ArrivalOrderTests.long))
                let b = d.request("session/respond", respond(sid, ["prompt": "Say hi.", "options": ["maxTokens": 4]]))
                d.send(together: [a.message, b.message])
                let rb = try XCTUnwrap(d.response(b.id), "\(framing) round \(round)")
                XCTAssertEqual(rb["error"]?["data"]?["error"], "concurrentRequests", "\(framing) round \(round): the later respond took the session: \(rb)")
                d.notify("$/cancelRequest", ["id": .int(a.id)])
                let ra = try XCTUnwrap(d.response(a.id), "\(framing) round \(round)")
                XCTAssertEqual(ra.errorCode, -32800, "\(framing) round \(round): the first respond was refused or failed: \(ra)")
                if rb["error"]?["data"]?["error"] != "concurrentRequests" { break }
                // Keep the other stream generating.
                if d.waitFor(timeout: 0, { $0["id"] == .int(load) }) != nil { load = d.start("session/respond", respond(busy, ArrivalOrderTests.long)) }
            }
            d.notify("$/cancelRequest", ["id": .int(load)])
            _ = d.response(load)
        }
    }

    /// Asks sent before a `document/change` work on the old text, asks sent after it on
    /// the new text, although all of them run after the change is stored.
    func testAnAnalysisSeesTheDocumentAsItWasWhenItArrived() throws {
        let d = try DaemonProcess()
        _ = d.initialize()
        let uri = "file:///order.srt"
        XCTAssertNotNil(d.call("document/open", ["uri": .string(uri), "text": .string(LongTranscript.srt(cues: 10))]).result)
        let topics = LongTranscript.topics.map(\.name)
        for round in 0..<3 {
            let ask = { (q: String) in
                d.request("ask/stream", ["uri": .string(uri), "question": .string("\(q) (\(round))"), "maxTokens": 64])
            }
            let before = topics.prefix(6).map { ask("What is said about \($0)?") }
            let change = d.request("document/change", ["uri": .string(uri), "text": .string(LongTranscript.srt(cues: round % 2 == 0 ? 20 : 10))])
            let after = topics.suffix(2).map { ask("What is said about \($0)?") }
            d.send(together: before.map(\.message) + [change.message] + after.map(\.message))
            let old = round % 2 == 0 ? 10 : 20
            let new = round % 2 == 0 ? 20 : 10
            XCTAssertEqual(d.response(change.id)?.result?["segments"]?.intValue, new)
            for r in before {
                XCTAssertEqual(d.response(r.id)?.result?["retrieval"]?["segmentsSearched"]?.intValue, old, "round \(round): sent before the change")
            }
            for r in after {
                XCTAssertEqual(d.response(r.id)?.result?["retrieval"]?["segmentsSearched"]?.intValue, new, "round \(round): sent after the change")
            }
        }
    }

    /// Refines sent together get variation numbers in the order they arrived, and the entry
    /// lists them in that order.
    func testRefinesAreNumberedInArrivalOrder() throws {
        let d = try DaemonProcess()
        _ = d.initialize()
        let entry = try XCTUnwrap(d.call("compose/variations", ["text": "We cannot ship on Friday because the tests fail. Next week works.",
                                                                "tones": ["formal"], "maxTokens": 40]).result)
        let entryId = try XCTUnwrap(entry["id"]?.stringValue)
        let parent = try XCTUnwrap(entry["variations"]?.arrayValue?.first?["id"]?.stringValue)
        let instructions = ["Shorter.", "Warmer.", "Clearer.", "More direct."]
        let requests = instructions.map { d.request("compose/refine", ["variationId": .string(parent), "instruction": .string($0), "maxTokens": 40]) }
        d.send(together: requests.map(\.message))
        for (i, r) in requests.enumerated() {
            let v = try XCTUnwrap(d.response(r.id)?.result?["variation"], "refine \(i)")
            XCTAssertEqual(v["id"]?.stringValue, "\(entryId).\(i + 2)")
            XCTAssertEqual(v["instruction"]?.stringValue, instructions[i])
        }
        let listed = d.call("compose/history/get", ["id": .string(entryId)]).result?["variations"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        XCTAssertEqual(listed, (1...5).map { "\(entryId).\($0)" })
    }
}

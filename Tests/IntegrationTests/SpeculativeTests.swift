import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// Speculative decoding drafted from the text changes the speed, never the text: with
/// `deterministic: true` and the same seed, compose, refine, ask and a session turn under
/// a schema (a grammar) give byte-identical output with it on and off (LSP framing: compose),
/// because a deterministic request never drafts (llama.cpp's kernels are not bit-stable
/// across batch shapes, so verifying drafts could change its text).
/// Every daemon here checks its KV cell mirror against llama.cpp's memory after each step
/// (`PARLANCE_CHECK_KV=1`, which stops the daemon on a disagreement), so drafts rejected,
/// requests cancelled mid-draft and many rewrites at once must leave no cell behind.
final class SpeculativeTests: XCTestCase {
    static let uri = "file:///spec.srt"
    static let selection = """
        Hi team, the design review moves from Tuesday to Thursday at 3 pm in room 4B. Please bring the budget sheet \
        (£1,150 for the pilot) and the list of open questions. Priyanka will present the mobile mock-ups first, then we \
        decide whether the pilot starts on 12 May.
        """

    static func daemon(_ framing: DaemonProcess.Framing = .ndjson) throws -> DaemonProcess {
        let d = try DaemonProcess(framing: framing, env: ["PARLANCE_CHECK_KV": "1"])
        _ = d.initialize()
        XCTAssertNotNil(d.call("document/open", ["uri": .string(uri), "text": .string(LongTranscript.srt(cues: 24))]).result)
        return d
    }

    /// Each output and its usage, with speculation on or off.
    /// With `composeOnly`, the compose variations alone (the framing changes nothing below the dispatcher).
    func outputs(_ d: DaemonProcess, speculative: Bool, composeOnly: Bool = false) throws -> (texts: [String], usage: [JSONValue]) {
        let spec = JSONValue.bool(speculative)
        var texts: [String] = []
        var usage: [JSONValue] = []
        let compose = try XCTUnwrap(d.call("compose/variations", [
            "text": .string(Self.selection), "tones": ["formal", "casual"], "maxTokens": 96, "seed": 9, "temperature": 0.7,
            "deterministic": true, "speculative": spec, "ephemeral": true,
        ]).result, "compose")
        let variations = try XCTUnwrap(compose["variations"]?.arrayValue)
        texts += variations.map { $0["text"]?.stringValue ?? "" }
        usage.append(compose["usage"] ?? .null)
        if composeOnly { return (texts, usage) }
        let vid = try XCTUnwrap(variations.first?["id"]?.stringValue)
        let refined = try XCTUnwrap(d.call("compose/refine", [
            "variationId": .string(vid), "instruction": "Fix spelling and grammar.", "maxTokens": 96, "seed": 3, "temperature": 0,
            "deterministic": true, "speculative": spec, "ephemeral": true,
        ]).result, "refine")
        texts.append(refined["variation"]?["text"]?.stringValue ?? "")
        usage.append(refined["variation"]?["usage"] ?? .null)
        let ask = try XCTUnwrap(d.call("ask/stream", [
            "uri": .string(Self.uri), "question": "What does the beekeeper protect?", "maxTokens": 64, "temperature": 0.8, "seed": 11,
            "deterministic": true, "speculative": spec,
        ]).result, "ask")
        texts.append(ask["answer"]?.stringValue ?? "")
        usage.append(ask["usage"] ?? .null)
        let sid = try XCTUnwrap(d.call("session/create", ["instructions": "You answer in JSON."]).result?["sessionId"]?.stringValue)
        let turn = try XCTUnwrap(d.call("session/respond", [
            "sessionId": .string(sid), "prompt": .string("Give the day, time and room of this meeting: \(Self.selection)"),
            "schema": ["type": "object", "required": ["day", "time", "room"], "additionalProperties": false,
                       "properties": ["day": ["type": "string"], "time": ["type": "string"], "room": ["type": "string"]]],
            "options": ["maxTokens": 64, "temperature": 0.5, "seed": 5, "deterministic": true, "speculative": spec],
        ]).result, "session turn")
        // The content's members by name (a response's member order is not part of its meaning).
        texts.append(turn["content"]?.objectValue.map { o in o.keys.sorted().map { "\($0)=\(o[$0]!.serialized())" }.joined(separator: ", ") } ?? "")
        usage.append(turn["usage"] ?? .null)
        return (texts, usage)
    }

    func check(_ framing: DaemonProcess.Framing, composeOnly: Bool = false) throws {
        let d = try Self.daemon(framing)
        let off = try outputs(d, speculative: false, composeOnly: composeOnly)
        let on = try outputs(d, speculative: true, composeOnly: composeOnly)
        XCTAssertEqual(on.texts, off.texts, "speculation changed the text (\(framing))")
        XCTAssertFalse(off.texts.contains(""), "an output was empty: \(off.texts)")
        for u in off.usage + on.usage { XCTAssertEqual(u["draftTokens"]?.intValue ?? 0, 0, "a deterministic request drafted: \(u)") }
        XCTAssertEqual(d.call("model/status").result?["engine"]?["activeRequests"]?.intValue ?? 0, 0)
    }

    func testSameTextWithSpeculationOnAndOffNDJSON() throws { try check(.ndjson) }
    func testSameTextWithSpeculationOnAndOffLSP() throws { try check(.lsp, composeOnly: true) }

    /// Rewrites cancelled mid-draft, then sixteen at once, then the same rewrite again and
    /// again: the mirror check runs after every step, and the cache ends with no running
    /// request and no cell held by one.
    func testNoCellLeaksUnderRejectionCancellationAndConcurrency() throws {
        let d = try Self.daemon()
        // `speculative: true` verifies drafts whole (never cut by the step cost model), so
        // the rewrites draft whatever this machine's speed.
        func rewrite(_ i: Int, tokens: Int = 48, temperature: Double = 0.9) -> Int {
            d.start("compose/variations", ["text": .string(Self.selection), "tones": ["casual"], "maxTokens": .int(tokens),
                                           "seed": .int(i), "temperature": .double(temperature), "ephemeral": true, "workDoneToken": .string("w\(i)"),
                                           "speculative": true])
        }
        // Cancelled once the text streams (drafts are then in flight).
        for i in 0..<3 {
            let id = rewrite(100 + i, tokens: 200)
            XCTAssertNotNil(d.waitFor { $0["method"] == "$/progress" && $0["params"]?["token"] == .string("w\(100 + i)")
                && ($0["params"]?["value"]?["delta"]?.stringValue ?? "").count > 0 }, "no text streamed")
            d.notify("$/cancelRequest", ["id": .int(id)])
            XCTAssertNotNil(d.response(id), "cancelled rewrite \(i) got no response")
        }
        let together = (0..<16).map { rewrite($0) }
        for id in together { XCTAssertNotNil(d.response(id)?.result, "rewrite \(id)") }
        var drafted = 0, accepted = 0
        for i in 0..<4 {
            let r = d.response(rewrite(50 + i, temperature: 0))?.result
            drafted += r?["usage"]?["draftTokens"]?.intValue ?? 0
            accepted += r?["usage"]?["acceptedDraftTokens"]?.intValue ?? 0
        }
        XCTAssertGreaterThan(accepted, 0, "repeated rewrites had no draft accepted (\(drafted) drafted)")
        XCTAssertLessThanOrEqual(accepted, drafted)
        // The default (no `speculative`) does not draft for a free session turn, even one
        // that repeats its prompt; `true` drafts there.
        func turn(_ speculative: Bool?) throws -> Int {
            let sid = try XCTUnwrap(d.call("session/create", ["instructions": "Repeat the user's text exactly."]).result?["sessionId"])
            var options: JSONObject = ["maxTokens": 48, "temperature": 0]
            if let speculative { options["speculative"] = .bool(speculative) }
            let r = try XCTUnwrap(d.call("session/respond", ["sessionId": sid, "prompt": .string(Self.selection), "options": .object(options)]).result)
            return r["usage"]?["draftTokens"]?.intValue ?? -1
        }
        XCTAssertEqual(try turn(nil), 0, "a free session turn drafted by default")
        XCTAssertGreaterThan(try turn(true), 0, "a session turn asked to draft drafted nothing")
        let engine = try XCTUnwrap(d.call("model/status").result?["engine"])
        XCTAssertEqual(engine["activeRequests"]?.intValue, 0)
        XCTAssertEqual(engine["freeSlots"]?.intValue, engine["sequenceSlots"]?.intValue)
        XCTAssertTrue(d.isRunning, "the daemon stopped (a failed KV check stops it)")
    }
}

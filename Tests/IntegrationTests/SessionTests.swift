import Foundation
import ParlanceClient
import ParlanceJSON
import ParlanceSchema
import XCTest

/// Sessions, multi-turn KV reuse, schema-guided output, cancellation and the scheduler
/// under concurrency — against the real daemon and model. One daemon for the class.
final class SessionTests: XCTestCase {
    nonisolated(unsafe) static var shared: DaemonProcess!

    override class func setUp() {
        shared = try! DaemonProcess()
        _ = shared.initialize()
    }
    override class func tearDown() { shared = nil }
    var d: DaemonProcess { SessionTests.shared }

    func create(_ instructions: String = "You are a concise assistant.", _ extra: JSONObject = JSONObject()) -> String {
        var p = extra
        p["instructions"] = .string(instructions)
        return d.call("session/create", .object(p)).result?["sessionId"]?.stringValue ?? ""
    }

    func respond(_ sid: String, _ prompt: String, _ extra: JSONObject = JSONObject()) -> JSONValue {
        var p = extra
        p["sessionId"] = .string(sid)
        p["prompt"] = .string(prompt)
        return d.call("session/respond", .object(p))
    }

    func testMultiTurnReusesTheKVCache() throws {
        let sid = create()
        let first = try XCTUnwrap(respond(sid, "Name a fruit.", ["options": ["maxTokens": 24, "temperature": 0]]).result)
        XCTAssertFalse(first["text"]?.stringValue?.isEmpty ?? true)
        let u1 = try XCTUnwrap(first["usage"])
        let second = try XCTUnwrap(respond(sid, "And a vegetable?", ["options": ["maxTokens": 24, "temperature": 0]]).result)
        let u2 = try XCTUnwrap(second["usage"])
        let prompt2 = try XCTUnwrap(u2["promptTokens"]?.intValue)
        let cached2 = try XCTUnwrap(u2["cachedPromptTokens"]?.intValue)
        // Turn 2 evaluates only its new tokens: everything of turn 1 (prompt + reply) is cached.
        let turn1Tokens = (u1["promptTokens"]?.intValue ?? 0) + (u1["generatedTokens"]?.intValue ?? 0)
        XCTAssertGreaterThanOrEqual(cached2, turn1Tokens - 1, "\(u1) \(u2)")
        XCTAssertLessThan(prompt2 - cached2, 20, "new tokens only: \(u2)")
        let t = try XCTUnwrap(d.call("session/transcript", ["sessionId": .string(sid)]).result)
        XCTAssertEqual(t["turns"]?.arrayValue?.count, 4)
        XCTAssertEqual(t["turns"]?.arrayValue?.first?["content"], "Name a fruit.")
        XCTAssertEqual(t["instructions"], "You are a concise assistant.")
    }

    func testResetAndClose() throws {
        let sid = create()
        _ = respond(sid, "Hi", ["options": ["maxTokens": 4]])
        XCTAssertEqual(d.call("session/reset", ["sessionId": .string(sid)]).result, [:])
        XCTAssertEqual(d.call("session/transcript", ["sessionId": .string(sid)]).result?["turns"], [])
        XCTAssertEqual(d.call("session/close", ["sessionId": .string(sid)]).result, [:])
        let gone = d.call("session/respond", ["sessionId": .string(sid), "prompt": "x"])
        XCTAssertEqual(gone.errorCode, -32004)
        XCTAssertEqual(gone["error"]?["data"]?["kind"], "session")
    }

    func testPrewarmMakesTheFirstTurnReuseInstructions() throws {
        let sid = create("You are a meticulous travel planner who answers in one sentence. Always mention the weather.")
        let warm = try XCTUnwrap(d.call("session/prewarm", ["sessionId": .string(sid)]).result?["usage"])
        XCTAssertGreaterThan(warm["promptTokens"]?.intValue ?? 0, 10)
        let r = try XCTUnwrap(respond(sid, "Plan a day in Porto.", ["options": ["maxTokens": 8]]).result?["usage"])
        XCTAssertGreaterThanOrEqual(r["cachedPromptTokens"]?.intValue ?? 0, warm["promptTokens"]?.intValue ?? 0)
    }

    static let nested: JSONValue = [
        "type": "object",
        "properties": [
            "title": ["type": "string", "maxLength": 40],
            "rating": ["type": "integer", "minimum": 1, "maximum": 5],
            "score": ["type": "number", "minimum": 0, "maximum": 1],
            "tags": ["type": "array", "items": ["type": "string", "enum": ["fun", "sad", "long", "short"]], "minItems": 1, "maxItems": 3],
            "author": ["type": "object", "properties": ["name": ["type": "string", "maxLength": 30], "verified": ["type": "boolean"]],
                       "required": ["name", "verified"], "additionalProperties": false],
            "note": ["type": "string", "maxLength": 30],
        ],
        "required": ["title", "rating", "score", "tags", "author"],
        "additionalProperties": false,
    ]

    /// Schema-guided generations of a nested schema, each with its own seed, that must all
    /// parse and validate: three rounds of the engine's eight slots (`make fuzz` covers
    /// grammars further).
    static let schemaRuns = 24

    func testSchemaGuidedOutputAlwaysValidates() throws {
        let sid = create("You write short book reviews as JSON.")
        let ids = (0..<Self.schemaRuns).map { i in
            d.start("session/respond", ["sessionId": .string(sid), "prompt": .string("Review book number \(i)."), "schema": SessionTests.nested,
                                        "options": ["seed": .int(i), "temperature": 0.9, "maxTokens": 160]])
        }
        var valid = 0
        var busy = 0
        for id in ids {
            let r = try XCTUnwrap(d.response(id, timeout: 600))
            if r["error"]?["data"]?["error"] == "concurrentRequests" { busy += 1; continue }
            let content = try XCTUnwrap(r.result?["content"], "\(r)")
            XCTAssertEqual(SchemaValidator.validate(content, against: SessionTests.nested), [], "\(content)")
            valid += 1
        }
        // One session answers one request at a time; the rest are refused, so send the
        // remaining generations one by one through fresh sessions, concurrently.
        let more = (0..<busy).map { i -> Int in
            let s = create("You write short book reviews as JSON.")
            return d.start("session/respond", ["sessionId": .string(s), "prompt": .string("Review book \(i + 1000)."), "schema": SessionTests.nested,
                                               "options": ["seed": .int(i + 1000), "temperature": 0.9, "maxTokens": 160]])
        }
        for id in more {
            let r = try XCTUnwrap(d.response(id, timeout: 600))
            let content = try XCTUnwrap(r.result?["content"], "\(r)")
            XCTAssertEqual(SchemaValidator.validate(content, against: SessionTests.nested), [], "\(content)")
            valid += 1
        }
        XCTAssertEqual(valid, Self.schemaRuns)
    }

    func testUnsupportedSchemaKeywordIsInvalidParams() throws {
        let sid = create()
        let r = respond(sid, "x", ["schema": ["type": "object", "properties": ["a": ["$ref": "#/x"]]]])
        XCTAssertEqual(r.errorCode, -32602)
        XCTAssertEqual(r["error"]?["data"]?["keyword"], "$ref")
    }

    func testStreamingTextAndPartialStructuredOutput() throws {
        let sid = create()
        let r = respond(sid, "Describe a cat.", ["schema": SessionTests.nested, "workDoneToken": "st-1", "options": ["maxTokens": 160, "seed": 3]])
        let content = try XCTUnwrap(r.result?["content"])
        let progress = d.progress(token: "st-1")
        let deltas = progress.compactMap { $0["delta"]?.stringValue }
        XCTAssertGreaterThan(deltas.count, 5)
        // The same JSON value: object key order and 1 vs 1.0 are not part of a JSON value.
        XCTAssertEqual(SessionTests.canonical(try JSONParser.parse(deltas.joined())), SessionTests.canonical(content))
        XCTAssertTrue(progress.contains { $0["partial"]?.objectValue != nil }, "partial structured output streamed")
        let phases = Set(progress.compactMap { $0["phase"]?.stringValue })
        XCTAssertTrue(phases.isSuperset(of: ["prompt", "generating"]), "\(phases)")
    }

    func testConcurrentRespondOnOneSessionIsRefused() throws {
        let sid = create()
        let a = d.start("session/respond", ["sessionId": .string(sid), "prompt": "Count to twenty.", "options": ["maxTokens": 64]])
        let b = d.start("session/respond", ["sessionId": .string(sid), "prompt": "Count to ten.", "options": ["maxTokens": 8]])
        let rb = try XCTUnwrap(d.response(b))
        XCTAssertEqual(rb.errorCode, -32010)
        XCTAssertEqual(rb["error"]?["data"]?["error"], "concurrentRequests")
        XCTAssertNotNil(d.response(a)?.result)
    }

    func testCancelAnswersWithPartialTextAndFreesTheSlot() throws {
        let sid = create("You tell very long stories.")
        let id = d.start("session/respond", ["sessionId": .string(sid), "prompt": "Tell a long story about a whale.", "workDoneToken": "c-1",
                                             "options": ["maxTokens": 400, "temperature": 0.8]])
        // Cancel once text has streamed (a first delta, then a further one): the partial
        // answer holds at least what was streamed before the cancel.
        var streamed = ""
        for _ in 0..<2 {
            let delta = try XCTUnwrap(d.waitFor { $0["method"] == "$/progress" && $0["params"]?["token"] == "c-1" && $0["params"]?["value"]?["delta"] != nil },
                                      "no streamed text before the cancel")
            streamed += delta["params"]?["value"]?["delta"]?.stringValue ?? ""
        }
        d.notify("$/cancelRequest", ["id": .int(id)])
        let r = try XCTUnwrap(d.response(id))
        XCTAssertEqual(r.errorCode, -32800, "\(r)")
        let partial = r["error"]?["data"]?["partial"]?.stringValue ?? ""
        XCTAssertFalse(partial.isEmpty, "\(r)")
        XCTAssertTrue(partial.hasPrefix(streamed), "the partial answer \(partial.debugDescription) lacks the streamed \(streamed.debugDescription)")
        // The session is usable again and slots are all free.
        XCTAssertNotNil(respond(sid, "The end?", ["options": ["maxTokens": 4]]).result)
        let engine = try XCTUnwrap(d.call("model/status").result?["engine"])
        XCTAssertEqual(engine["freeSlots"], engine["sequenceSlots"])
    }

    /// A generation cancelled while another streams beside it (as a variation stopped by its
    /// stream watch): the decode in flight is not aborted, so the other's step is kept and
    /// llama.cpp logs no failed decode. Its own daemon: the stderr read is this test's alone.
    func testCancellingOneOfTwoGenerationsDoesNotAbortTheBatch() throws {
        let own = try DaemonProcess()
        _ = own.initialize()
        func start(_ prompt: String, _ token: String, _ maxTokens: Int) -> Int {
            let sid = own.call("session/create", ["instructions": "You tell very long stories."]).result?["sessionId"] ?? .null
            return own.start("session/respond", ["sessionId": sid, "prompt": .string(prompt), "workDoneToken": .string(token),
                                                 "options": ["maxTokens": .int(maxTokens), "temperature": 0]])
        }
        let kept = start("Tell a long story about a whale.", "kept", 48)
        let stopped = start("Tell a long story about a fox.", "stopped", 400)
        for token in ["kept", "stopped"] {
            XCTAssertNotNil(own.waitFor { $0["method"] == "$/progress" && $0["params"]?["token"] == .string(token) && $0["params"]?["value"]?["delta"] != nil },
                            "\(token) streamed nothing")
        }
        own.notify("$/cancelRequest", ["id": .int(stopped)])
        XCTAssertEqual(own.response(stopped)?.errorCode, -32800)
        XCTAssertNotNil(own.response(kept)?.result)
        XCTAssertFalse(own.stderrText.contains("failed to decode"), "a cancel aborted the batch: \(own.stderrText.suffix(600))")
    }

    func testEightConcurrentRequestsAllComplete() throws {
        let ids = (0..<8).map { i in
            d.start("session/respond", ["sessionId": .string(create()), "prompt": .string("Say something about the number \(i)."),
                                        "options": ["maxTokens": 24, "seed": .int(i)]])
        }
        for id in ids { XCTAssertNotNil(d.response(id)?.result?["text"]) }
        let engine = try XCTUnwrap(d.call("model/status").result?["engine"])
        XCTAssertEqual(engine["freeSlots"], engine["sequenceSlots"])
        XCTAssertEqual(engine["activeRequests"], 0)
    }

    func testContextOverflowIsTypedAndTrimmingPolicyRecovers() throws {
        let long = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 420)  // ~4,000 tokens
        let strict = create()
        let r = respond(strict, long, ["options": ["maxTokens": 64]])
        XCTAssertEqual(r.errorCode, -32010)
        let data = try XCTUnwrap(r["error"]?["data"])
        XCTAssertEqual(data["error"], "exceededContextWindowSize")
        XCTAssertGreaterThan(data["promptTokens"]?.intValue ?? 0, 3000)
        XCTAssertEqual(data["contextSize"], 4096)

        let half = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 150)  // ~1,500 tokens
        let trimming = create("Reply with one word.", ["trimming": "dropOldest"])
        for _ in 0..<3 { XCTAssertNotNil(respond(trimming, half, ["options": ["maxTokens": 4]]).result) }
        let t = try XCTUnwrap(d.call("session/transcript", ["sessionId": .string(trimming)]).result)
        XCTAssertLessThan(t["turns"]?.arrayValue?.count ?? 99, 6, "oldest turns dropped")
        XCTAssertEqual(t["instructions"], "Reply with one word.")
    }

    /// A JSON value with object keys sorted and integral numbers as integers.
    static func canonical(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let o):
            var out = JSONObject()
            for k in o.keys.sorted() { out[k] = canonical(o[k]!) }
            return .object(out)
        case .array(let a): return .array(a.map(canonical))
        case .double(let d) where d.rounded() == d && abs(d) < 1e15: return .int(Int(d))
        default: return v
        }
    }
}

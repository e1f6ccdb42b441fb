import Foundation
import ParlanceClient
import ParlanceJSON
import ParlanceSchema
import XCTest

/// Tool calling through the real daemon and model, the test playing the client that runs
/// the tools: the daemon's `tool/call` requests are answered (or not) when the test says so.
/// `toolChoice` makes the tiny model's calls deterministic; nothing asserts its wording.
/// One daemon (NDJSON, tools declared) for the class; the LSP framing and a client without
/// the capability get their own.
final class ToolCallingTests: XCTestCase {
    nonisolated(unsafe) static var shared: DaemonProcess!
    override class func setUp() {
        shared = try! DaemonProcess()
        _ = shared.call("initialize", ["clientInfo": ["name": "tool-tests"], "capabilities": ["tools": true]])
    }
    override class func tearDown() { shared = nil }
    var d: DaemonProcess { Self.shared }

    static let weatherSchema: JSONValue = ["type": "object", "properties": ["city": ["type": "string", "maxLength": 40]], "required": ["city"]]
    static let timeSchema: JSONValue = ["type": "object", "properties": ["timezone": ["type": "string", "enum": ["UTC", "Europe/Paris", "Asia/Tokyo"]]]]
    static let tools: JSONValue = [
        ["name": "get_weather", "description": "Current weather for a city.", "parameters": weatherSchema],
        ["name": "get_time", "description": "The current time in a timezone.", "parameters": timeSchema],
    ]
    static func schema(of tool: String) -> JSONValue { tool == "get_weather" ? weatherSchema : timeSchema }

    func create(_ d: DaemonProcess, _ extra: JSONObject = JSONObject()) throws -> String {
        var p = extra
        p["tools"] = Self.tools
        p["instructions"] = "You are a helpful assistant."
        p["options"] = ["temperature": 0, "maxTokens": 48]
        let r = d.call("session/create", .object(p))
        return try XCTUnwrap(r.result?["sessionId"]?.stringValue, "\(r)")
    }

    func startRespond(_ d: DaemonProcess, _ sid: String, _ extra: JSONObject = JSONObject(), token: String? = nil) -> Int {
        var p = extra
        p["sessionId"] = .string(sid)
        p["prompt"] = "What is the weather in Paris right now?"
        if let token { p["workDoneToken"] = .string(token) }
        return d.start("session/respond", .object(p))
    }

    /// The next `tool/call` the daemon sends, checked: its session, a fresh call id, a tool
    /// of the session, and arguments valid for that tool's schema.
    func nextCall(_ d: DaemonProcess, _ sid: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let call = try XCTUnwrap(d.waitFor { $0["method"] == "tool/call" }, "no tool/call arrived", file: file, line: line)
        let p = try XCTUnwrap(call["params"], file: file, line: line)
        XCTAssertNotNil(call["id"]?.stringValue, "the daemon's request ids are strings: \(call)", file: file, line: line)
        XCTAssertEqual(p["sessionId"]?.stringValue, sid, file: file, line: line)
        let name = try XCTUnwrap(p["name"]?.stringValue, file: file, line: line)
        XCTAssertTrue(["get_weather", "get_time"].contains(name), name, file: file, line: line)
        XCTAssertEqual(SchemaValidator.validate(p["arguments"] ?? .null, against: Self.schema(of: name)), [], "\(p)", file: file, line: line)
        return call
    }

    func answer(_ d: DaemonProcess, _ call: JSONValue, _ content: JSONValue) {
        d.send(["jsonrpc": "2.0", "id": call["id"]!, "result": ["content": content]])
    }

    /// Answers every call until the respond's response arrives; returns it and the calls.
    func serveCalls(_ d: DaemonProcess, _ id: Int, _ content: JSONValue = ["tempC": 18, "sky": "cloudy"]) throws -> (JSONValue, [JSONValue]) {
        var calls: [JSONValue] = []
        while true {
            let m = try XCTUnwrap(d.waitFor { $0["method"] == "tool/call" || ($0["id"] == .int(id) && $0["method"] == nil) })
            if m["method"] == "tool/call" {
                calls.append(m)
                answer(d, m, content)
            } else {
                return (m, calls)
            }
        }
    }

    func testNamedToolIsCalledThenTheAnswerUsesItsOutputEvaluatingOnlyNewTokens() throws {
        let sid = try create(d, ["toolChoice": ["name": "get_weather"], "maxToolCalls": 1])
        let id = startRespond(d, sid, token: "w1")
        let call = try nextCall(d, sid)
        XCTAssertEqual(call["params"]?["name"], "get_weather")
        XCTAssertEqual(call["params"]?["callId"], "call-1")
        answer(d, call, ["tempC": 18, "sky": "cloudy"])
        let r = try XCTUnwrap(d.response(id)?.result, "respond failed")
        XCTAssertNil(d.waitFor(timeout: 0) { $0["method"] == "tool/call" }, "maxToolCalls 1: one call only")

        let records = try XCTUnwrap(r["toolCalls"]?.arrayValue)
        guard records.count == 1 else { return XCTFail("one tool record: \(records)") }
        XCTAssertEqual(records[0]["callId"], "call-1")
        XCTAssertEqual(records[0]["arguments"], call["params"]?["arguments"])
        XCTAssertEqual(records[0]["output"], ["tempC": 18, "sky": "cloudy"])
        XCTAssertNotNil(records[0]["ms"]?.doubleValue)
        let text = try XCTUnwrap(r["text"]?.stringValue)
        XCTAssertFalse(text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        XCTAssertFalse(text.hasPrefix("<"), "the answer is not a call: \(text)")

        // Two model steps; the second evaluates only the tool output and headers.
        let steps = try XCTUnwrap(r["steps"]?.arrayValue)
        guard steps.count == 2 else { return XCTFail("two model steps: \(r)") }
        let first = (steps[0]["promptTokens"]?.intValue ?? 0) + (steps[0]["generatedTokens"]?.intValue ?? 0)
        let cached = steps[1]["cachedPromptTokens"]?.intValue ?? 0
        let evaluated = (steps[1]["promptTokens"]?.intValue ?? 0) - cached
        XCTAssertGreaterThanOrEqual(cached, first - 1, "the call step's prompt and output are reused: \(steps)")
        XCTAssertGreaterThan(evaluated, 0)
        XCTAssertLessThan(evaluated, 60, "only the tool output is new: \(steps)")
        XCTAssertEqual(r["usage"]?["promptTokens"]?.intValue, steps.compactMap { $0["promptTokens"]?.intValue }.reduce(0, +), "usage sums the steps")

        // Progress: the call reported started then finished; the deltas are the answer only.
        let progress = d.progress(token: "w1")
        let toolReports = progress.filter { $0["phase"] == "toolCall" }
        XCTAssertEqual(toolReports.compactMap { $0["toolCall"]?["state"]?.stringValue }, ["started", "finished"], "\(toolReports)")
        XCTAssertEqual(toolReports.last?["toolCall"]?["output"], ["tempC": 18, "sky": "cloudy"])
        XCTAssertEqual(streamedText(progress), text, "deltas carry the answer, never the call")

        // The transcript: prompt, the calls, the output, the response.
        let turns = try XCTUnwrap(d.call("session/transcript", ["sessionId": .string(sid)]).result?["turns"]?.arrayValue)
        XCTAssertEqual(turns.compactMap { $0["kind"]?.stringValue }, ["prompt", "toolCalls", "toolOutput", "response"])
        XCTAssertEqual(turns[1]["toolCalls"]?.arrayValue?.first?["callId"], "call-1")
        XCTAssertEqual(turns[2]["role"], "tool")
        XCTAssertEqual(turns[2]["callId"], "call-1")
        XCTAssertTrue(turns[2]["content"]?.stringValue?.contains("cloudy") == true, "\(turns[2])")
        XCTAssertEqual(turns[3]["content"]?.stringValue, text)

        // The next turn continues the same conversation, its calls numbered on.
        let id2 = startRespond(d, sid, ["toolChoice": ["name": "get_time"]])
        let (r2, calls2) = try serveCalls(d, id2, "12:00")
        XCTAssertNotNil(r2["result"]?["text"]?.stringValue, "\(r2)")
        XCTAssertEqual(calls2.first?["params"]?["callId"], "call-2")
        XCTAssertEqual(calls2.first?["params"]?["name"], "get_time")
    }

    func testRequiredWithTwoToolsMakesTwoCallsInOneTurnThenAnswers() throws {
        let sid = try create(d)
        let id = startRespond(d, sid, ["toolChoice": "required", "resetToolChoice": false, "maxToolCalls": 2])
        let c1 = try nextCall(d, sid)
        answer(d, c1, "18 °C and cloudy")
        let c2 = try nextCall(d, sid)
        XCTAssertEqual(c2["params"]?["callId"], "call-2")
        answer(d, c2, ["time": "14:05"])
        let r = try XCTUnwrap(d.response(id)?.result)
        let records = try XCTUnwrap(r["toolCalls"]?.arrayValue)
        XCTAssertEqual(records.map { $0["output"] ?? .null }, ["18 °C and cloudy", ["time": "14:05"]])
        XCTAssertFalse(r["text"]?.stringValue?.isEmpty ?? true)
        let kinds = d.call("session/transcript", ["sessionId": .string(sid)]).result?["turns"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
        XCTAssertEqual(kinds?.filter { $0 == "toolOutput" }.count, 2)
        XCTAssertEqual(kinds?.last, "response")
    }

    func testNoneNeverCallsAndDefaultSettingsAnswerEveryCallUpToTheLimit() throws {
        let sid = try create(d, ["toolChoice": "none"])
        let id = startRespond(d, sid)
        let r = try XCTUnwrap(d.response(id)?.result)
        XCTAssertNil(d.waitFor(timeout: 0) { $0["method"] == "tool/call" }, "toolChoice none: no call")
        XCTAssertEqual(r["toolCalls"], [])
        XCTAssertFalse(r["text"]?.stringValue?.hasPrefix("<") ?? true, "\(r)")

        // Named for this turn only, default limit (5): every call is answered, then the answer.
        let id2 = startRespond(d, sid, ["toolChoice": ["name": "get_weather"]])
        let (r2, calls) = try serveCalls(d, id2)
        XCTAssertGreaterThanOrEqual(calls.count, 1)
        XCTAssertLessThanOrEqual(calls.count, 5)
        XCTAssertEqual(r2["result"]?["toolCalls"]?.arrayValue?.count, calls.count, "\(r2)")
        XCTAssertNotNil(r2["result"]?["text"]?.stringValue)
    }

    func testSchemaAnswerAfterACall() throws {
        let sid = try create(d, ["toolChoice": ["name": "get_weather"], "maxToolCalls": 1])
        let schema: JSONValue = ["type": "object", "properties": ["city": ["type": "string", "maxLength": 30], "sky": ["type": "string", "enum": ["sunny", "cloudy", "rainy"]]],
                                 "required": ["city", "sky"]]
        let id = startRespond(d, sid, ["schema": schema])
        answer(d, try nextCall(d, sid), ["sky": "cloudy"])
        let r = try XCTUnwrap(d.response(id)?.result)
        let content = try XCTUnwrap(r["content"])
        XCTAssertEqual(SchemaValidator.validate(content, against: schema), [])
        XCTAssertEqual(r["toolCalls"]?.arrayValue?.count, 1)
    }

    func testAToolErrorIsToldToTheModelAndTheTurnGoesOn() throws {
        let sid = try create(d, ["toolChoice": ["name": "get_weather"], "maxToolCalls": 1])
        let id = startRespond(d, sid, token: "e1")
        let call = try nextCall(d, sid)
        d.send(["jsonrpc": "2.0", "id": call["id"]!, "error": ["code": -32000, "message": "weather service unreachable"]])
        let r = try XCTUnwrap(d.response(id)?.result)
        let record = try XCTUnwrap(r["toolCalls"]?.arrayValue?.first)
        XCTAssertEqual(record["error"], ["code": -32000, "message": "weather service unreachable"])
        XCTAssertNil(record["output"])
        XCTAssertNotNil(r["text"]?.stringValue)
        let states = d.progress(token: "e1").compactMap { $0["toolCall"]?["state"]?.stringValue }
        XCTAssertEqual(states, ["started", "failed"])
        let turns = d.call("session/transcript", ["sessionId": .string(sid)]).result?["turns"]?.arrayValue ?? []
        let output = turns.first { $0["kind"] == "toolOutput" }
        XCTAssertEqual(output?["isError"], true)
        XCTAssertTrue(output?["content"]?.stringValue?.contains("weather service unreachable") == true, "\(String(describing: output))")
    }

    func testAClientThatNeverAnswersTimesOutAndTheSessionStaysUsable() throws {
        let sid = try create(d, ["toolChoice": ["name": "get_weather"], "toolTimeoutMs": 200])
        let before = d.call("session/transcript", ["sessionId": .string(sid)]).result?["turns"]
        let id = startRespond(d, sid)
        let call = try nextCall(d, sid)  // never answered in time
        let r = try XCTUnwrap(d.response(id))
        XCTAssertEqual(r.errorCode, -32010, "\(r)")
        let data = try XCTUnwrap(r["error"]?["data"])
        XCTAssertEqual(data["error"], "toolCallFailed")
        XCTAssertEqual(data["reason"], "timedOut")
        XCTAssertEqual(data["tool"], "get_weather")
        XCTAssertEqual(data["callId"], call["params"]?["callId"])
        XCTAssertEqual(data["arguments"], call["params"]?["arguments"])
        XCTAssertEqual(data["timeoutMs"], 200)
        // The client is told the daemon stopped waiting.
        let cancel = d.waitFor { $0["method"] == "$/cancelRequest" && $0["params"]?["id"] == call["id"] }
        XCTAssertNotNil(cancel, "the timed-out tool/call is cancelled")
        // A late answer is ignored (logged); the session is as before the turn and answers again.
        answer(d, call, "too late")
        XCTAssertEqual(d.call("session/transcript", ["sessionId": .string(sid)]).result?["turns"], before)
        // Usable, and the call id the client saw is never issued again.
        let again = startRespond(d, sid, ["maxToolCalls": 1, "toolTimeoutMs": 30000])
        let next = try nextCall(d, sid)
        XCTAssertEqual(next["params"]?["callId"], "call-2", "call-1 was sent before the timeout")
        answer(d, next, "sunny")
        XCTAssertNotNil(d.response(again)?.result?["text"], "the session is usable after a timeout")
    }

    func testCancellingWhileACallIsOutstandingCancelsTheCall() throws {
        let sid = try create(d, ["toolChoice": ["name": "get_weather"]])
        let id = startRespond(d, sid)
        let call = try nextCall(d, sid)
        d.notify("$/cancelRequest", ["id": .int(id)])
        let cancel = d.waitFor { $0["method"] == "$/cancelRequest" && $0["params"]?["id"] == call["id"] }
        XCTAssertNotNil(cancel, "the daemon cancels its tool/call")
        let r = try XCTUnwrap(d.response(id))
        XCTAssertEqual(r.errorCode, -32800, "\(r)")
        let transcript = try XCTUnwrap(r["error"]?["data"]?["transcript"]?.arrayValue)
        XCTAssertEqual(transcript.compactMap { $0["kind"]?.stringValue }, ["prompt", "toolCalls"], "the partial turn: \(transcript)")
        XCTAssertEqual(r["error"]?["data"]?["toolCalls"], [], "no call finished")
        answer(d, call, "late")  // ignored
        XCTAssertEqual(d.call("session/transcript", ["sessionId": .string(sid)]).result?["turns"], [])
        let again = startRespond(d, sid, ["toolChoice": "none"])
        XCTAssertNotNil(d.response(again)?.result?["text"])
    }

    func testAnswersToUnknownOrAnsweredCallsAreIgnored() throws {
        let sid = try create(d, ["toolChoice": ["name": "get_weather"], "maxToolCalls": 1])
        d.send(["jsonrpc": "2.0", "id": "parlance-424242", "result": ["content": "never asked"]])
        let id = startRespond(d, sid)
        let call = try nextCall(d, sid)
        answer(d, call, "first")
        answer(d, call, "second")
        let r = try XCTUnwrap(d.response(id)?.result)
        XCTAssertEqual(r["toolCalls"]?.arrayValue?.first?["output"], "first")
        XCTAssertEqual(d.call("model/status").result?["availability"], "available", "the daemon kept serving")
    }

    func testBadToolDefinitionsAndChoices() throws {
        func create(_ p: JSONValue) -> JSONValue { d.call("session/create", p) }
        let weather: JSONValue = ["name": "get_weather", "parameters": Self.weatherSchema]
        let dup = create(["tools": [weather, weather]])
        XCTAssertEqual(dup.errorCode, -32602)
        XCTAssertEqual(dup["error"]?["data"]?["error"], "duplicateToolName")
        XCTAssertEqual(create(["tools": [["name": "get weather!"]]])["error"]?["data"]?["keyword"], "pattern")
        XCTAssertEqual(create(["tools": [["name": "x", "parameters": ["type": "string"]]]])["error"]?["data"]?["error"], "invalidToolParameters")
        let unsupported = create(["tools": [["name": "x", "parameters": ["type": "object", "properties": ["a": ["type": "string", "pattern": "^a"]]]]]])
        XCTAssertEqual(unsupported["error"]?["data"]?["path"], "/tools/0/parameters", "\(unsupported)")
        XCTAssertTrue(unsupported["error"]?["message"]?.stringValue?.contains("pattern") == true, "\(unsupported)")
        let unknown = create(["tools": [weather], "toolChoice": ["name": "get_time"]])
        XCTAssertEqual(unknown["error"]?["data"]?["error"], "invalidToolChoice")
        XCTAssertEqual(unknown["error"]?["data"]?["tools"], ["get_weather"])
        XCTAssertEqual(create(["toolChoice": "required"])["error"]?["data"]?["error"], "invalidToolChoice")
        XCTAssertEqual(create(["toolChoice": "sometimes"]).errorCode, -32602)
        // respond's override is checked against the session's tools before any work.
        let sid = try XCTUnwrap(create(["tools": [weather]]).result?["sessionId"])
        let bad = d.call("session/respond", ["sessionId": sid, "prompt": "hi", "toolChoice": ["name": "nope"]])
        XCTAssertEqual(bad["error"]?["data"]?["error"], "invalidToolChoice")
    }

    func testAClientWithoutTheCapabilityCannotCreateToolSessions() throws {
        let plain = try DaemonProcess()
        _ = plain.initialize()
        let r = plain.call("session/create", ["tools": [["name": "get_weather", "parameters": Self.weatherSchema]]])
        XCTAssertEqual(r.errorCode, -32602)
        XCTAssertEqual(r["error"]?["data"]?["error"], "toolsNotSupportedByClient")
        XCTAssertTrue(r["error"]?["message"]?.stringValue?.contains("capabilities.tools") == true)
        XCTAssertNotNil(plain.call("session/create", [:]).result?["sessionId"], "sessions without tools still work")
    }

    func testToolCallsOverLSPFraming() throws {
        let lsp = try DaemonProcess(framing: .lsp)
        _ = lsp.call("initialize", ["capabilities": ["tools": true]])
        let sid = try create(lsp, ["toolChoice": ["name": "get_weather"], "maxToolCalls": 1])
        let id = startRespond(lsp, sid)
        answer(lsp, try nextCall(lsp, sid), "sunny")
        let r = try XCTUnwrap(lsp.response(id)?.result)
        XCTAssertEqual(r["toolCalls"]?.arrayValue?.first?["output"], "sunny")
    }
}

import JSONRPC
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema
import XCTest
@testable import ParlanceFeatures

/// A call identical to one made already in the same turn is not made again: after a
/// success the model answers with the output it has; after a failure the turn ends with it.
final class ToolRepeatTests: XCTestCase {
    let tokyo: JSONValue = ["timezone": "Tokyo"]
    lazy var failed = ToolCallRecord(callId: "call-1", name: "time/get_current_time", arguments: tokyo,
                                     error: ToolCallError(code: -32000, message: "Invalid timezone: 'Tokyo'"))
    lazy var answered = ToolCallRecord(callId: "call-2", name: "get_weather", arguments: ["city": "Oslo"], output: "12 °C, rain")

    func testARepeatedFailingCallEndsTheTurnWithThatFailure() throws {
        XCTAssertThrowsError(try ToolLoop.repeats([.init(name: "time/get_current_time", arguments: tokyo)], of: [failed, answered])) { error in
            let e = error as? ResponseError
            XCTAssertEqual(e?.code.rawValue, -32010)
            XCTAssertEqual(e?.data?["reason"], "repeatedFailure")
            XCTAssertEqual(e?.data?["callId"], "call-1")
            XCTAssertEqual(e?.data?["toolError"]?["message"], "Invalid timezone: 'Tokyo'")
            XCTAssertEqual(e?.data?["toolCalls"]?.arrayValue?.count, 2)
            XCTAssertTrue(e?.message.contains("again with the same arguments after it failed") ?? false, "\(String(describing: e))")
        }
    }

    func testRepeatsOfAnsweredCallsAreNamedAndNewCallsAreNot() throws {
        let oslo = ToolCallFormat.ParsedCall(name: "get_weather", arguments: ["city": "Oslo"])
        let bergen = ToolCallFormat.ParsedCall(name: "get_weather", arguments: ["city": "Bergen"])
        XCTAssertEqual(try ToolLoop.repeats([oslo], of: [answered]), .everyCall)
        XCTAssertEqual(try ToolLoop.repeats([bergen, oslo], of: [answered]), .someCalls)
        XCTAssertEqual(try ToolLoop.repeats([bergen], of: [answered]), .noCall)
        // Other arguments to a tool that failed are a new call, not a repeat.
        XCTAssertEqual(try ToolLoop.repeats([.init(name: "time/get_current_time", arguments: ["timezone": "Asia/Tokyo"])], of: [failed]), .noCall)
        XCTAssertEqual(try ToolLoop.repeats([oslo], of: []), .noCall)
    }

    /// The answer after a call finishes the output's identifiers and times exactly once it
    /// begins them; a failed call's message is not a source.
    func testTheFactsOfTheTurnsOutputsAreWhatTheAnswerCopies() {
        let time = ToolCallRecord(callId: "call-3", name: "time/get_current_time", arguments: ["timezone": "Asia/Tokyo"],
                                  output: .string(#"{"timezone": "Asia/Tokyo", "datetime": "2026-12-01T09:54:57+09:00", "is_dst": false}"#))
        let facts = ToolLoop.facts(of: [failed, answered, time])
        XCTAssertTrue(facts.contains("2026-12-01T09:54:57+09:00"), "\(facts)")
        XCTAssertTrue(facts.contains("12 °C") || facts.contains("12"), "\(facts)")
        XCTAssertFalse(facts.contains { $0.contains("Tokyo'") }, "\(facts)")
    }
}

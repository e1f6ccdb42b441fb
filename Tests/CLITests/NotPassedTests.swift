import ParlanceInProcess
import ParlanceJSON
import XCTest

/// A result that did not pass its checks is never shown as if it had: one line per part
/// that did not pass (the CLI's stderr, `parlance mcp`'s tool text), naming what failed.
final class NotPassedTests: XCTestCase {
    func testOneLinePerPartThatDidNotPass() throws {
        let r = try JSONParser.parse(#"""
            {"variations": [
              {"tone": "formal", "text": "Dear team, …", "verification": {"passed": false, "attempts": 3, "issues": [
                {"code": "instructionEcho", "message": "the output copies the prompt's example (10, 30)"},
                {"code": "factMissing", "message": "the output changed \"Fri\" to \"Friday\": restored", "repaired": true}]}},
              {"tone": "casual", "text": "Hey team …", "verification": {"passed": true, "attempts": 1, "issues": []}}]}
            """#)
        XCTAssertEqual(Render.notPassed(r), ["the formal rewrite did not pass its checks after 3 attempts: the output copies the prompt's example (10, 30)"])
        let summary = try JSONParser.parse(#"{"summary": "…", "verification": {"passed": false, "attempts": 1, "issues": [{"code": "emptyList", "message": "mainTopics is empty"}]}}"#)
        XCTAssertEqual(Render.notPassed(summary), ["the result did not pass its checks after 1 attempt: mainTopics is empty"])
        XCTAssertEqual(Render.notPassed(try JSONParser.parse(#"{"summary": "…", "verification": {"passed": true, "attempts": 2, "issues": []}}"#)), [])
    }
}

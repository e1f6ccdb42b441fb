import Foundation
import ParlanceJSON
import ParlanceSchema
import XCTest

/// The "answer or call" grammar over every tool schema the tests use: what it accepts is
/// either calls (to the offered tools, with arguments valid for their schemas, at most
/// `maxCalls`) or the answer (text not beginning with `<`, or JSON valid for the schema),
/// and every random sentence it generates is one of those.
final class ToolCallFormatTests: XCTestCase {
    func json(_ s: String) -> JSONValue { try! JSONParser.parse(s) }

    lazy var tools: [ToolCallFormat.Tool] = [
        .init(name: "get_weather", parameters: json(#"{"type":"object","properties":{"city":{"type":"string","maxLength":40}},"required":["city"]}"#)),
        .init(name: "get_time", parameters: json(#"{"type":"object","properties":{"timezone":{"type":"string","enum":["UTC","Europe/Paris","Asia/Tokyo"]}}}"#)),
        .init(name: "no_args", parameters: json(#"{"type":"object","properties":{}}"#)),
        .init(name: "book-table", parameters: json(#"""
            {"type":"object","properties":{"people":{"type":"integer","minimum":1,"maximum":12},"vegan":{"type":"boolean"},
             "when":{"type":"object","properties":{"day":{"type":"string","enum":["mon","tue"]},"hour":{"type":"number","minimum":11,"maximum":22.5}},"required":["day"]},
             "notes":{"type":"array","items":{"type":"string","maxLength":20},"maxItems":3}},"required":["people","when"]}
            """#)),
    ]
    let answerSchema: JSONValue = ["type": "object", "properties": ["sky": ["type": "string", "enum": ["sunny", "cloudy"]]], "required": ["sky"]]

    func grammar(_ tools: [ToolCallFormat.Tool], maxCalls: Int, _ answer: ToolCallFormat.Answer) throws -> GBNFGrammar {
        try GBNFGrammar(try ToolCallFormat.gbnf(tools: tools, maxCalls: maxCalls, answer: answer))
    }

    func call(_ name: String, _ args: String) -> String { ToolCallFormat.open + #"{"name":"\#(name)","arguments":\#(args)}"# + ToolCallFormat.close }

    /// Checks one accepted output: calls to the offered tools with valid arguments, or the answer.
    func check(_ text: String, tools: [ToolCallFormat.Tool], maxCalls: Int, answer: ToolCallFormat.Answer, file: StaticString = #filePath, line: UInt = #line) {
        do {
            if let calls = try ToolCallFormat.parse(text) {
                XCTAssertTrue((1...max(1, maxCalls)).contains(calls.count), "\(calls.count) calls: \(text)", file: file, line: line)
                for c in calls {
                    guard let tool = tools.first(where: { $0.name == c.name }) else { return XCTFail("call to \(c.name) not offered: \(text)", file: file, line: line) }
                    XCTAssertEqual(SchemaValidator.validate(c.arguments, against: tool.parameters), [], text, file: file, line: line)
                }
                return
            }
        } catch {
            return XCTFail("accepted but unparsable: \(text): \(error)", file: file, line: line)
        }
        switch answer {
        case .callOnly: XCTFail("an answer where a call was required: \(text)", file: file, line: line)
        case .text:
            let lower = text.lowercased()
            XCTAssertFalse(text.isEmpty || text.hasPrefix("<") || lower.contains("<tool") || lower.contains("tool_call"), text, file: file, line: line)
        case .schema(let s):
            guard let v = try? JSONParser.parse(text) else { return XCTFail("answer is not JSON: \(text)", file: file, line: line) }
            XCTAssertEqual(SchemaValidator.validate(v, against: s), [], text, file: file, line: line)
        }
    }

    func testEveryGeneratedSentenceIsCallsOrTheAnswer() throws {
        var rng = SplitMix(seed: 7)
        for answer in [ToolCallFormat.Answer.text, .schema(answerSchema), .callOnly] {
            for subset in [tools, [tools[0]], [tools[3]], [tools[2]]] {
                for maxCalls in [1, 3] {
                    let g = try grammar(subset, maxCalls: maxCalls, answer)
                    for _ in 0..<60 {
                        let s = g.sample(using: &rng)
                        XCTAssertTrue(g.accepts(s), "sample not accepted: \(s)")
                        check(s, tools: subset, maxCalls: maxCalls, answer: answer)
                    }
                }
            }
        }
    }

    func testAcceptsCallsAndAnswersAndRejectsTheRest() throws {
        let g = try grammar(tools, maxCalls: 2, .text)
        let weather = call("get_weather", #"{"city":"Paris"}"#)
        let time = call("get_time", #"{"timezone":"UTC"}"#)
        for ok in [weather, weather + "\n" + time, call("no_args", "{}"), call("book-table", #"{"people":2,"when":{"day":"tue","hour":19.5}}"#),
                   "It is sunny.", " <b>sunny</b>", "Paris", "a <<too", "a <b>tool</b>", "a tool call", "the tool_cal", "x <toll_call>", "TOOL"] {
            XCTAssertTrue(g.accepts(ok), ok)
            check(ok, tools: tools, maxCalls: 2, answer: .text)
        }
        for bad in [call("get_wether", #"{"city":"Paris"}"#), call("get_weather", "{}"), call("get_time", #"{"timezone":"Mars"}"#),
                    call("book-table", #"{"people":20,"when":{"day":"tue"}}"#), weather + "\n" + weather + "\n" + time,
                    weather + " and then some text", "<tool_call*>", "<b>sunny</b>", "", "<tool_call>\n{\"name\":\"get_weather\"",
                    "Sure.\n" + weather, "a <<tool_call>", "a <tool<tool_call>",
                    // Imitations of a call, in any spelling: never an answer.
                    "\n<tool_call]\n{}", "a <tool_call", "x <tool_call >", "Sure <TOOL_CALL>", "see [tool_call]", "a <Tool>", "ok tool_CALL",
                    // A required string argument is never empty.
                    call("get_weather", #"{"city":""}"#)] {
            XCTAssertFalse(g.accepts(bad), bad)
        }
        // callOnly refuses any answer; a named tool alone refuses the others.
        let only = try grammar([tools[0]], maxCalls: 1, .callOnly)
        XCTAssertTrue(only.accepts(weather))
        XCTAssertFalse(only.accepts(time))
        XCTAssertFalse(only.accepts("It is sunny."))
        // No tools or no calls left: the answer alone.
        let none = try grammar([], maxCalls: 5, .schema(answerSchema))
        XCTAssertTrue(none.accepts(#"{"sky":"cloudy"}"#))
        XCTAssertFalse(none.accepts(weather))
        XCTAssertFalse(try grammar(tools, maxCalls: 0, .text).accepts(weather))
        XCTAssertThrowsError(try ToolCallFormat.gbnf(tools: [], maxCalls: 1, answer: .callOnly))
    }

    func testParsing() throws {
        XCTAssertNil(try ToolCallFormat.parse("It is sunny."))
        let two = try XCTUnwrap(ToolCallFormat.parse(call("a", #"{"x":1}"#) + "\n" + call("b", "{}")))
        XCTAssertEqual(two, [.init(name: "a", arguments: ["x": 1]), .init(name: "b", arguments: [:])])
        // Cut off by maxTokens: it began as a call, so it is an error, not an answer.
        XCTAssertThrowsError(try ToolCallFormat.parse("<tool_call>\n{\"name\":\"a\",\"argu"))
        XCTAssertTrue(ToolCallFormat.beginsWithCall("<"))
        XCTAssertFalse(ToolCallFormat.beginsWithCall("It"))
    }

    func testUnsupportedParametersAreRefusedWithTheirPath() {
        let bad = ToolCallFormat.Tool(name: "x", parameters: json(#"{"type":"object","properties":{"a":{"type":"string","pattern":"^a"}}}"#))
        XCTAssertThrowsError(try ToolCallFormat.gbnf(tools: [bad], maxCalls: 1, answer: .text)) { error in
            XCTAssertEqual(error as? SchemaGrammarError, .unsupportedKeyword(keyword: "pattern", path: "#/properties/arguments/properties/a"))
        }
    }
}

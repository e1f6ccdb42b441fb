import Foundation
import ParlanceJSON
import ParlanceSchema
import XCTest

/// SchemaBudget: the longest sentence a schema's grammar admits, and a tighter schema that
/// fits a character budget while what it admits still validates against the original.
final class SchemaBudgetTests: XCTestCase {
    func json(_ s: String) -> JSONValue { try! JSONParser.parse(s) }

    static let summary = #"""
        {"type":"object","properties":{
          "summary":{"type":"string","minLength":20,"maxLength":800},
          "topics":{"type":"array","items":{"type":"string","minLength":2,"maxLength":80},"minItems":3,"maxItems":5},
          "level":{"type":"string","enum":["low","medium","high"]},
          "score":{"type":"integer","minimum":0,"maximum":100},
          "ok":{"type":"boolean"}},
          "required":["summary","topics","level","score","ok"],"additionalProperties":false}
        """#

    /// The longest instance, built from the schema by hand: every string at maxLength,
    /// every array at maxItems, the longest enum member.
    func longest(_ schema: JSONValue) -> JSONValue {
        guard case .object(let o) = schema else { return .null }
        if case .array(let values)? = o["enum"] { return values.max { $0.serialized().count < $1.serialized().count }! }
        switch o["type"]?.stringValue {
        case "string": return .string(String(repeating: "x", count: o["maxLength"]?.intValue ?? 0))
        case "integer": return .int(o["maximum"]?.intValue ?? 0)
        case "boolean": return .bool(false)
        case "array": return .array(Array(repeating: longest(o["items"]!), count: o["maxItems"]?.intValue ?? 0))
        default:
            var out = JSONObject()
            for (k, v) in o["properties"]?.objectValue ?? JSONObject() { out[k] = longest(v) }
            return .object(out)
        }
    }

    func testMaxCharsBoundsTheLongestInstanceExactlyForStringsAndArrays() {
        XCTAssertEqual(SchemaBudget.maxChars(json(#"{"type":"string","maxLength":10}"#)), 12)
        XCTAssertEqual(SchemaBudget.maxChars(json(#"{"enum":["a","bbbb"]}"#)), 6)
        XCTAssertEqual(SchemaBudget.maxChars(json(#"{"type":"array","items":{"type":"string","maxLength":3},"maxItems":4}"#)), 2 + 4 * 7)
        let schema = json(Self.summary)
        XCTAssertGreaterThanOrEqual(SchemaBudget.maxChars(schema), longest(schema).serialized().count)
    }

    func testFittingShrinksToTheBudgetAndKeepsTheMinimums() throws {
        let schema = json(Self.summary)
        XCTAssertGreaterThan(SchemaBudget.maxChars(schema), 1000)
        let fitted = SchemaBudget.fitting(schema, chars: 1000)
        XCTAssertLessThanOrEqual(SchemaBudget.maxChars(fitted), 1000)
        let summary = try XCTUnwrap(fitted["properties"]?["summary"])
        let topics = try XCTUnwrap(fitted["properties"]?["topics"])
        XCTAssertLessThan(summary["maxLength"]?.intValue ?? .max, 800)
        XCTAssertGreaterThanOrEqual(summary["maxLength"]?.intValue ?? 0, 20)
        XCTAssertGreaterThanOrEqual(topics["maxItems"]?.intValue ?? 0, 3, "minItems kept")
        XCTAssertEqual(fitted["properties"]?["level"], schema["properties"]?["level"], "enums are left alone")

        // The fitted schema's longest instance fits the budget, is a sentence of the fitted
        // grammar, and validates against the original schema.
        let big = longest(fitted)
        XCTAssertLessThanOrEqual(big.serialized().count, 1000)
        XCTAssertEqual(SchemaValidator.validate(big, against: schema), [])
        let grammar = try GBNFGrammar(GrammarBuilder.gbnf(for: fitted))
        XCTAssertTrue(grammar.accepts(big.serialized()))
        XCTAssertFalse(grammar.accepts(longest(schema).serialized()), "the original's longest instance no longer fits")
    }

    func testFittingLeavesASchemaThatAlreadyFitsUnchanged() {
        let schema = json(#"{"type":"object","properties":{"a":{"type":"string","maxLength":5}},"required":["a"]}"#)
        XCTAssertEqual(SchemaBudget.fitting(schema, chars: 100), schema)
    }

    func testFittingStopsAtTheMinimumsWhenTheBudgetIsTooSmall() {
        let schema = json(#"{"type":"array","items":{"type":"string","minLength":4,"maxLength":50},"minItems":2,"maxItems":9}"#)
        let fitted = SchemaBudget.fitting(schema, chars: 3)
        XCTAssertEqual(fitted["minItems"], 2)
        XCTAssertEqual(fitted["maxItems"], 2)
        XCTAssertEqual(fitted["items"]?["maxLength"], 4)
    }

    /// A literal (`const`, `enum`) is left whole, its items' bounds included: a `const` list of
    /// two 40-character sentences under items of maxLength 200, fitted to a small budget, kept
    /// maxLength 200 (before, 16: no value satisfied the schema, and the grammar refused it).
    /// The prose beside it still shrinks.
    func testFittingLeavesALiteralAndItsItemsWhole() {
        let list = #"["The launch moves to March, not to May.","Then marketing needs the date by Friday."]"#
        let schema = json(#"{"type":"object","properties":{"summary":{"type":"string","maxLength":800},"#
            + #""takeaways":{"type":"array","items":{"type":"string","minLength":5,"maxLength":200},"minItems":2,"maxItems":2,"const":"# + list + "}},"
            + #""required":["summary","takeaways"]}"#)
        let fitted = SchemaBudget.fitting(schema, chars: 240)
        XCTAssertEqual(fitted["properties"]?["takeaways"], schema["properties"]?["takeaways"])
        XCTAssertLessThan(fitted["properties"]?["summary"]?["maxLength"]?.intValue ?? 800, 800)
        XCTAssertEqual(SchemaValidator.validate(["summary": "Short.", "takeaways": json(list)], against: fitted), [])
        XCTAssertNoThrow(try GrammarBuilder.gbnf(for: fitted))
    }
}

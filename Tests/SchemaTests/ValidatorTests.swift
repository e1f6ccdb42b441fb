import Foundation
import ParlanceJSON
import ParlanceSchema
import XCTest

final class ValidatorTests: XCTestCase {
    func json(_ s: String, file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
        do { return try JSONParser.parse(s) } catch {
            XCTFail("bad JSON in test: \(error)", file: file, line: line)
            return .null
        }
    }

    /// The violations as "path|keyword|message" lines.
    func check(_ value: String, _ schema: String) -> [String] {
        SchemaValidator.validate(json(value), against: json(schema)).map { "\($0.path)|\($0.keyword)|\($0.message)" }
    }

    func testType() {
        XCTAssertEqual(check(#""x""#, #"{"type":"string"}"#), [])
        XCTAssertEqual(check("1", #"{"type":"string"}"#), ["(root)|type|(root): expected string, got integer"])
        XCTAssertEqual(check("3.0", #"{"type":"integer"}"#), [])
        XCTAssertEqual(check("3", #"{"type":"number"}"#), [])
        XCTAssertEqual(check("3.5", #"{"type":"integer"}"#), ["(root)|type|(root): expected integer, got number"])
        XCTAssertEqual(check("null", #"{"type":["string","null"]}"#), [])
        XCTAssertEqual(check("true", #"{"type":["string","null"]}"#), ["(root)|type|(root): expected string or null, got boolean"])
        XCTAssertEqual(check("[]", #"{"type":"object"}"#), ["(root)|type|(root): expected object, got array"])
        XCTAssertEqual(check("{}", #"{"type":"array"}"#), ["(root)|type|(root): expected array, got object"])
        // A wrong type reports nothing else.
        XCTAssertEqual(check("5", #"{"type":"string","enum":["a"],"minLength":3}"#), ["(root)|type|(root): expected string, got integer"])
    }

    func testPropertiesRequiredAndAdditionalProperties() {
        let schema = #"""
            {"type":"object","properties":{"text":{"type":"string"},"options":{"type":"object",
            "properties":{"temperature":{"type":"number","maximum":2}},"additionalProperties":false}},
            "required":["text"],"additionalProperties":false}
            """#
        XCTAssertEqual(check(#"{"text":"a","options":{"temperature":1}}"#, schema), [])
        XCTAssertEqual(check(#"{}"#, schema), ["text|required|missing required field 'text'"])
        XCTAssertEqual(check(#"{"text":"a","foo":1}"#, schema), ["foo|additionalProperties|unknown field 'foo'"])
        XCTAssertEqual(check(#"{"text":1,"options":{"temperature":3.5,"x":null}}"#, schema), [
            "text|type|text: expected string, got integer",
            "options.temperature|maximum|options.temperature: must be ≤ 2, got 3.5",
            "options.x|additionalProperties|unknown field 'options.x'",
        ])
        // additionalProperties as a schema; absent means allowed.
        XCTAssertEqual(check(#"{"a":1,"b":"x"}"#, #"{"additionalProperties":{"type":"integer"}}"#),
                       ["b|type|b: expected integer, got string"])
        XCTAssertEqual(check(#"{"a":1}"#, #"{"properties":{}}"#), [])
        XCTAssertEqual(check(#"{"a":1}"#, #"{"additionalProperties":true}"#), [])
    }

    /// Found by the schema fuzzer: a field named "" at the root had an empty path.
    func testFieldNamesThatAreNotPlainAreQuotedInPaths() {
        XCTAssertEqual(check(#"{}"#, #"{"required":[""]}"#), [#"[""]|required|missing required field '[""]'"#])
        XCTAssertEqual(check(#"{"a":{}}"#, #"{"properties":{"a":{"required":["b.c"]}}}"#),
                       [#"a["b.c"]|required|missing required field 'a["b.c"]'"#])
        XCTAssertEqual(check(#"{"x":{}}"#, #"{"properties":{"x":{"required":["max-items_2"]}}}"#),
                       ["x.max-items_2|required|missing required field 'x.max-items_2'"])
    }

    func testItemsMinItemsMaxItemsUniqueItems() {
        let schema = #"{"type":"array","items":{"type":"string","enum":["formal","casual","empathetic","direct","diplomatic"]},"minItems":1,"maxItems":2,"uniqueItems":true}"#
        XCTAssertEqual(check(#"["formal","casual"]"#, schema), [])
        XCTAssertEqual(check(#"[]"#, schema), ["(root)|minItems|(root): must have at least 1 items, got 0"])
        XCTAssertEqual(check(#"["formal","loud","formal"]"#, schema), [
            "(root)|maxItems|(root): must have at most 2 items, got 3",
            "(root)|uniqueItems|(root): items 0 and 2 are equal",
            #"[1]|enum|[1]: "loud" is not one of formal, casual, empathetic, direct, diplomatic"#,
        ])
        XCTAssertEqual(check(#"{"tones":["formal","loud"]}"#, #"{"properties":{"tones":\#(schema)}}"#),
                       [#"tones[1]|enum|tones[1]: "loud" is not one of formal, casual, empathetic, direct, diplomatic"#])
        XCTAssertEqual(check("[1, 1.0]", #"{"uniqueItems":true}"#), ["(root)|uniqueItems|(root): items 0 and 1 are equal"])
        XCTAssertEqual(check(#"[{"a":1,"b":2},{"b":2,"a":1}]"#, #"{"uniqueItems":true}"#),
                       ["(root)|uniqueItems|(root): items 0 and 1 are equal"])
        XCTAssertEqual(check("[1, 2]", #"{"uniqueItems":true}"#), [])
        // Positional items.
        XCTAssertEqual(check(#"[1,"a",true]"#, #"{"items":[{"type":"integer"},{"type":"integer"}]}"#),
                       ["[1]|type|[1]: expected integer, got string"])
    }

    func testEnumAndConst() {
        XCTAssertEqual(check("2", #"{"enum":[1,2.0,"x",null]}"#), [])
        XCTAssertEqual(check("null", #"{"enum":[1,"x",null]}"#), [])
        XCTAssertEqual(check("3", #"{"enum":[1,"x",null]}"#), [#"(root)|enum|(root): 3 is not one of 1, x, null"#])
        XCTAssertEqual(check(#"{"a":[1]}"#, #"{"const":{"a":[1.0]}}"#), [])
        XCTAssertEqual(check(#""b""#, #"{"const":"a"}"#), [#"(root)|const|(root): expected "a", got "b""#])
    }

    func testNumericBounds() {
        XCTAssertEqual(check("0", #"{"minimum":0,"maximum":2}"#), [])
        XCTAssertEqual(check("2", #"{"minimum":0,"maximum":2}"#), [])
        XCTAssertEqual(check("-1", #"{"minimum":0}"#), ["(root)|minimum|(root): must be ≥ 0, got -1"])
        XCTAssertEqual(check("3.5", #"{"maximum":2}"#), ["(root)|maximum|(root): must be ≤ 2, got 3.5"])
        XCTAssertEqual(check("0", #"{"exclusiveMinimum":0}"#), ["(root)|exclusiveMinimum|(root): must be > 0, got 0"])
        XCTAssertEqual(check("0.1", #"{"exclusiveMinimum":0}"#), [])
        XCTAssertEqual(check("1", #"{"exclusiveMaximum":1}"#), ["(root)|exclusiveMaximum|(root): must be < 1, got 1"])
        XCTAssertEqual(check("0.5", #"{"minimum":0.5,"maximum":0.75}"#), [])
        XCTAssertEqual(check("0.76", #"{"minimum":0.5,"maximum":0.75}"#), ["(root)|maximum|(root): must be ≤ 0.75, got 0.76"])
        // Draft-4 boolean form.
        XCTAssertEqual(check("2", #"{"maximum":2,"exclusiveMaximum":true}"#), ["(root)|maximum|(root): must be < 2, got 2"])
        XCTAssertEqual(check("0", #"{"minimum":0,"exclusiveMinimum":true}"#), ["(root)|minimum|(root): must be > 0, got 0"])
        // Exact between large integers.
        XCTAssertEqual(check("4294967296", #"{"maximum":4294967295}"#), ["(root)|maximum|(root): must be ≤ 4294967295, got 4294967296"])
        // Bounds do not apply to other types.
        XCTAssertEqual(check(#""x""#, #"{"minimum":5}"#), [])
    }

    func testStringLengthAndPattern() {
        XCTAssertEqual(check(#""héllo""#, #"{"minLength":5,"maxLength":5}"#), [])
        XCTAssertEqual(check(#""😀😀""#, #"{"maxLength":2}"#), [])  // code points, not UTF-16 units
        XCTAssertEqual(check(#""ab""#, #"{"minLength":3}"#), ["(root)|minLength|(root): must be at least 3 characters long, got 2"])
        XCTAssertEqual(check(#""abcd""#, #"{"maxLength":3}"#), ["(root)|maxLength|(root): must be at most 3 characters long, got 4"])
        XCTAssertEqual(check(#""en-US""#, #"{"pattern":"^[a-z]{2}(-[A-Z]{2})?$"}"#), [])
        XCTAssertEqual(check(#""xx-us""#, #"{"pattern":"^[a-z]{2}(-[A-Z]{2})?$"}"#),
                       [#"(root)|pattern|(root): "xx-us" does not match the pattern ^[a-z]{2}(-[A-Z]{2})?$"#])
        XCTAssertEqual(check(#""abc""#, #"{"pattern":"b"}"#), [])  // unanchored
        XCTAssertEqual(check(#""abc""#, #"{"pattern":"("}"#),
                       ["(root)|pattern|(root): the schema's pattern ( is not a valid regular expression"])
    }

    func testAnyOfAndOneOf() {
        let nullable = #"{"anyOf":[{"type":"string"},{"type":"null"}]}"#
        XCTAssertEqual(check("null", nullable), [])
        XCTAssertEqual(check(#""a""#, nullable), [])
        XCTAssertEqual(check("1", nullable), ["(root)|type|(root): expected string or null, got integer"])
        // When an alternative has the value's type, its own complaints are reported.
        let objOrNull = #"{"anyOf":[{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false},{"type":"null"}]}"#
        XCTAssertEqual(check(#"{"a":1,"b":2}"#, objOrNull), ["b|additionalProperties|unknown field 'b'"])
        let one = #"{"oneOf":[{"type":"integer"},{"type":"number","minimum":0}]}"#
        XCTAssertEqual(check("-1", one), [])
        XCTAssertEqual(check("0.5", one), [])
        XCTAssertEqual(check("1", one), ["(root)|oneOf|(root): matches 2 alternatives, expected exactly one"])
        XCTAssertEqual(check(#""x""#, one), ["(root)|type|(root): expected integer or number, got string"])
    }

    func testBooleanSchemasAndIgnoredKeywords() {
        XCTAssertEqual(check("1", "true"), [])
        XCTAssertEqual(check("1", "false"), ["(root)|false|(root): no value is allowed here"])
        XCTAssertEqual(check(#"{"a":1}"#, #"{"properties":{"a":false}}"#), ["a|false|a: no value is allowed here"])
        let annotated = #"{"title":"T","description":"D","examples":[1],"default":1,"$schema":"x","$id":"y","$comment":"z","format":"email","type":"string"}"#
        XCTAssertEqual(check(#""not an email""#, annotated), [])
    }

    func testViolationDescriptionIsTheMessage() {
        let v = SchemaValidator.validate(.object(JSONObject()), against: json(#"{"required":["text"]}"#))
        XCTAssertEqual(v.map(\.description), ["missing required field 'text'"])
        XCTAssertEqual(v.first, SchemaViolation(path: "text", keyword: "required", message: "missing required field 'text'"))
    }

    func testDeepNestingIsBounded() {
        var schema: JSONValue = ["type": "integer"]
        var value: JSONValue = "x"
        for _ in 0..<400 {
            schema = ["type": "array", "items": schema]
            value = [value]
        }
        let v = SchemaValidator.validate(value, against: schema)
        XCTAssertEqual(v.count, 1)
        XCTAssertEqual(v.first?.keyword, "depth")
    }
}

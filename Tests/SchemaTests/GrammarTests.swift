import Foundation
import ParlanceJSON
import ParlanceSchema
import XCTest

/// Grammar tests: the GBNF GrammarBuilder writes is parsed by GBNFRecognizer (which also
/// enforces llama.cpp's parser limits) and must accept valid JSON texts and reject invalid
/// ones; every text it accepts, and every random sentence it generates, must parse and
/// validate against the schema.
final class GrammarTests: XCTestCase {
    func json(_ s: String) -> JSONValue { try! JSONParser.parse(s) }

    func grammar(_ schema: String, file: StaticString = #filePath, line: UInt = #line) -> GBNFGrammar? {
        do {
            let text = try GrammarBuilder.gbnf(for: json(schema))
            return try GBNFGrammar(text)
        } catch {
            XCTFail("\(error)", file: file, line: line)
            return nil
        }
    }

    /// Each text is accepted, parses, and validates.
    func accepts(_ schema: String, _ texts: [String], file: StaticString = #filePath, line: UInt = #line) {
        guard let g = grammar(schema, file: file, line: line) else { return }
        for t in texts {
            XCTAssertTrue(g.accepts(t), "should accept \(t)", file: file, line: line)
            guard let v = try? JSONParser.parse(t) else {
                XCTFail("accepted text is not JSON: \(t)", file: file, line: line)
                continue
            }
            XCTAssertEqual(SchemaValidator.validate(v, against: json(schema)), [], t, file: file, line: line)
        }
    }

    func rejects(_ schema: String, _ texts: [String], file: StaticString = #filePath, line: UInt = #line) {
        guard let g = grammar(schema, file: file, line: line) else { return }
        for t in texts { XCTAssertFalse(g.accepts(t), "should reject \(t)", file: file, line: line) }
    }

    /// Random sentences of the grammar parse and validate.
    func samplesValidate(_ schema: String, count: Int = 150, file: StaticString = #filePath, line: UInt = #line) {
        guard let g = grammar(schema, file: file, line: line) else { return }
        var rng = SplitMix(seed: 42)
        for _ in 0..<count {
            let t = g.sample(using: &rng)
            XCTAssertTrue(g.accepts(t), "sample not accepted: \(t)", file: file, line: line)
            guard let v = try? JSONParser.parse(t) else {
                XCTFail("sample is not JSON: \(t)", file: file, line: line)
                return
            }
            let violations = SchemaValidator.validate(v, against: json(schema))
            XCTAssertEqual(violations, [], t, file: file, line: line)
        }
    }

    static let object = #"""
        {"type":"object","properties":{"a":{"type":"integer","minimum":0,"maximum":9},"b":{"type":"string","maxLength":3},
        "c":{"type":"boolean"},"d":{"type":"null"}},"required":["b"],"additionalProperties":false}
        """#

    func testOptionalPropertiesEveryCombinationInDeclaredOrder() {
        let fields = [(#""a":1"#, "a"), (#""b":"x""#, "b"), (#""c":true"#, "c"), (#""d":null"#, "d")]
        guard let g = grammar(Self.object) else { return }
        for mask in 0..<16 {
            let chosen = fields.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element)
            let text = "{" + chosen.map(\.0).joined(separator: ",") + "}"
            XCTAssertEqual(g.accepts(text), chosen.contains { $0.1 == "b" }, text)
        }
        rejects(Self.object, [
            #"{"c":true,"b":"x"}"#, #"{"b":"x",}"#, #"{,"b":"x"}"#, #"{"b":"x",,"c":true}"#, #"{"b":"x" "c":true}"#,
            #"{"b":"x","e":1}"#, #"{"b":"x","b":"y"}"#, #"{"a":10,"b":"x"}"#, #"{"b":"xxxx"}"#, "{}",
        ])
        accepts(Self.object, [#"{"b":"x"}"#, #"{ "a": 1, "b": "x" }"#, "{\n  \"b\": \"\",\n  \"d\": null\n}"])
        samplesValidate(Self.object)
    }

    func testAllOptionalObject() {
        let s = #"{"properties":{"x":{"type":"integer"},"y":{"type":"integer"},"z":{"type":"integer"}}}"#
        guard let g = grammar(s) else { return }
        for mask in 0..<8 {
            let text = "{" + ["x", "y", "z"].enumerated().filter { mask & (1 << $0.offset) != 0 }
                .map { "\"\($0.element)\":1" }.joined(separator: ",") + "}"
            XCTAssertTrue(g.accepts(text), text)
        }
        rejects(s, [#"{"w":1}"#, "{,}", #"{"x":1,}"#, "{ }  "])
        accepts(s, ["{ }", "{}"])
    }

    func testIntegerRangesAreExact() {
        for (lo, hi) in [(0, 100), (-37, 1234), (5, 5), (-20, -3), (99, 101), (0, 4_294_967_295), (-1, 0)] {
            guard let g = grammar(#"{"type":"integer","minimum":\#(lo),"maximum":\#(hi)}"#) else { return }
            var probes = Array(-150...1300)
            probes += [lo - 1, lo, hi, hi + 1, 4_294_967_296, 9_999_999_999]
            for i in probes { XCTAssertEqual(g.accepts(String(i)), (lo...hi).contains(i), "\(i) in [\(lo), \(hi)]") }
            XCTAssertFalse(g.accepts("007"))
            XCTAssertFalse(g.accepts("1.0"))
            XCTAssertFalse(g.accepts("-0"))
        }
        // Exclusive and one-sided bounds; 16 digits at most on an open side.
        accepts(#"{"type":"integer","exclusiveMinimum":0}"#, ["1", "9999999999999999"])
        rejects(#"{"type":"integer","exclusiveMinimum":0}"#, ["0", "-1", "10000000000000000"])
        accepts(#"{"type":"integer","maximum":-5}"#, ["-5", "-9999999999999999"])
        rejects(#"{"type":"integer","maximum":-5}"#, ["-4", "0", "5"])
        accepts(#"{"type":"integer","minimum":0.5,"maximum":2.5}"#, ["1", "2"])
        rejects(#"{"type":"integer","minimum":0.5,"maximum":2.5}"#, ["0", "3"])
        samplesValidate(#"{"type":"integer","minimum":-37,"maximum":1234}"#)
    }

    /// Fuzz regression: a huge bound overflowed `Int` while merging digit blocks. Bounds are
    /// clamped to ±10^18.
    func testHugeIntegerBoundsAreClamped() {
        let s = #"{"type":"integer","minimum":-1e300,"maximum":42949000000000000000000000000000000000000000000000067295}"#
        accepts(s, ["0", "1000000000000000000", "-1000000000000000000", "999999999999999999"])
        rejects(s, ["1000000000000000001", "10000000000000000000", "-1000000000000000001"])
        accepts(#"{"type":"number","minimum":-1e300,"maximum":1e300}"#, ["0", "-12.5", "999999999999999999.9999", "-1000000000000000000"])
    }

    func testBoundedNumbersAreExactToFourDecimals() {
        let ranges: [(Double, Double)] = [(0, 1), (0.5, 2), (-1.25, 0.75), (0, 2), (-3, -0.5), (0.001, 0.0025), (0, 100)]
        var texts: [String] = []
        for whole in -4...4 {
            let w = whole < 0 ? "-\(-whole)" : "\(whole)"
            texts.append(w)
            for f in ["0", "5", "00", "25", "75", "001", "0025", "0026", "9999", "0001", "2", "12345"] { texts.append("\(w).\(f)") }
        }
        texts += ["-0.5", "-0.0001", "-0.75", "-0.25", "100", "100.0", "100.0001", "99.9999", "-0.001"]
        for (lo, hi) in ranges {
            guard let g = grammar(#"{"type":"number","minimum":\#(lo),"maximum":\#(hi)}"#) else { return }
            for t in texts {
                let v = Decimal(string: t)!
                let fractionDigits = t.split(separator: ".").dropFirst().first?.count ?? 0
                let expected = v >= Decimal(lo) && v <= Decimal(hi) && fractionDigits <= 4
                if v == 0 && t.hasPrefix("-") { continue }  // "-0…" may or may not be written
                XCTAssertEqual(g.accepts(t), expected, "\(t) in [\(lo), \(hi)]")
            }
            XCTAssertFalse(g.accepts(".5"))
            XCTAssertFalse(g.accepts("1e0"))
            XCTAssertFalse(g.accepts("00.5"))
        }
        accepts(#"{"type":"number","minimum":0,"maximum":1}"#, ["0", "1", "0.5", "0.1234", "1.0", "1.0000", "0.0"])
        rejects(#"{"type":"number","minimum":0,"maximum":1}"#, ["1.0001", "1.5", "0.12345", "-0.1", "2", "01"])
        rejects(#"{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}"#, ["0", "1", "0.0", "1.0"])
        accepts(#"{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}"#, ["0.0001", "0.9999", "0.5"])
        samplesValidate(#"{"type":"number","minimum":-1.25,"maximum":0.75}"#)
        // Unbounded numbers: no exponent, bounded digits.
        accepts(#"{"type":"number"}"#, ["0", "-1.5", "123.456", "3"])
        rejects(#"{"type":"number"}"#, ["1e5", "+1", "1.", "01", "NaN", "12345678901234567"])
    }

    func testStringsLengthEscapesAndBounds() {
        let s = #"{"type":"string","minLength":2,"maxLength":4}"#
        accepts(s, [#""ab""#, #""abcd""#, #""a\"b""#, #""\u00e9\n""#, "\"é中😀\"", #""a\\b""#, #""a\/""#])
        rejects(s, [#""a""#, #""abcde""#, "\"a\nb\"", #""a\xb""#, #"ab"#, #""ab"#, #""\u00e""#])
        // No maxLength: capped at the default; large maxLength: capped at maxRepetition.
        let long = String(repeating: "x", count: GrammarBuilder.defaultMaxStringLength)
        accepts(#"{"type":"string"}"#, ["\"\(long)\"", #""""#])
        rejects(#"{"type":"string"}"#, ["\"\(long)x\""])
        let max = String(repeating: "y", count: GrammarBuilder.maxRepetition)
        accepts(#"{"type":"string","maxLength":5000}"#, ["\"\(max)\""])
        rejects(#"{"type":"string","maxLength":5000}"#, ["\"\(max)y\""])
        accepts(#"{"type":"string","maxLength":0}"#, [#""""#])
        samplesValidate(s)
    }

    func testEnumsAndConst() {
        let tones = #"{"type":"string","enum":["formal","casual","empathetic","direct","diplomatic"]}"#
        accepts(tones, [#""formal""#, #""diplomatic""#])
        rejects(tones, [#""loud""#, "formal", #""Formal""#, #""formal ""#])
        let mixed = #"{"enum":[1,"a",null,true,2.5,{"k":[1]},"q\"uote"]}"#
        accepts(mixed, ["1", #""a""#, "null", "true", "2.5", #"{"k":[1]}"#, #""q\"uote""#])
        rejects(mixed, ["3", #""b""#, "false", "2.50", #"{"k":[2]}"#])
        // Members that fail the rest of the schema are dropped.
        accepts(#"{"type":"integer","enum":[1,"a",7],"maximum":5}"#, ["1"])
        rejects(#"{"type":"integer","enum":[1,"a",7],"maximum":5}"#, [#""a""#, "7"])
        accepts(#"{"const":"fixed"}"#, [#""fixed""#])
        rejects(#"{"const":"fixed"}"#, [#""other""#])
        let cues = #"{"type":"array","items":{"type":"integer","enum":[3,14,15,92]},"maxItems":2}"#
        accepts(cues, ["[3,92]", "[]", "[14]"])
        rejects(cues, ["[4]", "[3,14,15]"])
    }

    func testArrays() {
        let s = #"{"type":"array","items":{"type":"string","maxLength":5},"minItems":1,"maxItems":3}"#
        accepts(s, [#"["a"]"#, #"["a","b","c"]"#, #"[ "a", "b" ]"#, "[\n  \"a\",\n  \"b\"\n]"])
        rejects(s, ["[]", #"["a","b","c","d"]"#, #"["a",]"#, #"[,"a"]"#, #"["a""b"]"#, #"[1]"#, #"["toolong"]"#])
        accepts(#"{"type":"array","maxItems":0}"#, ["[]"])
        rejects(#"{"type":"array","maxItems":0}"#, ["[1]"])
        let many = "[" + Array(repeating: "1", count: GrammarBuilder.defaultMaxItems).joined(separator: ",") + "]"
        accepts(#"{"type":"array","items":{"type":"integer"}}"#, [many, "[]"])
        rejects(#"{"type":"array","items":{"type":"integer"}}"#, [String(many.dropLast()) + ",1]"])
        samplesValidate(s)
    }

    func testNestedObjects() {
        let s = #"""
            {"type":"object","properties":{"user":{"type":"object","properties":{"name":{"type":"string","minLength":1},
            "age":{"type":"integer","minimum":0,"maximum":150}},"required":["name"],"additionalProperties":false},
            "tags":{"type":"array","items":{"type":"string"},"maxItems":2}},"required":["user","tags"],"additionalProperties":false}
            """#
        accepts(s, [#"{"user":{"name":"A"},"tags":[]}"#, #"{"user":{"name":"A","age":150},"tags":["x","y"]}"#])
        rejects(s, [#"{"user":{"name":"A","age":151},"tags":[]}"#, #"{"user":{"age":1},"tags":[]}"#,
                    #"{"user":{"name":"A"}}"#, #"{"user":{"name":"A","x":1},"tags":[]}"#, #"{"user":{"name":""},"tags":[]}"#])
        samplesValidate(s)
    }

    func testAnyOfOneOfAndTypeArrays() {
        let s = #"{"anyOf":[{"type":"string","maxLength":3},{"type":"integer","minimum":0,"maximum":9}]}"#
        accepts(s, [#""abc""#, "5"])
        rejects(s, [#""abcd""#, "10", "null"])
        let nullable = #"{"type":["string","null"],"maxLength":2}"#
        accepts(nullable, ["null", #""ab""#])
        rejects(nullable, ["1", #""abc""#])
        // Sibling keywords are merged into each alternative.
        let merged = #"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false,"oneOf":[{"required":["a"]},{"required":["b"]}]}"#
        accepts(merged, [#"{"a":1}"#, #"{"b":2}"#])
        rejects(merged, ["{}", #"{"c":1}"#])
        samplesValidate(s)
        samplesValidate(nullable)
    }

    func testAnyValueAndDictionaries() {
        accepts("{}", ["1", #""x""#, "null", #"{"a":[1,{"b":null}]}"#, "[[[true]]]"])
        rejects("{}", ["[[[[1]]]]", "[1,]", "{\"a\"}", "nul"])
        accepts("true", ["[]", "{}"])
        let dict = #"{"type":"object","additionalProperties":{"type":"integer","minimum":0}}"#
        accepts(dict, ["{}", #"{"a":1,"b":2}"#])
        rejects(dict, [#"{"a":"x"}"#, #"{"a":-1}"#, #"{"a":1,}"#])
        accepts(#"{"type":"object","additionalProperties":false}"#, ["{}", "{ }"])
        rejects(#"{"type":"object","additionalProperties":false}"#, [#"{"a":1}"#])
        // Declared properties exclude extras even when additionalProperties allows them.
        rejects(#"{"properties":{"a":{"type":"integer"}},"additionalProperties":true}"#, [#"{"a":1,"b":2}"#])
        // A required name missing from properties is declared with the additionalProperties schema.
        accepts(#"{"required":["id"],"additionalProperties":{"type":"integer"}}"#, [#"{"id":3}"#])
        rejects(#"{"required":["id"],"additionalProperties":{"type":"integer"}}"#, ["{}", #"{"id":"x"}"#])
        accepts(#"{"type":"boolean"}"#, ["true", "false"])
        accepts(#"{"type":"null"}"#, ["null"])
        samplesValidate("{}", count: 60)
        samplesValidate(dict)
    }

    func testWhitespaceIsBounded() {
        let s = #"{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"]}"#
        accepts(s, [#"{"a":[1,2]}"#, #"{ "a" : [ 1, 2 ] }"#, "{\n\t\"a\": [\n\t\t1,\n\t\t2\n\t]\n}"])
        rejects(s, [
            "{  \"a\":[1]}", "{\"a\":[1]}\n", " {\"a\":[1]}", "{\"a\":[1]" + String(repeating: "\n", count: 20) + "}",
            "{\n" + String(repeating: " ", count: 9) + "\"a\":[1]}", "{\"a\":[1 ,2]}",
        ])
    }

    func testDerivedResultSchema() {
        let schema = SchemaDeriver.schema(for: DRequest.self)
        guard let g = try? GBNFGrammar(GrammarBuilder.gbnf(for: schema)) else { return XCTFail("no grammar") }
        let ok = #"{"text":"hi","tones":["formal"],"options":{"temperature":0.5},"tags":{},"matrix":[[0.25,-1]],"extra":{"x":[1]}}"#
        XCTAssertTrue(g.accepts(ok))
        XCTAssertFalse(g.accepts(#"{"tones":["formal"],"options":{},"tags":{},"matrix":[]}"#))
        XCTAssertFalse(g.accepts(#"{"text":"hi","tones":["loud"],"options":{},"tags":{},"matrix":[]}"#))
        XCTAssertFalse(g.accepts(#"{"text":"hi","tones":[],"options":{},"tags":{},"matrix":[]}"#))
        XCTAssertFalse(g.accepts(#"{"text":"hi","tones":["formal"],"options":{"temperature":2.5},"tags":{},"matrix":[]}"#))
        samplesValidate(schema.serialized(), count: 60)
    }

    func testOutputIsDeterministicAndStartsWithRoot() throws {
        let a = try GrammarBuilder.gbnf(for: json(Self.object))
        let b = try GrammarBuilder.gbnf(for: json(Self.object))
        XCTAssertEqual(a, b)
        XCTAssertTrue(a.hasPrefix("root ::= "))
        XCTAssertEqual(try GrammarBuilder.gbnf(for: json(#"{"type":"integer"}"#)), "root ::= integer\ninteger ::= \"-\"? (\"0\" | [1-9] [0-9]{0,15})\n")
    }

    func testObjectGrammarSnapshot() throws {
        XCTAssertEqual(try GrammarBuilder.gbnf(for: json(Self.object)), #"""
            root ::= "{" ws members ws "}"
            ws ::= | " " | "\n" [ \t]{0,8}
            a ::= [0-9]
            a-kv ::= "\"a\"" ws ":" ws a
            char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
            b ::= "\"" char{0,3} "\""
            b-kv ::= "\"b\"" ws ":" ws b
            boolean ::= "true" | "false"
            c-kv ::= "\"c\"" ws ":" ws boolean
            null ::= "null"
            d-kv ::= "\"d\"" ws ":" ws null
            after-d ::= ("," ws d-kv)?
            after-c ::= ("," ws c-kv)? after-d
            after-b ::= "," ws b-kv after-c
            members ::= a-kv after-b | b-kv after-c

            """#)
    }

    // MARK: Errors

    func testUnsupportedKeywordsNameKeywordAndPath() {
        let keywords: [(String, String)] = [
            ("$ref", ##""#/$defs/x""##), ("$defs", "{}"), ("allOf", "[{}]"), ("not", "{}"), ("if", "{}"), ("then", "{}"),
            ("else", "{}"), ("patternProperties", "{}"), ("dependentRequired", "{}"), ("pattern", #""^a$""#),
            ("propertyNames", "{}"), ("contains", "{}"), ("minProperties", "1"), ("maxProperties", "1"),
            ("prefixItems", "[]"), ("multipleOf", "2"), ("uniqueItems", "true"), ("items", "[{}]"),
            ("unevaluatedProperties", "false"), ("additionalItems", "false"), ("dependentSchemas", "{}"),
        ]
        for (k, v) in keywords {
            let schema = #"{"type":"object","properties":{"x/y":{"type":"array","items":{"type":"string","\#(k)":\#(v)}}}}"#
            XCTAssertThrowsError(try GrammarBuilder.gbnf(for: json(schema))) { e in
                XCTAssertEqual(e as? SchemaGrammarError, .unsupportedKeyword(keyword: k, path: "#/properties/x~1y/items"), k)
            }
        }
        XCTAssertThrowsError(try GrammarBuilder.gbnf(for: json(#"{"anyOf":[{"type":"null"},{"not":{}}]}"#))) { e in
            XCTAssertEqual(e as? SchemaGrammarError, .unsupportedKeyword(keyword: "not", path: "#/anyOf/1"))
            XCTAssertEqual("\(e)", "schema keyword 'not' at #/anyOf/1 is not supported")
        }
        XCTAssertThrowsError(try GrammarBuilder.gbnf(for: json(##"{"$ref":"#"}"##))) { e in
            XCTAssertEqual(e as? SchemaGrammarError, .unsupportedKeyword(keyword: "$ref", path: "#"))
        }
        // Annotations are ignored; uniqueItems false is harmless.
        XCTAssertNoThrow(try GrammarBuilder.gbnf(for: json(#"{"title":"t","description":"d","examples":[],"default":1,"$schema":"s","$id":"i","$comment":"c","format":"date","uniqueItems":false,"type":"string"}"#)))
    }

    func testInvalidSchemas() {
        let cases: [(String, String)] = [
            ("false", "the schema at # is false: no value satisfies it"),
            ("3", "the schema at # must be an object or a boolean, got integer"),
            (#"{"type":"foo"}"#, "unknown type 'foo' at #"),
            (#"{"type":"string","minLength":5,"maxLength":2}"#, "minLength 5 at # is above maxLength 2"),
            (#"{"type":"string","minLength":2500}"#, "minLength 2500 at # is above the grammar's limit of 1999"),
            (#"{"type":"string","enum":[1,2]}"#, "no 'enum' value at # satisfies the rest of its schema"),
            (#"{"type":"integer","minimum":0.2,"maximum":0.8}"#, "no integer at # satisfies its bounds"),
            (#"{"type":"array","minItems":3,"maxItems":1}"#, "minItems 3 at # is above maxItems 1 or the grammar's limit"),
            (#"{"required":["a"],"additionalProperties":false}"#,
             "required property 'a' at # is not allowed by additionalProperties: false"),
            (#"{"properties":{"a":false},"required":["a"]}"#, "property 'a' at # is required but its schema is false"),
            (#"{"anyOf":[]}"#, "'anyOf' at # must be a non-empty array"),
            (#"{"type":"string","maxLength":-1}"#, "'maxLength' at # must be a non-negative integer"),
            (#"{"type":"number","minimum":"0"}"#, "'minimum' at # must be a number"),
        ]
        for (schema, message) in cases {
            XCTAssertThrowsError(try GrammarBuilder.gbnf(for: json(schema)), schema) { e in
                XCTAssertEqual("\(e)", message, schema)
            }
        }
    }

    func testDeepAndHugeSchemasAreRefusedNotCrashing() {
        var schema: JSONValue = ["type": "integer"]
        for _ in 0..<100 { schema = ["type": "array", "items": schema] }
        XCTAssertThrowsError(try GrammarBuilder.gbnf(for: schema))
        // anyOf with siblings doubles per level: bounded by the visit budget.
        var wide: JSONValue = ["type": "integer"]
        for _ in 0..<40 { wide = ["anyOf": [wide, wide], "oneOf": [wide, ["type": "null"]]] }
        XCTAssertThrowsError(try GrammarBuilder.gbnf(for: wide))
    }
}

/// A small deterministic generator for sampling.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

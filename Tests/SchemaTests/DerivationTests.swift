import Foundation
import ParlanceJSON
import XCTest

@testable import ParlanceSchema

enum DTone: String, Codable, Sendable, SchemaEnum {
    case formal, casual, empathetic, direct, diplomatic
    static let schemaDescription: String? = "How it should sound."
}

struct DOptions: Codable, Schematic {
    var temperature: Double?
    var topK: UInt8?
    static let schemaHints: [String: SchemaHint] = ["temperature": SchemaHint(description: "0 = greedy.", minimum: 0, maximum: 2)]
}

struct DRequest: Codable, Schematic {
    var text: String
    var tones: [DTone]
    var count: Int?
    var options: DOptions
    var tags: [String: Int]
    var matrix: [[Double]]
    var extra: JSONValue?
    var names: [String]?
    static let schemaDescription: String? = "A request."
    static let schemaTitle = "Request"
    static let schemaHints: [String: SchemaHint] = [
        "text": SchemaHint(description: "The text.", minLength: 1, maxLength: 100),
        "tones": .items(1, 3),
        "names": SchemaHint(minItems: 1, minLength: 2, enumValues: ["ab", "cd"]),
        "options": .description("Model options."),
        "tags": SchemaHint(minimum: 0),
        "matrix": SchemaHint(description: "Rows.", maxItems: 4, minimum: -1, maximum: 1),
    ]
}

struct DEmpty: Codable, Schematic {}

final class DNode: Decodable {
    var name: String
    var children: [DNode]
    var parent: DNode?
}

struct DDefaults: Decodable, Schematic {
    var a: String
    var b: Int
    var c: Bool
    var d: String?
    var e: DTone?
    var f: Int
    enum CodingKeys: String, CodingKey { case a, b, c = "c_flag", d, e, f }
    init(from decoder: any Decoder) throws {
        let k = try decoder.container(keyedBy: CodingKeys.self)
        a = try k.decode(String.self, forKey: .a)
        b = try k.decodeIfPresent(Int.self, forKey: .b) ?? 5
        c = k.contains(.c) ? try k.decode(Bool.self, forKey: .c) : false
        d = try k.decode(String?.self, forKey: .d)
        e = try k.decode(DTone?.self, forKey: .e)
        f = try k.decodeNil(forKey: .f) ? 0 : try k.decode(Int.self, forKey: .f)
    }
}

struct DMisc: Decodable {
    var url: URL
    var id: UUID
    var data: Data
    var date: Date
    var set: Set<String>
    var dec: Decimal
    var i8: Int8
    var u32: UInt32
    var u: UInt
}

enum DLevel: Int, Codable, CaseIterable { case low = 1, high = 3 }
enum DRaw: String, Codable { case only }

struct DRawHolder: Decodable {
    var level: DLevel
    var maybe: DRaw?
    var raw: DRaw
    var lost: Int
}

/// Reads a nested container by hand (`{"point": {"x": 1, "y": 2}, "pairs": [[...]]}`).
struct DNested: Decodable, Schematic {
    var x: Double
    var y: Double
    var pairs: [String]
    enum Outer: String, CodingKey { case point, pairs }
    enum Inner: String, CodingKey { case x, y }
    init(from decoder: any Decoder) throws {
        let o = try decoder.container(keyedBy: Outer.self)
        let p = try o.nestedContainer(keyedBy: Inner.self, forKey: .point)
        x = try p.decode(Double.self, forKey: .x)
        y = try p.decodeIfPresent(Double.self, forKey: .y) ?? 0
        var u = try o.nestedUnkeyedContainer(forKey: .pairs)
        var out: [String] = []
        while !u.isAtEnd { out.append(try u.decode(String.self)) }
        pairs = out
    }
}

/// A single-value wrapper.
struct DToken: Decodable, Schematic {
    var value: String
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(String.self) }
    static let schemaDescription: String? = "An opaque token."
}

final class DerivationTests: XCTestCase {
    func s<T: Decodable>(_ t: T.Type) -> String { SchemaDeriver.schema(for: t).serialized() }

    func testNestedStructsOptionalsArraysEnumsDictionariesAndHints() {
        XCTAssertEqual(s(DRequest.self), #"""
            {"type":"object","title":"Request","description":"A request.","properties":{\#
            "text":{"type":"string","description":"The text.","minLength":1,"maxLength":100},\#
            "tones":{"type":"array","items":{"type":"string","description":"How it should sound.",\#
            "enum":["formal","casual","empathetic","direct","diplomatic"]},"minItems":1,"maxItems":3},\#
            "count":{"type":"integer"},\#
            "options":{"type":"object","title":"DOptions","description":"Model options.","properties":{\#
            "temperature":{"type":"number","description":"0 = greedy.","minimum":0,"maximum":2},\#
            "topK":{"type":"integer","minimum":0,"maximum":255}},"additionalProperties":false},\#
            "tags":{"type":"object","additionalProperties":{"type":"integer","minimum":0}},\#
            "matrix":{"type":"array","description":"Rows.","items":{"type":"array","items":\#
            {"type":"number","minimum":-1,"maximum":1}},"maxItems":4},\#
            "extra":{},\#
            "names":{"type":"array","items":{"type":"string","enum":["ab","cd"],"minLength":2},"minItems":1}},\#
            "required":["text","tones","options","tags","matrix"],"additionalProperties":false}
            """#)
    }

    func testEmptyStructIsAnObjectWithNoProperties() {
        XCTAssertEqual(s(DEmpty.self), #"{"type":"object","title":"DEmpty","properties":{},"additionalProperties":false}"#)
    }

    func testRecursiveTypeStopsAtTheRepeatedType() {
        XCTAssertEqual(s(DNode.self), #"""
            {"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{}},\#
            "parent":{}},"required":["name","children"],"additionalProperties":false}
            """#)
    }

    func testCustomInitWithDefaultsContainsAndNullables() {
        XCTAssertEqual(s(DDefaults.self), #"""
            {"type":"object","title":"DDefaults","properties":{"a":{"type":"string"},"b":{"type":"integer"},\#
            "c_flag":{"type":"boolean"},"d":{"type":["string","null"]},\#
            "e":{"type":["string","null"],"description":"How it should sound.",\#
            "enum":["formal","casual","empathetic","direct","diplomatic",null]},\#
            "f":{"type":["integer","null"]}},"required":["a","d","e","f"],"additionalProperties":false}
            """#)
    }

    func testFoundationTypesAndFixedWidthIntegers() {
        XCTAssertEqual(s(DMisc.self), #"""
            {"type":"object","properties":{"url":{"type":"string","format":"uri"},\#
            "id":{"type":"string","format":"uuid"},"data":{"type":"string","contentEncoding":"base64"},\#
            "date":{"type":"number"},"set":{"type":"array","items":{"type":"string"}},"dec":{"type":"number"},\#
            "i8":{"type":"integer","minimum":-128,"maximum":127},\#
            "u32":{"type":"integer","minimum":0,"maximum":4294967295},"u":{"type":"integer","minimum":0}},\#
            "required":["url","id","data","date","set","dec","i8","u32","u"],"additionalProperties":false}
            """#)
    }

    func testRawValueEnums() {
        // CaseIterable raw enums get an enum; a required non-CaseIterable one cannot be built
        // from a placeholder, so recording stops there (the optional one is answered with nil).
        XCTAssertEqual(s(DRawHolder.self), #"""
            {"type":"object","properties":{"level":{"type":"integer","enum":[1,3]},"maybe":{"type":"string"},\#
            "raw":{"type":"string"}},"required":["level","raw"],"additionalProperties":false}
            """#)
    }

    func testNestedContainersAndSingleValueWrappers() {
        XCTAssertEqual(s(DNested.self), #"""
            {"type":"object","title":"DNested","properties":{"point":{"type":"object","properties":\#
            {"x":{"type":"number"},"y":{"type":"number"}},"required":["x"],"additionalProperties":false},\#
            "pairs":{"type":"array","items":{"type":"string"}}},"required":["point","pairs"],"additionalProperties":false}
            """#)
        XCTAssertEqual(s(DToken.self), #"{"type":"string","description":"An opaque token."}"#)
    }

    func testTopLevelShapes() {
        XCTAssertEqual(s(JSONValue.self), "{}")
        XCTAssertEqual(s([String].self), #"{"type":"array","items":{"type":"string"}}"#)
        XCTAssertEqual(s(String.self), #"{"type":"string"}"#)
        XCTAssertEqual(s(Int?.self), #"{"type":["integer","null"]}"#)
        XCTAssertEqual(s([String: [Bool]].self), #"{"type":"object","additionalProperties":{"type":"array","items":{"type":"boolean"}}}"#)
        XCTAssertEqual(s(DTone.self), #"{"type":"string","description":"How it should sound.","enum":["formal","casual","empathetic","direct","diplomatic"]}"#)
    }

    func testDeterministicAndUncachedDerivationAgrees() {
        let a = s(DRequest.self)
        let b = s(DRequest.self)
        let fresh = SchemaDeriver.canonical(DerivationContext().derive(DRequest.self, codingPath: []).schema).serialized()
        XCTAssertEqual(a, b)
        XCTAssertEqual(a, fresh)
    }

    func testHintsOnObjectsAndNonArraysIgnoreWhatDoesNotApply() {
        struct H: Decodable, Schematic {
            var o: DOptions
            var n: Int
            static let schemaHints: [String: SchemaHint] = [
                "o": SchemaHint(minItems: 2, minLength: 3, minimum: 1),
                "n": SchemaHint(minItems: 2, format: "int32"),
            ]
        }
        let schema = SchemaDeriver.schema(for: H.self)
        XCTAssertEqual(schema["properties"]?["o"], SchemaDeriver.schema(for: DOptions.self))
        XCTAssertEqual(schema["properties"]?["n"]?.serialized(), #"{"type":"integer","format":"int32"}"#)
    }

    func testDerivedSchemasValidateEncodedValues() throws {
        let r = DRequest(text: "hi", tones: [.formal], count: nil, options: DOptions(temperature: 0.5, topK: 40),
                         tags: ["a": 1], matrix: [[0.5, -1]], extra: ["x": 1], names: ["ab"])
        let v = try JSONValue(encoding: r)
        XCTAssertEqual(SchemaValidator.validate(v, against: SchemaDeriver.schema(for: DRequest.self)), [])
    }
}

import Foundation
import ParlanceJSON
import XCTest

/// `JSONValue(encoding:)` builds the value directly: the same value Foundation's encoder
/// and the parser gave, with members in the order encoded.
final class JSONValueEncoderTests: XCTestCase {
    enum Kind: String, Codable { case a, b }
    struct Inner: Codable, Equatable {
        var z: Int
        var a: [Double]
        var free: JSONValue?
    }
    struct Outer: Codable {
        var name: String
        var count: Int
        var ratio: Double
        var whole: Double
        var small: Float
        var big: UInt64
        var kind: Kind
        var missing: String?
        var inner: Inner
        var list: [Inner]
        var map: [String: Int]
        var url: URL
        var bytes: Data
        var nested: [[Int?]]
    }

    func sample() -> Outer {
        Outer(name: "é \"q\" / \n", count: -3, ratio: 0.1, whole: 2, small: 1.5, big: UInt64.max, kind: .b, missing: nil,
              inner: Inner(z: 1, a: [1, 2.5, -0.0], free: .object(JSONObject([("y", 1), ("x", [true, .null])]))),
              list: [Inner(z: 2, a: [], free: nil)], map: ["k": 1, "j": 2], url: URL(string: "https://example.com/a?b=c")!,
              bytes: Data([0, 1, 254]), nested: [[1, nil], []])
    }

    func testSameValueAsFoundationsEncoderAndTheParser() throws {
        let direct = try JSONValue(encoding: sample())
        let enc = JSONEncoder()
        enc.outputFormatting = [.withoutEscapingSlashes]
        let viaFoundation = try JSONParser.parse(try enc.encode(sample()))
        XCTAssertEqual(direct, viaFoundation)
        XCTAssertEqual(direct["whole"], .int(2), "a whole number is an integer, as Foundation writes it")
        XCTAssertNil(direct["missing"], "nil optionals are left out")
        XCTAssertEqual(direct["url"], "https://example.com/a?b=c")
        XCTAssertEqual(direct["bytes"], "AAH+")
    }

    func testMembersInTheOrderEncoded() throws {
        let v = try JSONValue(encoding: sample())
        XCTAssertEqual(v.objectValue?.keys, ["name", "count", "ratio", "whole", "small", "big", "kind", "inner", "list", "map", "url", "bytes", "nested"])
        XCTAssertEqual(v["inner"]?.objectValue?.keys, ["z", "a", "free"])
        XCTAssertEqual(v["inner"]?["free"]?.objectValue?.keys, ["y", "x"], "a free-form value keeps its own order")
        let again = try JSONValue(encoding: sample())
        XCTAssertEqual(v.serialized(), again.serialized(), "the same bytes every time")
    }

    func testNonFiniteNumbersAreRefused() {
        struct N: Encodable { var x: Double }
        XCTAssertThrowsError(try JSONValue(encoding: N(x: .nan)))
        XCTAssertThrowsError(try JSONValue(encoding: [Double.infinity]))
    }
}

import ParlanceJSON
import XCTest

/// A free-form JSONValue field (a client's schema) decoded inside typed params keeps its
/// members in the order written: a schema's grammar lays properties out in that order, so
/// the same request gives the same grammar, and with `deterministic` the same output.
final class JSONValueDecodeTests: XCTestCase {
    struct Params: Decodable {
        var name: String
        var schema: JSONValue
    }

    func testMembersKeepTheirOrderThroughTypedDecoding() throws {
        let names = (0..<24).map { "k\((7 * $0) % 24)" }
        let props = JSONObject(names.map { ($0, JSONValue.object(JSONObject([("type", "string")]))) })
        let raw: JSONValue = .object(JSONObject([("name", "x"), ("schema", .object(JSONObject([("type", "object"), ("properties", .object(props)), ("required", .array(names.map { .string($0) }))])))]))
        for _ in 0..<5 {
            let p = try raw.decode(Params.self)
            XCTAssertEqual(p.schema["properties"]?.objectValue?.keys, names)
            XCTAssertEqual(p.schema.serialized(), raw["schema"]?.serialized())
        }
    }
}

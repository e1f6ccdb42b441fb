import ParlanceJSON
import XCTest

final class JSONParserTests: XCTestCase {
    func testRoundTripKeepsKeyOrder() throws {
        let s = #"{"z":1,"a":[true,false,null],"m":{"y":"é\n\"","b":-2.5e3}}"#
        let v = try JSONParser.parse(s)
        XCTAssertEqual(v.serialized(), #"{"z":1,"a":[true,false,null],"m":{"y":"é\n\"","b":-2500.0}}"#)
        XCTAssertEqual(v.objectValue?.keys, ["z", "a", "m"])
    }

    func testUnicodeEscapesAndSurrogates() throws {
        XCTAssertEqual(try JSONParser.parse(#""\u00e9\ud83d\ude00""#), .string("é😀"))
        XCTAssertThrowsError(try JSONParser.parse(#""\ud83d""#))
    }

    func testRejects() {
        for bad in ["", "{", "[1,]", "{\"a\":}", "01", "1.", "tru", "{\"a\" 1}", "[1] x", "\"\u{01}\"", "NaN", "{'a':1}"] {
            XCTAssertThrowsError(try JSONParser.parse(bad), bad)
        }
    }

    func testInvalidUTF8() {
        XCTAssertThrowsError(try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]))
    }

    func testDepthLimitInsteadOfStackOverflow() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertThrowsError(try JSONParser.parse(deep)) { e in
            XCTAssertTrue("\(e)".contains("deeper"))
        }
    }

    func testIntegersStayIntegers() throws {
        XCTAssertEqual(try JSONParser.parse("12345678901"), .int(12_345_678_901))
        XCTAssertEqual(try JSONParser.parse("1.0"), .double(1))
        XCTAssertEqual(try JSONParser.parse("99999999999999999999"), .double(1e20))
    }
}

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

    /// The writer copies runs that need no escape whole; what needs one is escaped wherever
    /// it falls, also inside a grapheme (a quote under a combining accent, CR LF) and at either
    /// end of a string.
    func testEscapesEverywhereAndRoundTrips() throws {
        let samples = ["", "plain", "\"", "\"\u{301}x", "a\r\nb", "\\", "\u{1}\u{1F}", "tab\tend\n", "\u{2028}\u{2029}\u{2027}",
                       "é—“quoted” 日本語 🇳🇴", "\u{E2}\u{80}", "\"\\\n\u{0}"]
        for s in samples {
            let text = JSONValue.string(s).serialized()
            XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{2028}" || $0 == "\u{2029}" }, text)
            XCTAssertEqual(try JSONParser.parse(Data(text.utf8)), .string(s), text)
        }
        XCTAssertEqual(JSONValue.string("a\"\u{301}\n\u{2028}").serialized(), #""a\"\#u{301}\n\u2028""#)
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

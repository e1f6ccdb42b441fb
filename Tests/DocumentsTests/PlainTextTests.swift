import ParlanceDocuments
import XCTest

final class PlainTextTests: XCTestCase {
    func testParagraphsSpeakersAndScalarOffsets() {
        let text = "Café ☕️ time. This is a test.\n\nSecond paragraph\nwraps here.\n\nALICE: Hi Bob.\nBOB: Hi Alice.\nStill Bob.\n\nAnd Bob again."
        let t = parsed(text)
        XCTAssertEqual(t.format, .text)
        XCTAssertEqual(t.segments.map(\.text), [
            "Café ☕️ time. This is a test.", "Second paragraph wraps here.", "Hi Bob.", "Hi Alice. Still Bob.", "And Bob again.",
        ])
        XCTAssertEqual(t.segments.map(\.speaker), [nil, nil, "ALICE", "BOB", "BOB"])
        XCTAssertEqual(t.segments.map(\.start), [nil, nil, nil, nil, nil])
        // "Café ☕️ time. This is a test." is 29 scalars (the cup is U+2615 U+FE0F).
        XCTAssertEqual(t.segments.map(\.startOffset), [0, 30, 59, 67, 88])
        XCTAssertEqual(t.segments.map(\.endOffset), [29, 58, 66, 87, 102])
        for s in t.segments { XCTAssertEqual(t.slice(s), s.text) }
        XCTAssertEqual(t.plainText.unicodeScalars.count, 102)
    }

    func testLongParagraphIsSplitIntoSentenceGroups() {
        let sentence = "Dr. Raman measured the battery drain on the laptop again today."  // 63 scalars
        let text = Array(repeating: sentence, count: 20).joined(separator: " ")
        let t = parsed(text, .text)
        XCTAssertEqual(t.segments.count, 4)
        XCTAssertTrue(t.segments.allSatisfy { $0.text.hasPrefix("Dr. Raman") && $0.text.hasSuffix("today.") })
        XCTAssertEqual(t.segments.map { $0.text.unicodeScalars.count }, [383, 383, 383, 127])
        for s in t.segments { XCTAssertEqual(t.slice(s), s.text) }
    }

    func testWhitespaceOnlyIsEmpty() {
        XCTAssertEqual(parseError(" \n \n", .text), .empty)
    }

    func testTimestampsAsTextWhenForced() {
        let t = parsed("00:00:01,000 --> 00:00:02,000", .text)
        XCTAssertEqual(t.segments.map(\.text), ["00:00:01,000 --> 00:00:02,000"])
    }
}

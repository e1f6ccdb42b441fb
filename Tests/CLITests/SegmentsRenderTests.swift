import ParlanceInProcess
import ParlanceJSON
import XCTest

/// `parlance segments` prints one line per segment: `[id] hh:mm:ss SPEAKER: text`.
final class SegmentsRenderTests: XCTestCase {
    func testOneLinePerSegment() {
        let r: JSONValue = ["segments": [
            ["id": 12, "start": 194.6, "end": 199.0, "speaker": "MAYA", "text": "We ship on Friday."],
            ["id": 13, "start": 3725.0, "end": 3730.0, "text": "An hour in, no label."],
            ["id": 14, "speaker": "Theo", "text": "Plain text has no times.", "startOffset": 40, "endOffset": 64],
        ]]
        XCTAssertEqual(Render.segments(r), """
            [12] 00:03:14 MAYA: We ship on Friday.
            [13] 01:02:05 An hour in, no label.
            [14] Theo: Plain text has no times.

            """)
        XCTAssertEqual(Render.segments(["segments": []]), "")
    }
}

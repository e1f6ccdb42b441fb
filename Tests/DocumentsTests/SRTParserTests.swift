import ParlanceDocuments
import XCTest

final class SRTParserTests: XCTestCase {
    let basic = """
        1
        00:00:01,000 --> 00:00:02,500
        ALICE: Hello there.

        2
        00:00:03,000 --> 00:00:04,000
        <i>How are</i>
        you?

        """

    func testBasicCuesSpeakersOffsets() {
        let t = parsed(basic)
        XCTAssertEqual(t.format, .srt)
        XCTAssertEqual(t.warnings, [])
        XCTAssertEqual(t.segments, [
            Segment(id: 1, start: 1.0, end: 2.5, speaker: "ALICE", text: "Hello there.", startOffset: 0, endOffset: 12),
            Segment(id: 2, start: 3.0, end: 4.0, speaker: "ALICE", text: "How are you?", startOffset: 13, endOffset: 25),
        ])
        XCTAssertEqual(t.plainText, "Hello there.\nHow are you?")
    }

    func testBOMAndCRLF() {
        let text = "\u{FEFF}1\r\n00:00:01,000 --> 00:00:02,000\r\nHi\r\nthere\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nBye\r\n"
        let t = parsed(text)
        XCTAssertEqual(TranscriptParser.detectFormat(text), .srt)
        XCTAssertEqual(t.segments.map(\.text), ["Hi there", "Bye"])
        XCTAssertEqual(t.warnings, [])
    }

    func testLoneCarriageReturnsAndNoTrailingBlankLine() {
        let t = parsed("1\r00:00:01,000 --> 00:00:02,000\rOne\r\r2\r00:00:03,000 --> 00:00:04,000\rTwo", .srt)
        XCTAssertEqual(t.segments.map(\.text), ["One", "Two"])
        XCTAssertEqual(t.segments.last?.end, 4.0)
        XCTAssertEqual(t.warnings, [])
    }

    func testMalformedTimingIsWarnedWithLineNumberAndSkipped() {
        let text = """
            1
            00:00:01,000 --> 00:00:02,000
            One

            2
            00:00:0x,000 --> 00:00:04,000
            Two

            3
            00:00:05,000 --> 00:00:06,000
            Three
            """
        let t = parsed(text)
        XCTAssertEqual(t.segments.map(\.text), ["One", "Three"])
        XCTAssertEqual(t.segments.map(\.id), [1, 2])
        XCTAssertEqual(t.warnings.count, 1)
        XCTAssertEqual(t.warnings.first?.line, 6)
        XCTAssertTrue(t.warnings.first?.message.contains("malformed start time") ?? false)
    }

    func testDotMillisecondsAndShortForms() {
        let t = parsed("00:01:02.5 --> 1:02:03\nA\n\n00:10.250 --> 00:11.000\nB\n", .srt)
        XCTAssertEqual(t.segments.map(\.start), [62.5, 10.25])
        XCTAssertEqual(t.segments.map(\.end), [3723.0, 11.0])
    }

    func testMissingAndWrongCueNumbers() {
        let text = "7\n00:00:01,000 --> 00:00:02,000\nA\n\n00:00:03,000 --> 00:00:04,000\nB\n\n3\n00:00:05,000 --> 00:00:06,000\nC\n"
        let t = parsed(text)
        XCTAssertEqual(t.segments.map(\.id), [1, 2, 3])
        XCTAssertEqual(t.segments.map(\.text), ["A", "B", "C"])
        XCTAssertEqual(t.warnings, [])
    }

    func testMissingBlankLineBetweenCues() {
        let t = parsed("1\n00:00:01,000 --> 00:00:02,000\nA\n2\n00:00:03,000 --> 00:00:04,000\nB\n")
        XCTAssertEqual(t.segments.map(\.text), ["A", "B"])
        XCTAssertEqual(t.warnings.map(\.line), [4])
    }

    func testEndBeforeStartIsRepairedAndWarned() {
        let t = parsed("1\n00:00:05,000 --> 00:00:02,000\nBackwards\n")
        XCTAssertEqual(t.segments.first?.start, 5.0)
        XCTAssertEqual(t.segments.first?.end, 5.0)
        XCTAssertEqual(t.warnings.map(\.line), [2])
    }

    func testGarbageLinesAreWarnedAndIgnored() {
        let text = "random garbage\nmore garbage\n\n1\n00:00:01,000 --> 00:00:02,000\nReal text\n\ntrailing junk\n"
        let t = parsed(text, .srt)
        XCTAssertEqual(t.segments.map(\.text), ["Real text"])
        XCTAssertEqual(t.warnings.map(\.line), [1, 8])
    }

    func testHugeNumbersDoNotTrap() {
        let text = "1\n99999999999999999999999:00:00,000 --> 00:00:01,000\nA\n\n2\n00:00:01,000 --> 00:00:02,99999999999999999999\nB\n"
        let t = parsed(text)
        XCTAssertEqual(t.segments.map(\.text), ["B"])
        XCTAssertEqual(t.segments.first?.end ?? 0, 3.0, accuracy: 1e-6)
        XCTAssertEqual(t.warnings.map(\.line), [2])
    }

    func testStylingTagsAndEntities() {
        let t = parsed("1\n00:00:01,000 --> 00:00:02,000\n{\\an8}<font color=\"#ff0000\">Red</font>   <b>bold</b> &amp; <u>under</u>\nx < y and a<b\n")
        XCTAssertEqual(t.segments.first?.text, "Red bold & under x < y and a<b")
    }

    func testSpeakerLabelForms() {
        let text = """
            1
            00:00:01,000 --> 00:00:02,000
            Dr. Jane Smith: Welcome.

            2
            00:00:03,000 --> 00:00:04,000
            SPEAKER 2: Thanks.

            3
            00:00:05,000 --> 00:00:06,000
            Note: not a speaker.

            4
            00:00:07,000 --> 00:00:08,000
            the time is 10:30: fine

            5
            00:00:09,000 --> 00:00:10,000
            - Are you coming?
            - Yes.

            6
            00:00:11,000 --> 00:00:12,000
            - JOHN: Hi.
            - MARY: Hello.

            7
            00:00:13,000 --> 00:00:14,000
            Still Mary.
            """
        let t = parsed(text)
        // Two speakers in one cue make two segments, sharing the cue's second by length.
        XCTAssertEqual(t.segments.map(\.speaker), [
            "Dr. Jane Smith", "SPEAKER 2", "SPEAKER 2", "SPEAKER 2", nil, "JOHN", "MARY", "MARY",
        ])
        XCTAssertEqual(t.segments.map(\.text), [
            "Welcome.", "Thanks.", "Note: not a speaker.", "the time is 10:30: fine", "Are you coming? Yes.",
            "Hi.", "Hello.", "Still Mary.",
        ])
        XCTAssertEqual(t.segments[5].start, 11.0)
        XCTAssertEqual(t.segments[5].end, 11.333)
        XCTAssertEqual(t.segments[6].start, 11.333)
        XCTAssertEqual(t.segments[6].end, 12.0)
        XCTAssertEqual(t.speakers, ["Dr. Jane Smith", "SPEAKER 2", "JOHN", "MARY"])
    }

    func testOnlyTimestampsIsNoText() {
        XCTAssertEqual(parseError("1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\n"), .noText)
        XCTAssertEqual(parseError("1\n00:00:01,000 --> 00:00:02,000\n<i></i>\n", .srt), .noText)
    }

    func testEmptyInputs() {
        XCTAssertEqual(parseError(""), .empty)
        XCTAssertEqual(parseError("   \n\r\n\t\n"), .empty)
        XCTAssertEqual(parseError("\u{FEFF}"), .empty)
        XCTAssertEqual(parseError("\u{FEFF}\n\u{00A0}\n", .srt), .empty)
        XCTAssertThrowsError(try TranscriptParser.parse(bytes: [], format: .srt)) { XCTAssertEqual($0 as? TranscriptParseError, .empty) }
    }

    func testInvalidUTF8() {
        XCTAssertThrowsError(try TranscriptParser.parse(bytes: [0x31, 0x0A, 0xFF, 0xFE, 0x41], format: nil)) {
            XCTAssertEqual($0 as? TranscriptParseError, .invalidUTF8)
        }
        XCTAssertThrowsError(try TranscriptParser.parse(bytes: [0xC3], format: .text)) {
            XCTAssertEqual($0 as? TranscriptParseError, .invalidUTF8)
        }
    }

    func testBytesAndStringAgree() throws {
        let t = try TranscriptParser.parse(bytes: Array(basic.utf8), format: nil)
        XCTAssertEqual(t.segments, parsed(basic).segments)
    }

    func testFormatNames() throws {
        XCTAssertEqual(try TranscriptFormat(name: "WebVTT"), .vtt)
        XCTAssertEqual(try TranscriptFormat(name: "SRT"), .srt)
        XCTAssertEqual(try TranscriptFormat(name: "txt"), .text)
        XCTAssertThrowsError(try TranscriptFormat(name: "docx")) { XCTAssertEqual($0 as? TranscriptParseError, .unknownFormat("docx")) }
    }
}

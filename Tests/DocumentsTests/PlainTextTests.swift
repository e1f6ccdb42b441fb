import Foundation
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

    /// A chat pasted as one line is one segment per turn, with its speaker: a label after the
    /// end of a sentence starts a turn. A numbered label does so only when the speakers are
    /// numbered; a label's word that names no one ("Note:") and a colon mid-sentence do not.
    func testTurnsOnOneLine() throws {
        let text = "Maya: The release moves to May. Theo: Then docs need an update by Friday! Maya: Agreed.\n"
            + "Speaker 1: We have two phases. Phase 2: launch. Speaker 2: Fine? Note: the time is 10:30.\n"
            + "Alice: ask Bob: he knows."
        let t = parsed(text, .text)
        XCTAssertEqual(t.segments.map(\.speaker), ["Maya", "Theo", "Maya", "Speaker 1", "Speaker 2", "Alice"])
        XCTAssertEqual(t.segments.map(\.text), [
            "The release moves to May.", "Then docs need an update by Friday!", "Agreed.",
            "We have two phases. Phase 2: launch.", "Fine? Note: the time is 10:30.", "ask Bob: he knows.",
        ])
        let utf16 = Array(text.utf16)
        for s in t.segments {
            let start = try XCTUnwrap(s.sourceStart, s.text), end = try XCTUnwrap(s.sourceEnd, s.text)
            XCTAssertEqual(String(decoding: utf16[start..<end], as: UTF16.self), s.text)
        }
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

    /// Each segment's source range, in UTF-16 code units of the text as sent, covers exactly
    /// its text once whitespace is collapsed: labels, CRLF, runs of spaces, non-BMP emoji.
    func testSourceOffsetsPointIntoTheTextAsSent() throws {
        let text = "\u{FEFF}Intro line 😀  with   gaps.\r\n\r\nALICE:   Hi Bob.\r\nBOB: Hi\u{00A0}Alice.\nStill Bob.\n\n\n  And Bob again.  "
        let t = parsed(text, .text)
        XCTAssertEqual(t.segments.map(\.text), ["Intro line 😀 with gaps.", "Hi Bob.", "Hi Alice. Still Bob.", "And Bob again."])
        let utf16 = Array(text.utf16)
        for s in t.segments {
            let start = try XCTUnwrap(s.sourceStart, s.text), end = try XCTUnwrap(s.sourceEnd, s.text)
            let slice = try XCTUnwrap(String(utf16CodeUnits: Array(utf16[start..<end]), count: end - start) as String?)
            let collapsed = slice.split(whereSeparator: { $0.isWhitespace || $0 == "\u{00A0}" }).joined(separator: " ")
            XCTAssertEqual(collapsed, s.text)
        }
        // The emoji is two UTF-16 units: "Intro line 😀  with   gaps." ends at 1 + 27.
        XCTAssertEqual(t.segments.first?.sourceStart, 1)
        XCTAssertEqual(t.segments.first?.sourceEnd, 28)
        XCTAssertEqual(t.segments[1].sourceStart, (text as NSString).range(of: "Hi Bob.").location)
    }

    /// Cues have times, not offsets; a split long paragraph keeps offsets per piece.
    func testOnlyPlainTextGetsSourceOffsets() {
        let srt = parsed("1\n00:00:01,000 --> 00:00:02,000\nHello.\n")
        XCTAssertNil(srt.segments.first?.sourceStart)
        let sentence = "Dr. Raman measured the battery drain on the laptop again today."
        let long = parsed(Array(repeating: sentence, count: 20).joined(separator: " "), .text)
        XCTAssertEqual(long.segments.map(\.sourceStart), [0, 384, 768, 1152])
    }
}

import ParlanceDocuments
import XCTest

final class VTTParserTests: XCTestCase {
    let sample = """
        WEBVTT - Interview
        Kind: captions
        Language: en

        NOTE this is a note
        that spans lines

        STYLE
        ::cue { color: yellow }

        REGION
        id:fred width:40%

        intro
        00:01.000 --> 00:04.500 align:start position:10% line:0
        <v Roger Bingham>We are in New York City

        00:00:05.000 --> 00:00:06.000
        <v.loud Neil>Hi <c.yellow>there</c> &amp; welcome</v>

        3
        00:06.500 --> 00:08.000
        <00:06.600>continuing<00:07.000> <i>words</i>
        """

    func testHeaderNotesStylesVoicesSettings() {
        let t = parsed(sample)
        XCTAssertEqual(t.format, .vtt)
        XCTAssertEqual(t.warnings, [])
        XCTAssertEqual(t.segments.map(\.start), [1.0, 5.0, 6.5])
        XCTAssertEqual(t.segments.map(\.end), [4.5, 6.0, 8.0])
        XCTAssertEqual(t.segments.map(\.speaker), ["Roger Bingham", "Neil", "Neil"])
        XCTAssertEqual(t.segments.map(\.text), ["We are in New York City", "Hi there & welcome", "continuing words"])
        XCTAssertEqual(t.plainText, "We are in New York City\nHi there & welcome\ncontinuing words")
        XCTAssertEqual(t.segments.map(\.startOffset), [0, 24, 43])
    }

    func testDetection() {
        XCTAssertEqual(TranscriptParser.detectFormat("\u{FEFF}\n\nWEBVTT\n\n00:01.000 --> 00:02.000\nHi"), .vtt)
        XCTAssertEqual(TranscriptParser.detectFormat("WEBVTTX is not a header"), .text)
        XCTAssertEqual(TranscriptParser.detectFormat("Just some words.\nAnd more."), .text)
        XCTAssertEqual(TranscriptParser.detectFormat("Title\n\n1\n00:00:01,000 --> 00:00:02,000\nHi"), .srt)
    }

    func testLeadingBlankLinesBeforeHeader() {
        let t = parsed("\u{FEFF}\n\nWEBVTT\n\n00:01.000 --> 00:02.000\nHi\n")
        XCTAssertEqual(t.format, .vtt)
        XCTAssertEqual(t.segments.map(\.text), ["Hi"])
        XCTAssertEqual(t.warnings, [])
    }

    func testMissingHeaderIsWarnedWhenForced() {
        let t = parsed("00:01.000 --> 00:02.000\nHello\n", .vtt)
        XCTAssertEqual(t.segments.map(\.text), ["Hello"])
        XCTAssertEqual(t.warnings.map(\.line), [1])
    }

    func testHeaderDirectlyFollowedByCueAndCRLF() {
        let t = parsed("WEBVTT\r\n00:00:01.000 --> 00:00:02.000\r\n<v Ann>One\r\n\r\nNOTE\r\nskip me\r\n\r\n00:00:03.000 --> 00:00:04.000\r\nTwo", nil)
        XCTAssertEqual(t.segments.map(\.text), ["One", "Two"])
        XCTAssertEqual(t.segments.map(\.speaker), ["Ann", "Ann"])
        XCTAssertEqual(t.warnings, [])
    }

    func testLabelsInsideVTTAndMultipleVoices() {
        let text = "WEBVTT\n\n00:01.000 --> 00:02.000\nHOST: Welcome\n\n00:02.000 --> 00:03.000\n<v A>Hi</v>\n<v B>Hello</v>\n"
        let t = parsed(text)
        XCTAssertEqual(t.segments.map(\.speaker), ["HOST", "A", "B"])
        XCTAssertEqual(t.segments.map(\.text), ["Welcome", "Hi", "Hello"])
    }

    func testMalformedVTTTimingLine() {
        let text = "WEBVTT\n\n00:01.000 --> 00:02.000\nfine\n\n00:61.000 --> 00:62.000\nbad seconds\n\n00:03.000 --> 00:04.000\nfine again\n"
        let t = parsed(text)
        XCTAssertEqual(t.segments.map(\.text), ["fine", "fine again"])
        XCTAssertEqual(t.warnings.map(\.line), [6])
    }

    func testOnlyHeaderIsNoText() {
        XCTAssertEqual(parseError("WEBVTT\n\nNOTE nothing here\n"), .noText)
    }
}

import Foundation
import ParlanceDocuments
import XCTest

/// Speakers as people: a first name after a full name is one person, and a label in the
/// middle of a cue starts that speaker's turn there.
final class SpeakerTests: XCTestCase {
    let podcast = """
        1
        00:00:01,000 --> 00:00:03,000
        Bekah Hawrot Weigel: Welcome to the show.

        2
        00:00:03,000 --> 00:00:05,000
        Reda Jtayed: Thanks for having me.

        3
        00:00:05,000 --> 00:00:08,100
        Bekah: That's true. Reda: I think
        it matters.

        4
        00:00:08,100 --> 00:00:10,000
        One: install the tools at 10:30. Then: rest.

        5
        00:00:10,000 --> 00:00:11,000
        Bekah: Great.
        """

    func testFirstNamesAreAliasesOfEarlierFullNames() {
        let t = parsed(podcast)
        XCTAssertEqual(t.speakers, ["Bekah Hawrot Weigel", "Reda Jtayed"])
        XCTAssertEqual(t.aliases, ["Bekah Hawrot Weigel": ["Bekah"], "Reda Jtayed": ["Reda"]])
        XCTAssertEqual(t.people, [
            Speaker(name: "Bekah Hawrot Weigel", aliases: ["Bekah"]), Speaker(name: "Reda Jtayed", aliases: ["Reda"]),
        ])
    }

    func testLabelMidCueStartsASegment() {
        let t = parsed(podcast)
        XCTAssertEqual(t.warnings, [])
        XCTAssertEqual(t.segments.map(\.text), [
            "Welcome to the show.", "Thanks for having me.", "That's true.", "I think it matters.",
            "One: install the tools at 10:30. Then: rest.", "Great.",
        ])
        XCTAssertEqual(t.segments.map(\.speaker), [
            "Bekah Hawrot Weigel", "Reda Jtayed", "Bekah Hawrot Weigel", "Reda Jtayed", "Reda Jtayed", "Bekah Hawrot Weigel",
        ])
        XCTAssertEqual(t.segments.map(\.id), [1, 2, 3, 4, 5, 6])
        // The cue's 3.1 s are shared by length: 12 of 31 characters, then 19.
        XCTAssertEqual(t.segments[2].start, 5.0)
        XCTAssertEqual(t.segments[2].end, 6.2)
        XCTAssertEqual(t.segments[3].start, 6.2)
        XCTAssertEqual(t.segments[3].end, 8.1)
        for s in t.segments { XCTAssertEqual(t.slice(s), s.text) }
    }

    func testOnlyKnownNamesAfterASentenceAreLabelsMidLine() {
        let text = """
            1
            00:00:01,000 --> 00:00:02,000
            Ann: The plan. Step Two: wait. Bob: no,
            Yes, Ann: that too.

            2
            00:00:02,000 --> 00:00:03,000
            Bob: Fine.
            """
        let t = parsed(text)
        XCTAssertEqual(t.segments.map(\.text), ["The plan. Step Two: wait.", "no, Yes, Ann: that too.", "Fine."])
        XCTAssertEqual(t.segments.map(\.speaker), ["Ann", "Bob", "Bob"])
    }

    func testAmbiguousOrNumberedNamesStayApart() {
        let text = """
            1
            00:00:01,000 --> 00:00:02,000
            Dan Ott: One.

            2
            00:00:02,000 --> 00:00:03,000
            Dan Brown: Two.

            3
            00:00:03,000 --> 00:00:04,000
            Dan: Three.

            4
            00:00:04,000 --> 00:00:05,000
            Speaker 2: Four.

            5
            00:00:05,000 --> 00:00:06,000
            Speaker: Five.

            6
            00:00:06,000 --> 00:00:07,000
            Maya: Six.

            7
            00:00:07,000 --> 00:00:08,000
            Maya Lin: Seven.
            """
        let t = parsed(text)
        XCTAssertEqual(t.speakers, ["Dan Ott", "Dan Brown", "Dan", "Speaker 2", "Speaker", "Maya", "Maya Lin"])
        XCTAssertEqual(t.aliases, [:])
        XCTAssertEqual(t.people.map(\.aliases), Array(repeating: [], count: 7))
    }

    func testTranscriptsWithoutAliasesDecode() throws {
        let t = parsed(podcast)
        var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(t)) as? [String: Any] ?? [:]
        XCTAssertNotNil(json["aliases"])
        XCTAssertEqual(try JSONDecoder().decode(ParsedTranscript.self, from: JSONEncoder().encode(t)), t)
        json["aliases"] = nil
        let old = try JSONDecoder().decode(ParsedTranscript.self, from: JSONSerialization.data(withJSONObject: json))
        XCTAssertEqual(old.aliases, [:])
        XCTAssertEqual(old.segments, t.segments)
    }

    /// virtual-coffee-s8e5.srt labels first turns with full names, later ones with first names.
    func testRealPodcastSpeakersArePeople() throws {
        let t = try TranscriptParser.parse(RealWorldFiles.text("virtual-coffee-s8e5.srt"), format: nil)
        XCTAssertEqual(t.warnings, [])
        XCTAssertEqual(t.speakers, ["Bekah Hawrot Weigel", "Dan Ott", "Reda"])
        XCTAssertEqual(t.people, [
            Speaker(name: "Bekah Hawrot Weigel", aliases: ["Bekah"]), Speaker(name: "Dan Ott", aliases: ["Dan"]),
            Speaker(name: "Reda"),
        ])
        XCTAssertEqual(t.segments.count, 935)
        XCTAssertEqual(t.segments.first { $0.text.hasPrefix("It is going fantastic.") }?.speaker, "Bekah Hawrot Weigel")
        XCTAssertEqual(t.segments.first { $0.text == "Nice." }?.speaker, "Dan Ott")
        XCTAssertEqual(t.segments.first { $0.text == "Hi." }?.speaker, "Reda")
        XCTAssertFalse(t.segments.contains { ["Bekah", "Dan"].contains($0.speaker) })
    }
}

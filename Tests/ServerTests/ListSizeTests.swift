import ParlanceDocuments
@testable import ParlanceFeatures
import ParlanceJSON
import ParlanceSchema
import XCTest

/// A list drawn from a transcript holds no more items than the transcript has sentences.
final class ListSizeTests: XCTestCase {
    func testTheUsualRangeNarrowedToTheSentences() {
        XCTAssertEqual(ListSize(3...5, sentences: 40).range, 3...5)
        XCTAssertEqual(ListSize(3...5, sentences: 5).range, 3...5)
        XCTAssertEqual(ListSize(3...5, sentences: 4).range, 3...4)
        XCTAssertEqual(ListSize(3...5, sentences: 2).range, 2...2)
        XCTAssertEqual(ListSize(1...3, sentences: 2).range, 1...2)
        XCTAssertEqual(ListSize(3...5, sentences: 0).range, 1...1)
        XCTAssertEqual(ListSize(3...5, sentences: 9).words, "3-5")
        XCTAssertEqual(ListSize(3...5, sentences: 2).words, "2")
    }

    func testTheSizeGoesIntoTheSchemaAndTheTask() throws {
        let segments = try TranscriptParser.parse("Maya: the release moves to May. Theo: then docs need an update by Friday.", format: nil).segments
        XCTAssertEqual(ListSize.sentences(in: segments), 2)
        let size = ListSize(3...5, sentences: ListSize.sentences(in: segments))
        let schema = size.applied(to: SchemaDeriverProbe.listSchema, at: "items")
        XCTAssertEqual(schema["properties"]?["items"]?["minItems"], 2)
        XCTAssertEqual(schema["properties"]?["items"]?["maxItems"], 2)
        let task = Summaries.task(topics: size, takeaways: size)
        XCTAssertTrue(task.contains("mainTopics (2 short topics)"), task)
        XCTAssertFalse(task.contains("3-5"), task)
        // A transcript long enough asks for what it always did.
        XCTAssertTrue(Summaries.task(topics: ListSize(3...5, sentences: 30), takeaways: ListSize(3...5, sentences: 30))
            .contains("mainTopics (3-5 short topics), keyTakeaways (3-5 concrete takeaways)"))
    }

    /// A transcript shorter than the list's usual size: the list is its own sentences, a
    /// `const` the grammar writes as it stands (GrammarBuilder's `const`), and no other list validates.
    func testAShortTranscriptsListIsItsOwnSentences() throws {
        let segments = try TranscriptParser.parse("the release moves to May. Docs need an update by Friday.", format: nil).segments
        let size = ListSize(3...5, sentences: ListSize.sentences(in: segments))
        XCTAssertTrue(size.narrowed)
        let schema = size.applied(to: SchemaDeriverProbe.listSchema, at: "items", sentencesOf: segments)
        // The sentences as they stand, the first letter capitalised.
        let list: JSONValue = ["The release moves to May.", "Docs need an update by Friday."]
        XCTAssertEqual(schema["properties"]?["items"]?["const"], list)
        XCTAssertEqual(SchemaValidator.validate(["items": list], against: schema), [])
        XCTAssertFalse(SchemaValidator.validate(["items": ["The release moves to May.", "Thetos are for a 3-day trial period."]], against: schema).isEmpty)
        // Fewer usable sentences than the list's minimum, or a transcript long enough: sized only.
        // ("ok." is shorter than the item's minLength, read from the schema.)
        let one = try TranscriptParser.parse("the release moves to May. ok.", format: nil).segments
        let sized = ListSize(3...5, sentences: ListSize.sentences(in: one)).applied(to: SchemaDeriverProbe.listSchema, at: "items", sentencesOf: one)
        XCTAssertNil(sized["properties"]?["items"]?["const"])
        XCTAssertEqual(sized["properties"]?["items"]?["minItems"], 2)
        let long = try TranscriptParser.parse(String(repeating: "The team ships the release on time. ", count: 6), format: nil).segments
        let kept = ListSize(3...5, sentences: ListSize.sentences(in: long))
        XCTAssertFalse(kept.narrowed)
        XCTAssertNil(kept.applied(to: SchemaDeriverProbe.listSchema, at: "items", sentencesOf: long)["properties"]?["items"]?["const"])
    }

    /// A short transcript's topics are its own phrases: runs of two to five words inside one
    /// clause, neither starting nor ending with a stopword, offered as an `enum`.
    func testAShortTranscriptsTopicsAreItsOwnPhrases() throws {
        let segments = try TranscriptParser.parse("Maya: the release moves to May. Theo: then docs need an update by Friday.", format: nil).segments
        let phrases = ListSize.phraseChoices(segments, length: ListSize.itemLength(SchemaDeriverProbe.listSchema, at: "items"))
        for p in ["Release moves", "Release moves to May", "Docs need an update", "Update by Friday"] { XCTAssertTrue(phrases.contains(p), "\(p) in \(phrases)") }
        // Not across the speaker label's colon, not ending with a stopword, not six words.
        for p in ["Theo then docs", "Docs need an", "Docs need an update by Friday"] { XCTAssertFalse(phrases.contains(p), p) }
        XCTAssertFalse(phrases.contains { $0.contains("Theo") && $0.contains("docs") }, "\(phrases)")
        let size = ListSize(3...5, sentences: ListSize.sentences(in: segments))
        let schema = size.applied(to: SchemaDeriverProbe.listSchema, at: "items", phrasesOf: segments)
        XCTAssertEqual(schema["properties"]?["items"]?["items"]?["enum"], .array(phrases.map(JSONValue.string)))
        XCTAssertEqual(SchemaValidator.validate(["items": ["Release moves to May", "Docs need an update"]], against: schema), [])
        XCTAssertFalse(SchemaValidator.validate(["items": ["Release moves to May", "Thetos will be available on Monday"]], against: schema).isEmpty)
    }

    /// A cue that holds a second speaker's turn ("… Bob: Then marketing …"; a plain-text line
    /// is cut into turns, a cue is not): the label is not part of a takeaway, and the turn's
    /// first word is a sentence's first word, not a name ("Then marketing" was a topic).
    func testASecondSpeakersLabelIsNeitherATakeawayNorATopic() throws {
        let srt = "1\n00:00:01,000 --> 00:00:09,000\nAlice: We moved the launch to March. Bob: Then marketing needs the new date by Friday.\n"
        let segments = try TranscriptParser.parse(srt, format: nil).segments
        XCTAssertEqual(segments.count, 1, "a cue is one segment")
        let length = ListSize.itemLength(SchemaDeriverProbe.listSchema, at: "items")
        XCTAssertEqual(ListSize.sentenceChoices(segments, length: length), ["We moved the launch to March.", "Then marketing needs the new date by Friday."])
        let phrases = ListSize.phraseChoices(segments, length: length)
        XCTAssertTrue(phrases.contains("Marketing needs the new date"), "\(phrases)")
        XCTAssertFalse(phrases.contains { $0.hasPrefix("Then") || $0.contains("Bob") }, "\(phrases)")
        // "Note:" names no one: the sentence keeps it. A label may end in a number.
        XCTAssertEqual(Sentences.withoutSpeakerLabel("Note: the room is booked."), "Note: the room is booked.")
        XCTAssertEqual(Sentences.withoutSpeakerLabel(" Speaker 2: Yes."), "Yes.")
    }
}

private enum SchemaDeriverProbe {
    static let listSchema: JSONValue = [
        "type": "object",
        "properties": ["items": ["type": "array", "items": ["type": "string", "minLength": 5, "maxLength": 200], "minItems": 3, "maxItems": 5]],
    ]
}

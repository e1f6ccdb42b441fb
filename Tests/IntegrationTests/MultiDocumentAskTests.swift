import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// ask/stream over several open documents (`uris`) with the real model: retrieval across
/// them, citations that name their document and are that document's segments, a follow-up
/// by sessionId alone over the same documents, and the errors for bad lists.
final class MultiDocumentAskTests: XCTestCase {
    nonisolated(unsafe) static var shared: Daemon?
    static let podcast = "file:///episodes/local-loop.srt"
    static let bakery = "file:///episodes/bakery-hour.srt"
    static let bakerySRT = """
        1
        00:00:01,000 --> 00:00:04,000
        LEO: Welcome to the Bakery Hour, a show about bread and the people who bake it.

        2
        00:00:04,500 --> 00:00:09,000
        Today I'm with Ines Carvalho, who runs the Northgate bakery in Leeds.

        3
        00:00:09,500 --> 00:00:14,000
        INES: Thanks, Leo. We open at six, and the queue starts before that.

        4
        00:00:14,500 --> 00:00:19,000
        Our sourdough starter is eleven years old and we feed it with rye flour twice a day.

        5
        00:00:19,500 --> 00:00:24,000
        LEO: How much do you bake on a busy day?

        6
        00:00:24,500 --> 00:00:29,000
        INES: On Saturdays we bake four hundred loaves, and they are usually gone by noon.

        7
        00:00:29,500 --> 00:00:33,000
        LEO: That's a lot of bread. Thanks for coming on, Ines.
        """

    var d: Daemon {
        if let d = Self.shared { return d }
        let d = try! Daemon()
        _ = d.initialize()
        _ = d.call("document/open", ["uri": .string(Self.podcast), "text": .string(Daemon.sampleSRT)])
        _ = d.call("document/open", ["uri": .string(Self.bakery), "text": .string(Self.bakerySRT)])
        Self.shared = d
        return d
    }

    override class func tearDown() {
        shared = nil
        super.tearDown()
    }

    var uris: JSONValue { [.string(Self.podcast), .string(Self.bakery)] }

    func ask(_ params: JSONValue) throws -> JSONValue {
        let r = d.call("ask/stream", params, timeout: 1200)
        return try XCTUnwrap(r.result, "\(r)")
    }

    /// Every citation names one of the documents, and its id, times, speaker and text are that document's cue.
    func assertCitationsBelong(_ r: JSONValue, file: StaticString = #filePath, line: UInt = #line) {
        let cues = [Self.podcast: TestSRT.parse(Daemon.sampleSRT), Self.bakery: TestSRT.parse(Self.bakerySRT)]
        let used = Dictionary(uniqueKeysWithValues: (r["retrieval"]?["documents"]?.arrayValue ?? []).map {
            ($0["uri"]?.stringValue ?? "", Set($0["segmentsUsed"]?.arrayValue?.compactMap(\.intValue) ?? []))
        })
        for c in r["citations"]?.arrayValue ?? [] {
            guard let uri = c["uri"]?.stringValue, let doc = cues[uri] else { return XCTFail("citation without its document: \(c)", file: file, line: line) }
            assertGrounded(c, in: doc, file: file, line: line)
            XCTAssertTrue(used[uri]?.contains(c["segmentId"]?.intValue ?? -1) ?? false, "cited a segment it was not shown: \(c) \(used)", file: file, line: line)
        }
    }

    func testQuestionAcrossDocumentsCitesTheDocumentThatAnswers() throws {
        let r = try ask(["uris": uris, "question": "How many loaves does the bakery bake on Saturdays?", "workDoneToken": "multi-1"])
        XCTAssertEqual(r["found"], true, "\(r)")
        XCTAssertEqual(r["turn"], 1)
        // Retrieval ranked both documents' segments, and says what it showed of each.
        let docs = try XCTUnwrap(r["retrieval"]?["documents"]?.arrayValue, "\(r)")
        XCTAssertEqual(docs.map { $0["uri"] }, [.string(Self.podcast), .string(Self.bakery)])
        XCTAssertEqual(docs[0]["segmentsSearched"]?.intValue, TestSRT.parse(Daemon.sampleSRT).count)
        XCTAssertEqual(docs[1]["segmentsSearched"], 7)
        XCTAssertEqual(r["retrieval"]?["segmentsSearched"]?.intValue, TestSRT.parse(Daemon.sampleSRT).count + 7)
        XCTAssertEqual(r["retrieval"]?["segmentsUsed"], [], "ids are per document: see documents")
        XCTAssertTrue(docs[1]["segmentsUsed"]?.arrayValue?.contains(6) ?? false, "the loaves' cue was shown: \(docs)")
        let citations = try XCTUnwrap(r["citations"]?.arrayValue)
        XCTAssertFalse(citations.isEmpty, "\(r)")
        assertCitationsBelong(r)
        XCTAssertTrue(citations.contains { $0["uri"] == .string(Self.bakery) }, "the answer is the bakery's: \(citations)")
        XCTAssertTrue((r["answer"]?.stringValue ?? "").lowercased().contains("four hundred") || (r["answer"]?.stringValue ?? "").contains("400"), "\(r)")
        XCTAssertEqual(streamedText(d.progress(token: "multi-1")), r["answer"]?.stringValue)

        // A follow-up by sessionId alone continues over the same documents.
        let sessionId = try XCTUnwrap(r["sessionId"]?.stringValue)
        let next = try ask(["question": "Which city is The Local Loop recorded in?", "sessionId": .string(sessionId)])
        XCTAssertEqual(next["turn"], 2, "\(next)")
        XCTAssertNotNil(next["retrieval"]?["documents"], "the follow-up is over the documents: \(next)")
        assertCitationsBelong(next)
        if next["found"] == true {
            XCTAssertTrue(next["citations"]?.arrayValue?.contains { $0["uri"] == .string(Self.podcast) } ?? false, "\(next)")
        }
    }

    /// What neither document mentions is not found, with no model call and no citation.
    func testQuestionNeitherDocumentAnswersIsNotFound() throws {
        let r = try ask(["uris": uris, "question": "What is the best recipe for spinach lasagna?", "workDoneToken": "multi-nf"])
        XCTAssertEqual(r["found"], false)
        XCTAssertEqual(r["citations"], [])
        XCTAssertEqual(r["usage"]?["generatedTokens"], 0)
        assertNoModelWork(d.progress(token: "multi-nf"), "a question neither document answers")
    }

    func testBadListsOfDocuments() throws {
        func error(_ params: JSONValue) -> JSONValue { d.call("ask/stream", params)["error"] ?? .null }
        let unknown = error(["uris": [.string(Self.podcast), "file:///not-open.srt"], "question": "Who is Priya?"])
        XCTAssertEqual(unknown["code"], -32004)
        XCTAssertEqual(unknown["data"]?["id"], "file:///not-open.srt")
        XCTAssertEqual(unknown["data"]?["path"], "uris[1]")
        let both = error(["uris": uris, "uri": .string(Self.podcast), "question": "Who is Priya?"])
        XCTAssertEqual(both["code"], -32602)
        XCTAssertEqual(both["data"]?["error"], "conflictingSources")
        let twice = error(["uris": [.string(Self.podcast), .string(Self.bakery), .string(Self.podcast)], "question": "Who is Priya?"])
        XCTAssertEqual(twice["code"], -32602)
        XCTAssertEqual(twice["data"]?["path"], "uris[2]")
        XCTAssertEqual(twice["data"]?["error"], "duplicateDocument")
        let empty = error(["uris": [], "question": "Who is Priya?"])
        XCTAssertEqual(empty["code"], -32602)
        XCTAssertEqual(empty["data"]?["path"], "uris")
        XCTAssertEqual(empty["data"]?["keyword"], "minItems")
        let many = error(["uris": .array((0...16).map { .string("file:///e\($0).srt") }), "question": "Who is Priya?"])
        XCTAssertEqual(many["code"], -32602)
        XCTAssertEqual(many["data"]?["keyword"], "maxItems")
    }
}

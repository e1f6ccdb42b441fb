import Foundation
import ParlanceJSON
import ParlanceServer
import XCTest

/// `document/open` lists the people of a transcript once each, by canonical name, with the
/// other labels the transcript used for them, as `document/segments` does; in-process,
/// without a model.
final class DocumentPeopleTests: XCTestCase {
    typealias Harness = DispatchTests.Harness

    func request(_ id: Int, _ method: String, _ params: JSONObject) -> String {
        JSONValue.object(JSONObject([("jsonrpc", "2.0"), ("id", .int(id)), ("method", .string(method)), ("params", .object(params))])).serialized()
    }

    /// A real transcript from `../shared/realworld/` beside the package root, read in place
    /// (it carries no licence to copy it here); skipped when absent.
    func realWorld(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = root.deletingLastPathComponent().appendingPathComponent("shared/realworld/\(name)")
        guard let data = FileManager.default.contents(atPath: file.path) else { throw XCTSkip("\(file.path) not found") }
        return String(decoding: data, as: UTF8.self)
    }

    /// The podcast names its three people in full on their first turns and by first name
    /// after: five labels, three people.
    func testThePodcastHasThreePeopleNotFiveLabels() throws {
        let text = try realWorld("virtual-coffee-s8e5.srt")
        var h = Harness()
        _ = h.call(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
        let opened = try XCTUnwrap(h.call(request(1, "document/open", ["uri": "file:///s8e5.srt", "text": .string(text)]))["result"])
        XCTAssertEqual(opened["speakers"], ["Bekah Hawrot Weigel", "Dan Ott", "Reda"])
        XCTAssertEqual(opened["people"], [["name": "Bekah Hawrot Weigel", "aliases": ["Bekah"]], ["name": "Dan Ott", "aliases": ["Dan"]],
                                          ["name": "Reda", "aliases": []]])
        let segments = try XCTUnwrap(h.call(request(2, "document/segments", ["uri": "file:///s8e5.srt", "limit": 1]))["result"])
        XCTAssertEqual(segments["speakers"], opened["people"], "one list of people for both methods")
        let listed = try XCTUnwrap(h.call(request(3, "document/list", [:]))["result"]?["documents"]?.arrayValue?.first)
        XCTAssertEqual(listed["people"], opened["people"])
        // Every segment carries a canonical name: nothing downstream sees a label twice.
        let all = try XCTUnwrap(h.call(request(4, "document/segments", ["uri": "file:///s8e5.srt", "limit": 5000, "includeText": false]))["result"])
        XCTAssertEqual(Set(all["segments"]?.arrayValue?.compactMap { $0["speaker"]?.stringValue } ?? []), ["Bekah Hawrot Weigel", "Dan Ott", "Reda"])
    }

    /// A transcript without aliases: speakers as before, people with empty aliases.
    func testLabelsWithoutAliasesArePeopleToo() throws {
        var h = Harness()
        _ = h.call(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
        let srt = "1\n00:00:01,000 --> 00:00:04,000\nMAYA: Welcome back.\n\n2\n00:00:04,500 --> 00:00:09,000\nTHEO: Thanks.\n"
        let opened = try XCTUnwrap(h.call(request(1, "document/open", ["uri": "file:///ep.srt", "text": .string(srt)]))["result"])
        XCTAssertEqual(opened["speakers"], ["MAYA", "THEO"])
        XCTAssertEqual(opened["people"], [["name": "MAYA", "aliases": []], ["name": "THEO", "aliases": []]])
    }
}

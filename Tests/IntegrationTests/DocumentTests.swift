import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// document/open|change|close|list through the real daemon, and every bad input the
/// documents-and-analysis methods must answer with a precise, tested error.
final class DocumentTests: XCTestCase {
    nonisolated(unsafe) static var shared: Daemon?

    /// One daemon for the class (its model loads once).
    var d: Daemon {
        if let d = DocumentTests.shared { return d }
        let d = try! Daemon()
        _ = d.initialize()
        DocumentTests.shared = d
        return d
    }

    override class func tearDown() {
        shared = nil
        super.tearDown()
    }

    func testOpenListChangeClose() throws {
        let uri = "file:///docs/open-list-change-close.srt"
        let opened = try XCTUnwrap(d.call("document/open", ["uri": .string(uri), "text": .string(Daemon.sampleSRT)]).result)
        XCTAssertEqual(opened["version"], 1)
        XCTAssertEqual(opened["format"], "srt")
        XCTAssertEqual(opened["segments"], 108)
        XCTAssertEqual(opened["speakers"], ["MAYA", "THEO", "PRIYA"])
        XCTAssertEqual(opened["durationSeconds"]?.doubleValue ?? 0, 449, accuracy: 0.01)
        XCTAssertEqual(opened["language"], "en")
        XCTAssertGreaterThan(opened["tokens"]?.intValue ?? 0, 1500)
        XCTAssertEqual(opened["contentHash"]?.stringValue?.count, 64)

        let listed = try XCTUnwrap(d.call("document/list").result?["documents"]?.arrayValue)
        XCTAssertTrue(listed.contains { $0["uri"] == .string(uri) })

        let plain = "Alice: We moved the launch to March.\n\nBob: Then marketing needs the new date by Friday."
        let changed = try XCTUnwrap(d.call("document/change", ["uri": .string(uri), "text": .string(plain), "format": "text"]).result)
        XCTAssertEqual(changed["version"], 2)
        XCTAssertEqual(changed["format"], "text")
        XCTAssertNotEqual(changed["contentHash"], opened["contentHash"])
        XCTAssertNil(changed["durationSeconds"])

        XCTAssertNotNil(d.call("document/close", ["uri": .string(uri)]).result)
        let after = d.call("document/list").result?["documents"]?.arrayValue ?? []
        XCTAssertFalse(after.contains { $0["uri"] == .string(uri) })
        // Closed or never opened: notFound with the kind and id.
        let missing: [(String, JSONValue)] = [("document/close", ["uri": .string(uri)]), ("document/change", ["uri": .string(uri), "text": "x"])]
        for (method, params) in missing {
            let r = d.call(method, params)
            XCTAssertEqual(r.errorCode, -32004, "\(method): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["kind"], "document")
            XCTAssertEqual(r["error"]?["data"]?["id"], .string(uri))
        }
    }

    func testBadTranscriptsAreClearErrors() throws {
        // Empty, whitespace only, only timestamps, an unknown format: -32602 with data.error.
        let cases: [(JSONValue, String, String)] = [
            (["uri": "file:///bad/empty", "text": ""], "empty", "text"),
            (["uri": "file:///bad/blank", "text": "  \n\t\n "], "empty", "text"),
            (["uri": "file:///bad/times", "text": "1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\n"], "noText", "text"),
        ]
        for (params, error, path) in cases {
            let r = d.call("document/open", params)
            XCTAssertEqual(r.errorCode, -32602, "\(params): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["error"], .string(error), "\(r)")
            XCTAssertEqual(r["error"]?["data"]?["path"], .string(path), "\(r)")
        }
        let format = d.call("document/open", ["uri": "file:///bad/format", "text": "hello there", "format": "docx"])
        XCTAssertEqual(format.errorCode, -32602)
        XCTAssertEqual(format["error"]?["data"]?["path"], "format")
        XCTAssertEqual(format["error"]?["data"]?["keyword"], "enum")
        // The same bad text given inline to an analysis fails the same way, before any model work.
        let inline = d.call("analysis/tags", ["text": "1\n00:00:01,000 --> 00:00:02,000\n"])
        XCTAssertEqual(inline.errorCode, -32602)
        XCTAssertEqual(inline["error"]?["data"]?["error"], "noText")
        // Neither or both of text and uri.
        XCTAssertEqual(d.call("analysis/entities", [:]).errorCode, -32602)
        XCTAssertEqual(d.call("analysis/entities", ["text": "a", "uri": "file:///x"]).errorCode, -32602)
        // An unknown uri, for every method that reads a document.
        for method in ["analysis/summarize", "analysis/tags", "analysis/entities", "analysis/highlights", "analysis/content", "analysis/worthIt"] {
            let r = d.call(method, ["uri": "file:///never-opened.srt"])
            XCTAssertEqual(r.errorCode, -32004, "\(method): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["kind"], "document")
        }
        XCTAssertEqual(d.call("ask/stream", ["uri": "file:///never-opened.srt", "question": "why?"]).errorCode, -32004)
        let cmp = d.call("analysis/compare", ["documents": [["uri": "file:///never-opened.srt"], ["text": "Some words here."]]])
        XCTAssertEqual(cmp.errorCode, -32004)
        XCTAssertTrue(cmp["error"]?["message"]?.stringValue?.hasPrefix("documents[0]") ?? false, "\(cmp)")
        XCTAssertEqual(d.call("analysis/compare", ["documents": [["text": "only one"]]]).errorCode, -32602)
        // An unsupported output language is an error naming the supported ones.
        let lang = d.call("analysis/tags", ["text": "Hello there, friends.", "language": "xx-zz"])
        XCTAssertEqual(lang.errorCode, -32010)
        XCTAssertEqual(lang["error"]?["data"]?["error"], "unsupportedLanguageOrLocale")
    }

    func testInvalidUTF8IsAParseError() throws {
        // Raw bytes that are not UTF-8 inside the JSON string: the message cannot be read.
        var bytes = Array(#"{"jsonrpc":"2.0","id":77,"method":"document/open","params":{"uri":"file:///bad/utf8","text":"caf"#.utf8)
        bytes += [0xC3, 0x28, 0xFF]
        bytes += Array(#""}}"#.utf8) + [0x0A]
        d.writeRaw(bytes)
        let r = try XCTUnwrap(d.waitFor(timeout: 30) { $0["error"]?["code"] == -32700 })
        XCTAssertEqual(r["id"], .null)
        XCTAssertTrue(r["error"]?["message"]?.stringValue?.contains("UTF-8") ?? false, "\(r)")
        // The daemon keeps serving.
        XCTAssertNotNil(d.call("document/list").result)
    }

    /// A 5 MB transcript opens (parsed once, counted with the model's tokenizer). Analyses
    /// that must read all of it refuse it precisely; ask/stream, which reads only retrieved
    /// segments, answers from it.
    func testFiveMegabyteTranscript() throws {
        let big = LongTranscript.srt(cues: 38_000)
        XCTAssertGreaterThan(big.utf8.count, 5_000_000)
        let uri = "file:///big/five-megabytes.srt"
        let t0 = Date()
        let info = try XCTUnwrap(d.call("document/open", ["uri": .string(uri), "text": .string(big)], timeout: 120).result)
        print("5 MB document/open: \(String(format: "%.2f", Date().timeIntervalSince(t0))) s")
        XCTAssertEqual(info["segments"], 38_000)
        XCTAssertGreaterThan(info["bytes"]?.intValue ?? 0, 5_000_000)
        XCTAssertGreaterThan(info["tokens"]?.intValue ?? 0, 200_000)

        let tags = d.call("analysis/summarize", ["uri": .string(uri)], timeout: 60)
        XCTAssertEqual(tags.errorCode, -32602, "\(tags)")
        XCTAssertEqual(tags["error"]?["data"]?["error"], "inputTooLong")
        XCTAssertEqual(tags["error"]?["data"]?["limit"], 200_000)
        XCTAssertGreaterThan(tags["error"]?["data"]?["tokens"]?.intValue ?? 0, 200_000)

        let none = try XCTUnwrap(d.call("ask/stream", ["uri": .string(uri), "question": "What is the capital of Peru?"], timeout: 60).result)
        XCTAssertEqual(none["found"], false)
        let t1 = Date()
        let found = try XCTUnwrap(d.call("ask/stream", ["uri": .string(uri), "question": .string(LongTranscript.plantedQuestion)]).result)
        print("5 MB ask/stream: \(String(format: "%.2f", Date().timeIntervalSince(t1))) s")
        XCTAssertEqual(found["found"], true)
        let used = found["retrieval"]?["segmentsUsed"]?.arrayValue?.compactMap(\.intValue) ?? []
        XCTAssertTrue(used.contains(LongTranscript.plantedCue), "retrieval missed the planted cue: \(used.prefix(20))")
        XCTAssertLessThan(used.count, 200)
        for c in found["citations"]?.arrayValue ?? [] { XCTAssertTrue(used.contains(c["segmentId"]?.intValue ?? -1)) }
        XCTAssertNotNil(d.call("document/close", ["uri": .string(uri)]).result)
    }

    /// Cached analyses are keyed by content: document/change makes the next request run
    /// again; changing the text back finds the earlier result again.
    func testChangeInvalidatesCachedAnalyses() throws {
        let uri = "file:///docs/cache.txt"
        let a = "Maya: Our guest built a tiny weather station from a Raspberry Pi and three sensors.\n\nTheo: She logs the readings to SQLite every minute."
        let b = "Maya: Today we compare three budget mechanical keyboards for programmers.\n\nTheo: The cheapest one had the best switches."
        XCTAssertNotNil(d.call("document/open", ["uri": .string(uri), "text": .string(a)]).result)
        let first = try XCTUnwrap(d.call("analysis/content", ["uri": .string(uri)]).result)
        XCTAssertEqual(first["cached"], false)
        let again = try XCTUnwrap(d.call("analysis/content", ["uri": .string(uri), "workDoneToken": "content-again"]).result)
        XCTAssertEqual(again["cached"], true)
        XCTAssertEqual(again["notes"], first["notes"])
        assertNoModelWork(d.progress(token: "content-again"), "the repeated analysis/content")

        XCTAssertNotNil(d.call("document/change", ["uri": .string(uri), "text": .string(b)]).result)
        let changed = try XCTUnwrap(d.call("analysis/content", ["uri": .string(uri)]).result)
        XCTAssertEqual(changed["cached"], false, "document/change must invalidate")

        XCTAssertNotNil(d.call("document/change", ["uri": .string(uri), "text": .string(a)]).result)
        let back = try XCTUnwrap(d.call("analysis/content", ["uri": .string(uri)]).result)
        XCTAssertEqual(back["cached"], true)
        XCTAssertEqual(back["notes"], first["notes"])
    }
}

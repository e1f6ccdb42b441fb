import Foundation
import ParlanceEngine
@testable import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema
import ParlanceServer
import XCTest

/// `document/segments`, `analysis/cache/list` and `/clear`, and the controls every
/// generating method gained (`topP`, `topK`, `minP`, `refresh`), in-process and without a
/// model: none of these needs one, or each is refused before one is asked for.
final class SegmentsAndCacheTests: XCTestCase {
    typealias Harness = DispatchTests.Harness

    static let srt = "1\n00:00:01,000 --> 00:00:04,000\nBekah Hawrot Weigel: Welcome back.\n\n2\n00:00:04,500 --> 00:00:09,000\nDan Ott: Thanks.\n\n"
        + "3\n00:00:09,000 --> 00:01:02,500\nBekah: Today, the launch.\n"

    func code(_ v: JSONValue) -> Int? { v["error"]?["code"]?.intValue }

    func request(_ id: Int, _ method: String, _ params: JSONObject) -> String {
        JSONValue.object(JSONObject([("jsonrpc", "2.0"), ("id", .int(id)), ("method", .string(method)), ("params", .object(params))])).serialized()
    }

    func started(extraRoutes: @escaping (inout Router) -> Void = { _ in }) -> Harness {
        var h = Harness(extraRoutes: extraRoutes)
        _ = h.call(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
        return h
    }

    // MARK: document/segments

    func testSegmentsOfAnOpenDocumentPagedWithSpeakersAndTheirAliases() {
        var h = started()
        _ = h.call(request(1, "document/open", ["uri": "file:///ep.srt", "text": .string(Self.srt)]))
        let first = h.call(request(2, "document/segments", ["uri": "file:///ep.srt", "limit": 2]))["result"]
        XCTAssertEqual(first?["total"], 3)
        XCTAssertEqual(first?["offset"], 0)
        XCTAssertEqual(first?["nextOffset"], 2)
        XCTAssertEqual(first?["version"], 1)
        XCTAssertEqual(first?["uri"], "file:///ep.srt")
        XCTAssertEqual(first?["format"], "srt")
        XCTAssertEqual(first?["segments"]?.arrayValue?.count, 2)
        XCTAssertEqual(first?["segments"]?.arrayValue?[0], ["id": 1, "start": 1, "end": 4, "speaker": "Bekah Hawrot Weigel", "text": "Welcome back."])
        XCTAssertEqual(first?["text"], "Welcome back.\nThanks.\nToday, the launch.")
        XCTAssertEqual(first?["speakers"], [["name": "Bekah Hawrot Weigel", "aliases": ["Bekah"]], ["name": "Dan Ott", "aliases": []]])
        XCTAssertEqual(first?["durationSeconds"], 62.5)
        XCTAssertEqual(first?["contentHash"]?.stringValue?.count, 64)

        let last = h.call(request(3, "document/segments", ["uri": "file:///ep.srt", "offset": 2, "includeText": false]))["result"]
        XCTAssertEqual(last?["segments"]?.arrayValue?.map { $0["id"] }, [3])
        XCTAssertEqual(last?["segments"]?.arrayValue?[0]["speaker"], "Bekah Hawrot Weigel", "a first name is the person named in full before")
        XCTAssertNil(last?["nextOffset"], "the last page has no next")
        XCTAssertNil(last?["text"])
        let empty = h.call(request(4, "document/segments", ["uri": "file:///ep.srt", "offset": 3]))["result"]
        XCTAssertEqual(empty?["segments"], [], "offset = total is the empty page after the last")
    }

    func testSegmentsOfTextGivenInline() {
        var h = started()
        let r = h.call(request(1, "document/segments", ["text": "Maya: We ship Friday.\n\nTheo: Then we test on Thursday."]))["result"]
        XCTAssertEqual(r?["format"], "text")
        XCTAssertNil(r?["uri"])
        XCTAssertNil(r?["version"])
        XCTAssertNil(r?["durationSeconds"])
        XCTAssertEqual(r?["segments"]?.arrayValue?.map { $0["speaker"] }, ["Maya", "Theo"])
        XCTAssertEqual(r?["segments"]?.arrayValue?[0]["startOffset"], 6, "plain text carries offsets into the text as sent (after the label)")
        XCTAssertNil(r?["segments"]?.arrayValue?[0]["start"])
        let forced = h.call(request(2, "document/segments", ["text": .string(Self.srt), "format": "text"]))["result"]
        XCTAssertEqual(forced?["format"], "text")
    }

    func testEveryBadSegmentsRequestIsAPreciseError() {
        var h = started()
        _ = h.call(request(1, "document/open", ["uri": "file:///ep.srt", "text": .string(Self.srt)]))
        let cases: [(JSONObject, Int, String, String)] = [
            ([:], -32602, "(root)", "required"),
            (["uri": "file:///ep.srt", "text": "x"], -32602, "(root)", "oneOf"),
            (["uri": "file:///ep.srt", "offset": 4], -32602, "offset", "maximum"),
            (["uri": "file:///ep.srt", "offset": -1], -32602, "offset", "minimum"),
            (["uri": "file:///ep.srt", "limit": 0], -32602, "limit", "minimum"),
            (["uri": "file:///ep.srt", "limit": 5001], -32602, "limit", "maximum"),
            (["uri": "file:///ep.srt", "format": "srt"], -32602, "format", "dependentRequired"),
            (["text": "   "], -32602, "text", "minLength"),
            (["uri": "file:///ep.srt", "page": 2], -32602, "page", "additionalProperties"),
        ]
        for (i, (params, expected, path, keyword)) in cases.enumerated() {
            let r = h.call(request(10 + i, "document/segments", params))
            XCTAssertEqual(code(r), expected, "\(params): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["path"]?.stringValue, path, "\(params): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["keyword"]?.stringValue, keyword, "\(params): \(r)")
            XCTAssertFalse(r["error"]?["message"]?.stringValue?.isEmpty ?? true)
        }
        let missing = h.call(request(30, "document/segments", ["uri": "file:///nope.srt"]))
        XCTAssertEqual(code(missing), -32004)
        XCTAssertEqual(missing["error"]?["data"], ["error": "notFound", "kind": "document", "id": "file:///nope.srt"])
    }

    // MARK: analysis/cache/list and /clear

    /// Puts labelled entries into the daemon's own cache, as the analyses do.
    enum Seed: RPCMethod {
        static let name = "test/seedCache"
        static let summary = "Puts entries into the analysis cache."
        struct Params: Codable, Sendable, Schematic { var content: String; var uri: String?; var method: String }
        typealias Result = Empty
    }

    static let hashA = String(repeating: "a", count: 64)
    static let hashB = String(repeating: "b", count: 64)

    func seeded() -> Harness {
        var h = started { r in
            r.on(Seed.self) { p, ctx in
                let key = AnalysisCache.Key(method: p.method, content: p.content, settings: ["seed": 1], language: "en", model: "sha-of-model",
                                            uri: p.uri, modelName: "fast")
                await ctx.services.analysisCache.put(key, ["summary": "A launch."] as JSONValue)
                return Empty()
            }
        }
        _ = h.call(request(1, "test/seedCache", ["content": .string(Self.hashA), "uri": "file:///a.srt", "method": "analysis/summarize"]))
        _ = h.call(request(2, "test/seedCache", ["content": .string(Self.hashA), "uri": "file:///a.srt", "method": "analysis/tags"]))
        _ = h.call(request(3, "test/seedCache", ["content": .string(Self.hashB), "method": "analysis/summarize"]))
        return h
    }

    func testListSaysWhatWasAnalysedByWhichModelAndChecks() {
        var h = seeded()
        let all = h.call(request(10, "analysis/cache/list", [:]))["result"]
        XCTAssertEqual(all?["total"], 3)
        XCTAssertEqual(all?["unlabelled"], 0)
        XCTAssertEqual(all?["checksVersion"]?.intValue, AnalysisCache.checksVersion)
        let entry = all?["entries"]?.arrayValue?.first { $0["method"] == "analysis/tags" }
        XCTAssertEqual(entry?["contentHashes"], [.string(Self.hashA)])
        XCTAssertEqual(entry?["uri"], "file:///a.srt")
        XCTAssertEqual(entry?["model"], "fast")
        XCTAssertEqual(entry?["modelIdentity"], "sha-of-model")
        XCTAssertEqual(entry?["language"], "en")
        XCTAssertEqual(entry?["current"], true)
        XCTAssertEqual(entry?["inMemory"], true)
        XCTAssertEqual(entry?["checksVersion"]?.intValue, AnalysisCache.checksVersion)
        XCTAssertNotNil(entry?["createdAt"]?.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) }, "\(String(describing: entry))")
        XCTAssertGreaterThan(all?["totalBytes"]?.intValue ?? 0, 0)

        let one = h.call(request(11, "analysis/cache/list", ["contentHash": .string(Self.hashB)]))["result"]
        XCTAssertEqual(one?["total"], 1)
        let limited = h.call(request(12, "analysis/cache/list", ["limit": 1]))["result"]
        XCTAssertEqual(limited?["entries"]?.arrayValue?.count, 1)
        XCTAssertEqual(limited?["total"], 3)
        let byURI = h.call(request(13, "analysis/cache/list", ["uri": "file:///a.srt"]))["result"]
        XCTAssertEqual(byURI?["total"], 2, "a uri no longer open still names the entries made under it")
    }

    func testClearOneDocumentThenAll() {
        var h = seeded()
        XCTAssertEqual(h.call(request(10, "analysis/cache/clear", ["uri": "file:///a.srt"]))["result"], ["removed": 2])
        XCTAssertEqual(h.call(request(11, "analysis/cache/list", [:]))["result"]?["total"], 1)
        XCTAssertEqual(h.call(request(12, "analysis/cache/clear", ["contentHash": .string(Self.hashA)]))["result"], ["removed": 0])
        XCTAssertEqual(h.call(request(13, "analysis/cache/clear", ["contentHash": .string(Self.hashB)]))["result"], ["removed": 1])
        _ = h.call(request(14, "test/seedCache", ["content": .string(Self.hashB), "method": "analysis/content"]))
        XCTAssertEqual(h.call(request(15, "analysis/cache/clear", ["all": true]))["result"], ["removed": 1])
        XCTAssertEqual(h.call(request(16, "analysis/cache/list", [:]))["result"]?["entries"], [])
    }

    func testClearByTheURIOfAnOpenDocumentTakesItsCurrentText() {
        var h = seeded()
        _ = h.call(request(10, "document/open", ["uri": "file:///b.srt", "text": .string(Self.srt)]))
        XCTAssertEqual(h.call(request(11, "analysis/cache/clear", ["uri": "file:///b.srt"]))["result"], ["removed": 0],
                       "an open document with no entries: nothing to remove, and no error")
        // Its text analysed inline (no uri): the entry is still this document's.
        _ = h.call(request(12, "test/seedCache", ["content": .string(SHA256Hex.of(Self.srt)), "method": "analysis/highlights"]))
        XCTAssertEqual(h.call(request(13, "analysis/cache/clear", ["uri": "file:///b.srt"]))["result"], ["removed": 1])
        XCTAssertEqual(h.call(request(14, "analysis/cache/list", [:]))["result"]?["total"], 3, "the other documents' entries stay")
    }

    func testEveryBadCacheRequestIsAPreciseError() {
        var h = seeded()
        let cases: [(String, JSONObject, Int, String, String)] = [
            ("analysis/cache/clear", [:], -32602, "(root)", "required"),
            ("analysis/cache/clear", ["all": false], -32602, "all", "const"),
            ("analysis/cache/clear", ["all": true, "uri": "file:///a.srt"], -32602, "(root)", "oneOf"),
            ("analysis/cache/clear", ["contentHash": "abc"], -32602, "contentHash", "pattern"),
            ("analysis/cache/list", ["uri": "file:///a.srt", "contentHash": .string(Self.hashA)], -32602, "(root)", "oneOf"),
            ("analysis/cache/list", ["limit": 0], -32602, "limit", "minimum"),
        ]
        for (i, (method, params, expected, path, keyword)) in cases.enumerated() {
            let r = h.call(request(20 + i, method, params))
            XCTAssertEqual(code(r), expected, "\(method) \(params): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["path"]?.stringValue, path, "\(method) \(params): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["keyword"]?.stringValue, keyword, "\(method) \(params): \(r)")
        }
        for method in ["analysis/cache/clear", "analysis/cache/list"] {
            let r = h.call(request(40, method, ["uri": "file:///never-opened.srt"]))
            XCTAssertEqual(code(r), -32004, "\(method): \(r)")
            XCTAssertEqual(r["error"]?["data"], ["error": "notFound", "kind": "document", "id": "file:///never-opened.srt"])
        }
    }

    /// Entries written before entries carried a label are counted, not listed, and only
    /// `all` removes them; a stale checks version is listed as not current.
    func testOldEntriesOnDisk() async throws {
        let dir = NSTemporaryDirectory() + "parlance-cache-\(UUID().uuidString)"
        let cache = AnalysisCache(directory: dir)
        let old = #"{"checks":3,"value":{"summary":"old"}}"#
        try old.write(toFile: dir + "/" + String(repeating: "c", count: 64) + ".json", atomically: true, encoding: .utf8)
        try "not an entry".write(toFile: dir + "/notes.txt", atomically: true, encoding: .utf8)
        let key = AnalysisCache.Key(method: "analysis/summarize", content: Self.hashA, settings: [:], language: "en", model: "m")
        await cache.put(key, ["summary": "new"] as JSONValue)
        let (entries, unlabelled) = await cache.listed()
        XCTAssertEqual(entries.map(\.label.method), ["analysis/summarize"])
        XCTAssertEqual(unlabelled, 1)
        let reopened = AnalysisCache(directory: dir)
        let fromDisk = await reopened.listed().entries
        XCTAssertEqual(fromDisk.map(\.inMemory), [false], "read from disk, not yet used")
        let removed = await reopened.remove { $0.documents.contains(Self.hashA) }
        XCTAssertEqual(removed, 1)
        let rest = await reopened.removeAll()
        XCTAssertEqual(rest, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/notes.txt"), "only entries are removed")
    }

    // MARK: topP, topK, minP and refresh

    func testSamplingControlsReachTheSamplerAsSessionOptionsDo() throws {
        let p: AnalysisParams = try JSONValue.object(["text": "x", "topP": 0.8, "topK": 20, "minP": 0.1, "temperature": 0.5, "refresh": true]).decode()
        let o = ResolvedOptions(p.controls, maxTokens: 100, defaultTemperature: 0.2)
        let session = ResolvedOptions(GenerationOptions(temperature: 0.5, topP: 0.8, topK: 20, minP: 0.1, maxTokens: 100), defaultTemperature: 0.2)
        XCTAssertEqual(o.settings.sampling, session.settings.sampling)
        XCTAssertTrue(o.refresh)
        XCTAssertEqual(o.chosenSampling, ["topP": 0.8, "topK": 20, "minP": 0.1])
        XCTAssertEqual(ResolvedOptions(GenerationControls(), maxTokens: nil, defaultTemperature: 0.2).chosenSampling, [:],
                       "the defaults add nothing to a cache key: entries made before keep their names")
    }

    func testEveryGeneratingMethodTakesTheSessionsSamplingNamesAndRanges() throws {
        let session = SchemaDeriver.schema(for: GenerationOptions.self)["properties"]
        let methods: [any RPCMethod.Type] = [Summarize.self, AnalyzeTags.self, AnalyzeEntities.self, AnalyzeHighlights.self, AnalyzeContent.self,
                                             AnalyzeWorthIt.self, AnalyzeCompare.self, AskStream.self, ComposeVariations.self, ComposeRefine.self]
        for m in methods {
            let props = m.paramsSchema["properties"]
            for k in ["topP", "topK", "minP"] {
                XCTAssertEqual(props?[k]?["minimum"], session?[k]?["minimum"], "\(m.name) \(k)")
                XCTAssertEqual(props?[k]?["maximum"], session?[k]?["maximum"], "\(m.name) \(k)")
                XCTAssertEqual(props?[k]?["type"], session?[k]?["type"], "\(m.name) \(k)")
            }
            let cached = !m.name.hasPrefix("compose/")
            XCTAssertEqual(props?["refresh"] != nil, cached, "\(m.name): refresh where a result may come from the cache")
        }
    }

    func testOutOfRangeSamplingIsRefusedBeforeAnyModel() {
        var h = started()
        for (i, (key, value)) in [("topP", JSONValue.double(1.5)), ("topK", .int(-1)), ("minP", .double(2))].enumerated() {
            var params: JSONObject = ["text": "Alice met Bob in Paris."]
            params[key] = value
            let r = h.call(request(1 + i, "analysis/summarize", params))
            XCTAssertEqual(code(r), -32602, "\(key): \(r)")
            XCTAssertEqual(r["error"]?["data"]?["path"]?.stringValue, key)
        }
    }
}

import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// Every analysis method with the real model through the real daemon, on the bundled sample
/// transcript. Assertions are on structure and grounding (every segment id, time, quote and
/// entity occurrence checks against the SRT read independently), not on the model's wording.
final class AnalysisTests: XCTestCase {
    nonisolated(unsafe) static var shared: Daemon?
    static let uri = "file:///samples/podcast-sample.srt"
    static let cues = TestSRT.parse(Daemon.sampleSRT)

    /// One daemon for the class, with the sample open: every analysis shares its KV prefix.
    var d: Daemon {
        if let d = AnalysisTests.shared { return d }
        let d = try! Daemon()
        _ = d.initialize()
        _ = d.call("document/open", ["uri": .string(AnalysisTests.uri), "text": .string(Daemon.sampleSRT)])
        AnalysisTests.shared = d
        return d
    }

    override class func tearDown() {
        shared = nil
        super.tearDown()
    }

    func run(_ method: String, _ params: JSONValue, token: String? = nil, timeout: TimeInterval = 1800) throws -> (JSONValue, TimeInterval) {
        var p = params.objectValue ?? JSONObject()
        if let token { p["workDoneToken"] = .string(token) }
        let t0 = Date()
        let r = d.call(method, .object(p), timeout: timeout)
        let elapsed = Date().timeIntervalSince(t0)
        return (try XCTUnwrap(r.result, "\(method): \(r)"), elapsed)
    }

    /// Percentages are within 0...100 and never go backwards.
    func assertProgress(_ token: String, file: StaticString = #filePath, line: UInt = #line) {
        let reports = d.progress(token: .string(token))
        XCTAssertEqual(reports.first?["kind"], "begin", file: file, line: line)
        XCTAssertEqual(reports.last?["kind"], "end", file: file, line: line)
        let pct = reports.compactMap { $0["percentage"]?.intValue }
        XCTAssertTrue(pct.allSatisfy { (0...100).contains($0) }, "\(pct)", file: file, line: line)
        XCTAssertEqual(pct, pct.sorted(), "percentages went backwards", file: file, line: line)
        XCTAssertGreaterThanOrEqual(pct.max() ?? 0, 50, file: file, line: line)
    }

    /// Lowercased letters and digits, other characters as single spaces (how a name may be
    /// punctuated differently from the transcript: "Llama.cpp" / "llama cpp").
    static func words(_ s: String) -> String {
        s.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : " " }.joined()
            .split(separator: " ").joined(separator: " ")
    }

    func assertMeta(_ r: JSONValue, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r["language"], "en-us", file: file, line: line)
        XCTAssertNil(r["fallbackFrom"], file: file, line: line)
        XCTAssertEqual(r["chunks"], 1, file: file, line: line)
        XCTAssertEqual(r["provenance"]?["modelSha256"]?.stringValue?.count, 64, file: file, line: line)
    }

    func testTagsAndTheRepeatedRequestFromCache() throws {
        let (r, first) = try run("analysis/tags", ["uri": .string(Self.uri)], token: "tags")
        assertMeta(r)
        assertProgress("tags")
        XCTAssertEqual(r["cached"], false)
        XCTAssertTrue((3...8).contains(r["tags"]?.arrayValue?.count ?? 0), "\(r)")
        XCTAssertTrue((1...3).contains(r["categories"]?.arrayValue?.count ?? 0), "\(r)")
        XCTAssertTrue(["beginner", "intermediate", "advanced"].contains(r["difficulty"]?.stringValue ?? ""))
        let (again, cached) = try run("analysis/tags", ["uri": .string(Self.uri)], token: "tags-again")
        XCTAssertEqual(again["cached"], true)
        XCTAssertEqual(again["tags"], r["tags"])
        assertNoModelWork(d.progress(token: "tags-again"), "the repeated analysis/tags")
        print("analysis/tags on the sample: first \(String(format: "%.2f", first)) s, cached \(String(format: "%.3f", cached)) s")
    }

    func testEntitiesOccurWhereTheyAreSaid() throws {
        let (r, _) = try run("analysis/entities", ["uri": .string(Self.uri)], token: "entities")
        assertMeta(r)
        assertProgress("entities")
        var total = 0
        for kind in ["people", "organizations", "products", "locations", "resources"] {
            for e in try XCTUnwrap(r[kind]?.arrayValue, kind) {
                total += 1
                let name = try XCTUnwrap(e["name"]?.stringValue)
                let occurrences = try XCTUnwrap(e["occurrences"]?.arrayValue)
                XCTAssertFalse(occurrences.isEmpty, "\(name) has no occurrence")
                for o in occurrences {
                    assertGrounded(o, in: Self.cues)
                    let cue = Self.cues.first { $0.id == o["segmentId"]?.intValue }
                    XCTAssertTrue(Self.words(cue?.text ?? "").contains(Self.words(name)), "\(name) is not in cue \(o)")
                }
            }
        }
        XCTAssertNotNil(r["unverified"]?.arrayValue)
        print("analysis/entities on the sample: \(total) grounded entities, unverified \(r["unverified"]!)")
    }

    func testHighlightsAreRealMomentsAndVerbatimQuotes() throws {
        let (r, _) = try run("analysis/highlights", ["uri": .string(Self.uri)], token: "highlights")
        assertMeta(r)
        assertProgress("highlights")
        let moments = try XCTUnwrap(r["keyMoments"]?.arrayValue)
        XCTAssertFalse(moments.isEmpty)
        for m in moments {
            assertGrounded(m, in: Self.cues)
            XCTAssertFalse(m["title"]?.stringValue?.isEmpty ?? true)
        }
        let ids = moments.compactMap { $0["segmentId"]?.intValue }
        XCTAssertEqual(ids, ids.sorted())
        for q in r["quotes"]?.arrayValue ?? [] { assertQuoteGrounded(q, in: Self.cues) }
        XCTAssertNotNil(r["actionItems"]?.arrayValue)
    }

    func testContentStyleToneComplexity() throws {
        let (r, _) = try run("analysis/content", ["uri": .string(Self.uri)], token: "content")
        assertMeta(r)
        assertProgress("content")
        XCTAssertNotNil(r["style"]?.stringValue)
        XCTAssertNotNil(r["tone"]?.stringValue)
        XCTAssertTrue(["low", "medium", "high"].contains(r["complexity"]?.stringValue ?? ""))
        XCTAssertGreaterThanOrEqual(r["notes"]?.stringValue?.count ?? 0, 10)
    }

    static let comments = [
        "Great episode, I finally understand why quantized models run fine on my laptop.",
        "lol the seagulls in the background",
        "BUY CHEAP WATCHES at example dot com!!!",
        "Hosted models will always be better, local inference is a toy.",
        "Priya explained memory bandwidth so clearly, thank you.",
    ]

    func testWorthItWithComments() throws {
        let comments = JSONValue.array(Self.comments.map { .string($0) })
        let (r, _) = try run("analysis/worthIt", ["uri": .string(Self.uri), "comments": comments], token: "worth")
        assertMeta(r)
        assertProgress("worth")
        let depth = try XCTUnwrap(r["contentDepthScore"]?.doubleValue)
        XCTAssertTrue((0...1).contains(depth))
        let insights = try XCTUnwrap(r["commentInsights"])
        let sentiment = try XCTUnwrap(insights["overallCommentSentimentScore"]?.doubleValue)
        XCTAssertTrue((0...1).contains(sentiment))
        // The seed's score, recomputed from the breakdown.
        let b = try XCTUnwrap(r["scoreBreakdown"])
        XCTAssertEqual(b["usedComments"], true)
        XCTAssertEqual(b["baseScore"]?.intValue, Int((100 * (0.6 * depth + 0.4 * sentiment)).rounded()))
        var adjustment = 0
        if depth >= 0.8, sentiment >= 0.8 { adjustment += 5 }
        if depth < 0.3 { adjustment -= 10 }
        XCTAssertEqual(b["adjustment"]?.intValue, adjustment)
        XCTAssertEqual(r["score"]?.intValue, max(0, min(100, (b["baseScore"]?.intValue ?? 0) + adjustment)))
        // Every comment categorized, verbatim; every theme's example is one of the comments.
        let categorized = try XCTUnwrap(insights["categorizedComments"]?.arrayValue)
        XCTAssertEqual(categorized.map { $0["comment"]?.stringValue ?? "" }, Self.comments)
        for c in categorized {
            XCTAssertTrue(["humor", "insightful", "controversial", "spam", "neutral"].contains(c["category"]?.stringValue ?? ""))
        }
        for t in insights["themes"]?.arrayValue ?? [] {
            let i = try XCTUnwrap(t["exampleCommentIndex"]?.intValue)
            XCTAssertEqual(t["exampleComment"]?.stringValue, Self.comments[i])
        }
        XCTAssertTrue((2...4).contains(r["suggestedQuestions"]?.arrayValue?.count ?? 0))
        XCTAssertTrue(["model", "fallback", "mixed"].contains(r["suggestedQuestionsSource"]?.stringValue ?? ""))
        XCTAssertFalse(r["longSummary"]?.stringValue?.isEmpty ?? true)
        XCTAssertTrue((3...5).contains(r["takeaways"]?.arrayValue?.count ?? 0))
        print("analysis/worthIt on the sample: score \(r["score"]!), breakdown \(b)")
    }

    func testWorthItWithoutCommentsUsesDepthAlone() throws {
        let text = "Host: Today a nurse explains how she plans night shifts. Guest: I sleep in two blocks, keep the room dark, and stop caffeine six hours before bed."
        let (r, _) = try run("analysis/worthIt", ["text": .string(text)])
        let depth = try XCTUnwrap(r["contentDepthScore"]?.doubleValue)
        let b = try XCTUnwrap(r["scoreBreakdown"])
        XCTAssertEqual(b["usedComments"], false)
        XCTAssertNotNil(b["note"]?.stringValue)
        XCTAssertNil(r["commentInsights"])
        XCTAssertEqual(b["baseScore"]?.intValue, Int((100 * depth).rounded()))
        XCTAssertEqual(r["score"]?.intValue, max(0, min(100, Int((100 * depth).rounded()) + (depth < 0.3 ? -10 : 0))))
        XCTAssertTrue((2...4).contains(r["suggestedQuestions"]?.arrayValue?.count ?? 0))
    }

    func testCompareTwoDocuments() throws {
        let second = "Maya: This week we compare three budget mechanical keyboards for programmers.\n\nTheo: The cheapest one had the best switches, and the quietest one suits open offices."
        let (r, _) = try run("analysis/compare", ["documents": [["uri": .string(Self.uri), "title": "Local Loop"],
                                                                ["text": .string(second), "title": "Keyboards"]]], token: "compare")
        assertProgress("compare")
        XCTAssertEqual(r["uniqueInsights"]?.arrayValue?.compactMap { $0["document"]?.stringValue }, ["Local Loop", "Keyboards"])
        XCTAssertEqual(Set(r["recommendedOrder"]?.arrayValue?.compactMap(\.stringValue) ?? []), ["Local Loop", "Keyboards"])
        XCTAssertEqual(r["recommendedOrder"]?.arrayValue?.count, 2)
        XCTAssertFalse(r["commonThemes"]?.arrayValue?.isEmpty ?? true)
        XCTAssertFalse(r["narrative"]?.stringValue?.isEmpty ?? true)
        XCTAssertEqual(r["documents"]?.arrayValue?.count, 2)
        XCTAssertEqual(r["language"], "en-us")
        let (again, _) = try run("analysis/compare", ["documents": [["uri": .string(Self.uri), "title": "Local Loop"],
                                                                    ["text": .string(second), "title": "Keyboards"]]], token: "compare-again")
        XCTAssertEqual(again["cached"], true)
        XCTAssertEqual(again["narrative"], r["narrative"])
        assertNoModelWork(d.progress(token: "compare-again"), "the repeated analysis/compare")
        // Each document's summary is the one analysis/summarize makes, and is shared with it.
        let (summary, _) = try run("analysis/summarize", ["uri": .string(Self.uri)], token: "compare-summary")
        XCTAssertEqual(summary["cached"], true, "compare's summary of the document was not shared with analysis/summarize")
        assertNoModelWork(d.progress(token: "compare-summary"), "analysis/summarize after analysis/compare")
    }

    /// The analysis cache is on disk: a new daemon with the same cache dir answers at once.
    func testRepeatedRequestIsCachedAcrossRestart() throws {
        let dir = NSTemporaryDirectory() + "parlance-analysis-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = "Alice: We moved the launch to March because the battery tests failed twice. Bob: Then marketing needs the new date by Friday."
        func daemon() throws -> Daemon {
            let d = try Daemon(env: ["PARLANCE_CACHE_DIR": dir], isolatedCaches: false)
            _ = d.initialize()
            return d
        }
        let a = try daemon()
        let first = try XCTUnwrap(a.call("analysis/content", ["text": .string(text)]).result)
        XCTAssertEqual(first["cached"], false)
        _ = a.call("shutdown")
        a.notify("exit")
        XCTAssertEqual(a.waitExit(), 0)

        let b = try daemon()
        let t0 = Date()
        let second = try XCTUnwrap(b.call("analysis/content", ["text": .string(text), "workDoneToken": "restart"]).result)
        let seconds = Date().timeIntervalSince(t0)
        XCTAssertEqual(second["cached"], true)
        XCTAssertEqual(second["notes"], first["notes"])
        XCTAssertEqual(second["style"], first["style"])
        assertNoModelWork(b.progress(token: "restart"), "analysis/content after a restart")
        print("analysis/content after a restart: served from the disk cache in \(String(format: "%.3f", seconds)) s")
    }
}

/// Every method on a generated transcript of more than 3,000 tokens in a daemon with a
/// 2,048-token context (one and a half contexts, read in parts): hierarchical
/// summarization with progress and cancellation, part notes read once and shared by every
/// analysis, grounding against the generated cues, the cache, and document/change.
final class LongAnalysisTests: XCTestCase {
    func testLongTranscriptEndToEnd() throws {
        // A quarter of the default context, and half the default's transcript: the same
        // mechanisms on parts half as long, at a quarter of the prompt cost (attention grows
        // with the context; the transcript a user summarizes is `make bench`'s).
        let d = try Daemon(args: ["--ctx", "2048"])
        _ = d.initialize()
        let uri = "file:///generated/long.srt"
        let srt = LongTranscript.srt()
        let cues = TestSRT.parse(srt)
        XCTAssertEqual(cues.count, LongTranscript.cueCount)
        let info = try XCTUnwrap(d.call("document/open", ["uri": .string(uri), "text": .string(srt)]).result)
        XCTAssertEqual(info["segments"]?.intValue, LongTranscript.cueCount)
        XCTAssertGreaterThanOrEqual(info["tokens"]?.intValue ?? 0, 3_072, "the generated transcript must be one and a half contexts or more")
        func call(_ method: String, _ params: JSONValue) throws -> (JSONValue, TimeInterval) {
            let t0 = Date()
            let r = d.call(method, params, timeout: 3600)
            return (try XCTUnwrap(r.result, "\(method): \(r)"), Date().timeIntervalSince(t0))
        }

        // Cancelled between parts: -32800, and the daemon stays usable.
        let id = d.start("analysis/summarize", ["uri": .string(uri), "workDoneToken": "long-cancel"])
        let mapReport = d.waitFor(timeout: 1800) {
            $0["method"] == "$/progress" && $0["params"]?["token"] == "long-cancel" && $0["params"]?["value"]?["phase"] == "map"
        }
        XCTAssertNotNil(mapReport, "no map progress before the cancel")
        d.notify("$/cancelRequest", ["id": .int(id)])
        let cancelled = try XCTUnwrap(d.response(id, timeout: 600))
        XCTAssertEqual(cancelled.errorCode, -32800, "\(cancelled)")
        _ = d.progress(token: "long-cancel")

        // Hierarchical summarization: map (part notes) then reduce, with percentages.
        let (summary, first) = try call("analysis/summarize", ["uri": .string(uri), "workDoneToken": "long-sum", "maxAttempts": 1])
        let chunks = try XCTUnwrap(summary["chunks"]?.intValue)
        XCTAssertGreaterThanOrEqual(chunks, 3, "a 3,000-token transcript is summarized in parts at a 2,048-token context")
        XCTAssertEqual(summary["cached"], false)
        XCTAssertGreaterThan(summary["summary"]?.stringValue?.count ?? 0, 20)
        let progress = d.progress(token: "long-sum")
        XCTAssertTrue(progress.contains { $0["phase"] == "map" })
        XCTAssertTrue(progress.contains { $0["phase"] == "reduce" })
        let pct = progress.compactMap { $0["percentage"]?.intValue }
        XCTAssertEqual(pct, pct.sorted())
        let (again, cachedSeconds) = try call("analysis/summarize", ["uri": .string(uri), "workDoneToken": "long-sum-again", "maxAttempts": 1])
        XCTAssertEqual(again["cached"], true)
        XCTAssertEqual(again["summary"], summary["summary"])
        assertNoModelWork(d.progress(token: "long-sum-again"), "the repeated analysis/summarize")
        print("long transcript (\(info["tokens"]!) tokens, \(chunks) parts): summarize first \(String(format: "%.1f", first)) s, cached \(String(format: "%.3f", cachedSeconds)) s")

        // The other whole-transcript analyses reuse the part notes: one call each, or none.
        let (tags, _) = try call("analysis/tags", ["uri": .string(uri)])
        XCTAssertEqual(tags["chunks"]?.intValue, chunks)
        XCTAssertTrue((3...8).contains(tags["tags"]?.arrayValue?.count ?? 0))
        // The notes are generated text, their length varies from run to run: the bound is the
        // transcript's own size (3,000+ tokens), not a figure near the notes' length.
        let transcriptTokens = info["tokens"]?.intValue ?? 0
        XCTAssertLessThan(tags["usage"]?["promptTokens"]?.intValue ?? .max, transcriptTokens / 2, "tags should read the part notes, not the transcript")
        let (content, _) = try call("analysis/content", ["uri": .string(uri)])
        XCTAssertEqual(content["chunks"]?.intValue, chunks)
        let (worth, _) = try call("analysis/worthIt", ["uri": .string(uri)])
        XCTAssertEqual(worth["scoreBreakdown"]?["usedComments"], false)

        let (entities, _) = try call("analysis/entities", ["uri": .string(uri)])
        XCTAssertEqual(entities["chunks"]?.intValue, chunks)
        XCTAssertEqual(entities["usage"]?["generatedTokens"], 0, "entities of a long transcript come from the cached part notes")
        for kind in ["people", "organizations", "products", "locations", "resources"] {
            for e in entities[kind]?.arrayValue ?? [] {
                let name = AnalysisTests.words(e["name"]?.stringValue ?? "")
                for o in e["occurrences"]?.arrayValue ?? [] {
                    assertGrounded(o, in: cues)
                    XCTAssertTrue(AnalysisTests.words(cues.first { $0.id == o["segmentId"]?.intValue }?.text ?? "").contains(name))
                }
            }
        }
        let (highlights, _) = try call("analysis/highlights", ["uri": .string(uri)])
        XCTAssertEqual(highlights["usage"]?["generatedTokens"], 0)
        XCTAssertFalse(highlights["keyMoments"]?.arrayValue?.isEmpty ?? true)
        for m in highlights["keyMoments"]?.arrayValue ?? [] { assertGrounded(m, in: cues) }
        for q in highlights["quotes"]?.arrayValue ?? [] { assertQuoteGrounded(q, in: cues) }

        // Retrieval finds the one planted cue among a hundred and fifty.
        let (answer, _) = try call("ask/stream", ["uri": .string(uri), "question": .string(LongTranscript.plantedQuestion)])
        XCTAssertEqual(answer["found"], true)
        XCTAssertEqual(answer["retrieval"]?["wholeDocument"], false)
        let used = answer["retrieval"]?["segmentsUsed"]?.arrayValue?.compactMap(\.intValue) ?? []
        XCTAssertTrue(used.contains(LongTranscript.plantedCue), "\(used)")
        for c in answer["citations"]?.arrayValue ?? [] {
            assertGrounded(c, in: cues)
            XCTAssertTrue(used.contains(c["segmentId"]?.intValue ?? -1))
        }

        // Compare reuses the cached summary of the long transcript.
        let short = "Host: A short chat about growing tomatoes on a balcony. Guest: Water in the morning and use deep pots."
        let (cmp, _) = try call("analysis/compare", ["documents": [["uri": .string(uri), "title": "Long"], ["text": .string(short), "title": "Balcony"]]])
        XCTAssertEqual(cmp["uniqueInsights"]?.arrayValue?.count, 2)
        XCTAssertEqual(cmp["documents"]?.arrayValue?.first?["chunks"]?.intValue, chunks)

        // document/change: only the part holding the edit is read again.
        // (An edit that keeps whether the cue is a content-defined part boundary, as most edits do.)
        let original = cues[99].text
        let edit = ["The beekeeper sold forty jars of heather honey at the Saturday market.",
                    "The beekeeper sold thirty jars of heather honey at the Sunday market.",
                    "A neighbour bought the last jar of clover honey before noon.",
                    "The colony rebuilt its comb within a week of the harvest."]
            .first { LongTranscript.isBoundary($0) == LongTranscript.isBoundary(original) }!
        let edited = LongTranscript.srt(edit: (cue: 100, text: edit))
        XCTAssertNotNil(d.call("document/change", ["uri": .string(uri), "text": .string(edited)]).result)
        // One attempt each: what is measured is which parts are read again, not how often a
        // failing reduce step is generated again (the 135M model's combined summary often is).
        let (resummary, second) = try call("analysis/summarize", ["uri": .string(uri), "maxAttempts": 1])
        XCTAssertEqual(resummary["cached"], false)
        XCTAssertEqual(resummary["chunks"]?.intValue, chunks, "an edit inside one cue must not move part boundaries")
        let before = summary["usage"]?["promptTokens"]?.intValue ?? 0
        let after = resummary["usage"]?["promptTokens"]?.intValue ?? .max
        XCTAssertLessThan(after, before / 2, "only the changed part (and the reduce step) should be evaluated again")
        print("after document/change: summarize \(String(format: "%.1f", second)) s, \(after) prompt tokens (first run \(before))")
    }
}

/// Every result in the analysis cache carries the checks version it was made under: after
/// a change to the checks, what an older daemon cached is a miss for every analysis,
/// `analysis/compare` and a first `ask/stream` question included, while the same daemon
/// version still answers from it.
final class AnalysisCacheVersionTests: XCTestCase {
    static let text = "Alice: We moved the launch to March because the battery tests failed twice. Bob: Then marketing needs the new date by Friday."
    static let second = "Maya: The cheapest keyboard had the best switches. Theo: The quietest one suits open offices."
    // One attempt each: what is under test is the cache entries, not the checks' retries.
    static let requests: [(String, JSONValue)] = [
        ("analysis/tags", ["text": .string(text), "maxAttempts": 1]),
        ("analysis/content", ["text": .string(text), "maxAttempts": 1]),
        // As analysis/compare asks for it: compare reuses this summary.
        ("analysis/summarize", ["text": .string(text), "language": "en-us", "maxAttempts": 1]),
        ("analysis/highlights", ["text": .string(text), "maxAttempts": 1]),
        ("analysis/entities", ["text": .string(text), "maxAttempts": 1]),
        ("analysis/worthIt", ["text": .string(text), "maxAttempts": 1]),
        ("analysis/compare", ["documents": [["text": .string(text), "title": "Launch"], ["text": .string(second), "title": "Keyboards"]], "maxAttempts": 1]),
        ("ask/stream", ["text": .string(text), "question": "When is the launch?", "maxTokens": 64, "maxAttempts": 1]),
    ]

    func daemon(_ dir: String) throws -> Daemon {
        let d = try Daemon(env: ["PARLANCE_CACHE_DIR": dir], isolatedCaches: false)
        _ = d.initialize()
        return d
    }

    func stop(_ d: Daemon) {
        _ = d.call("shutdown")
        d.notify("exit")
        XCTAssertEqual(d.waitExit(), 0)
    }

    func params(_ p: JSONValue, token: String) -> JSONValue {
        var o = p.objectValue ?? JSONObject()
        o["workDoneToken"] = .string(token)
        return .object(o)
    }

    func testAChecksVersionChangeMissesTheCacheForEveryAnalysis() throws {
        let dir = NSTemporaryDirectory() + "parlance-checks-version-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try daemon(dir)
        for (method, p) in Self.requests {
            let response = a.call(method, p, timeout: 1800)
            let r = try XCTUnwrap(response.result, "\(method): \(response)")
            XCTAssertEqual(r["cached"], false, method)
        }
        stop(a)

        // The same daemon version answers every request from the disk cache.
        let b = try daemon(dir)
        for (method, p) in Self.requests {
            let response = b.call(method, params(p, token: "same-\(method)"))
            let r = try XCTUnwrap(response.result, "\(method): \(response)")
            XCTAssertEqual(r["cached"], true, "\(method) is not served from the cache of the same checks version")
            assertNoModelWork(b.progress(token: .string("same-\(method)")), method)
        }
        stop(b)

        // The entries as an older daemon (checks version one less) would have left them.
        let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/analysis").filter { $0.hasSuffix(".json") }
        XCTAssertGreaterThanOrEqual(files.count, Self.requests.count)
        for f in files {
            let path = dir + "/analysis/" + f
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            var entry = try XCTUnwrap(try JSONParser.parse(data).objectValue, f)
            let version = try XCTUnwrap(entry["checks"]?.intValue, "\(f) carries no checks version")
            entry["checks"] = .int(version - 1)
            try Data(JSONValue.object(entry).serialized().utf8).write(to: URL(fileURLWithPath: path))
        }

        // Each request misses: model work begins (then the request is cancelled).
        let c = try daemon(dir)
        for (method, p) in Self.requests {
            let token = JSONValue.string("older-\(method)")
            let id = c.start(method, params(p, token: "older-\(method)"))
            let first = try XCTUnwrap(c.waitFor(timeout: 1800) { m in
                (m["id"] == .int(id) && (m["result"] != nil || m["error"] != nil))
                    || (m["method"] == "$/progress" && m["params"]?["token"] == token
                        && modelWorkPhases.contains(m["params"]?["value"]?["phase"]?.stringValue ?? ""))
            }, method)
            XCTAssertNotEqual(first["result"]?["cached"], true, "\(method) served a result cached under another checks version")
            if first["id"] == nil {
                c.notify("$/cancelRequest", ["id": .int(id)])
                XCTAssertNotNil(c.response(id, timeout: 1800), method)
            }
        }
        stop(c)
    }
}

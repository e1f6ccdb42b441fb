import Foundation
import ParlanceClient
import ParlanceJSON
import XCTest

/// ask/stream with the real model: streamed answers, citations that are real segments,
/// follow-ups in a session that reuse the KV state, and "not found" without invention.
final class AskTests: XCTestCase {
    nonisolated(unsafe) static var shared: Daemon?
    static let uri = "file:///samples/ask-sample.srt"
    static let cues = TestSRT.parse(Daemon.sampleSRT)

    var d: Daemon {
        if let d = AskTests.shared { return d }
        let d = try! Daemon()
        _ = d.initialize()
        _ = d.call("document/open", ["uri": .string(AskTests.uri), "text": .string(Daemon.sampleSRT)])
        AskTests.shared = d
        return d
    }

    override class func tearDown() {
        shared = nil
        super.tearDown()
    }

    func ask(_ params: JSONValue, timeout: TimeInterval = 1200) throws -> JSONValue {
        let r = d.call("ask/stream", params, timeout: timeout)
        return try XCTUnwrap(r.result, "\(r)")
    }

    func assertCitationsGrounded(_ r: JSONValue, file: StaticString = #filePath, line: UInt = #line) {
        let used = Set(r["retrieval"]?["segmentsUsed"]?.arrayValue?.compactMap(\.intValue) ?? [])
        for c in r["citations"]?.arrayValue ?? [] {
            assertGrounded(c, in: Self.cues, file: file, line: line)
            XCTAssertNotNil(c["text"]?.stringValue, file: file, line: line)
            if !used.isEmpty, r["turn"] == 1 {
                XCTAssertTrue(used.contains(c["segmentId"]?.intValue ?? -1), "cited a segment it was not shown", file: file, line: line)
            }
        }
    }

    func testAnswerStreamsCitesRealSegmentsAndFollowUpReusesTheSession() throws {
        let t0 = Date()
        let first = try ask(["uri": .string(Self.uri), "question": "Which city is the episode recorded in, and what noise do they apologise for?",
                             "workDoneToken": "ask-1"])
        let firstSeconds = Date().timeIntervalSince(t0)
        XCTAssertEqual(first["found"], true)
        XCTAssertEqual(first["turn"], 1)
        XCTAssertEqual(first["retrieval"]?["method"], "bm25")
        // The sample is longer than the retrieval budget (1200 tokens): its best segments are shown.
        XCTAssertEqual(first["retrieval"]?["wholeDocument"], false)
        XCTAssertFalse(first["retrieval"]?["segmentsUsed"]?.arrayValue?.isEmpty ?? true)
        XCTAssertGreaterThan(first["retrieval"]?["termCoverage"]?.doubleValue ?? 0, 0.49)
        XCTAssertTrue(["low", "medium", "high"].contains(first["confidence"]?.stringValue ?? ""))
        XCTAssertNotNil(first["relatedTopics"]?.arrayValue)
        assertCitationsGrounded(first)
        if first["verification"]?["fallback"] == nil {
            // The model's own answer is written under its grammar: one paragraph of prose, not
            // JSON and not a transcript line continued.
            let answer = first["answer"]?.stringValue ?? ""
            XCTAssertFalse(answer.contains("\n") || answer.contains("{") || answer.contains("}"), answer)
        }
        if let cites = first["citations"]?.arrayValue, !cites.isEmpty {
            XCTAssertNotNil(first["timestamp"]?.stringValue)
        } else {
            XCTAssertEqual(first["confidence"], "low", "no citation, so low confidence")
        }
        // Streamed token by token: the deltas since the last restart are exactly the answer.
        let progress = d.progress(token: "ask-1")
        let deltas = progress.compactMap { $0["delta"]?.stringValue }
        XCTAssertGreaterThan(deltas.count, 3)
        XCTAssertEqual(streamedText(progress), first["answer"]?.stringValue)
        XCTAssertEqual(progress.last?["kind"], "end")
        let sessionId = try XCTUnwrap(first["sessionId"]?.stringValue)

        // A follow-up continues the conversation (sessionId alone names its document): only
        // its new tokens are evaluated.
        let t1 = Date()
        let second = try ask(["question": "What did Priya say about memory bandwidth?", "sessionId": .string(sessionId)])
        let followSeconds = Date().timeIntervalSince(t1)
        XCTAssertEqual(second["turn"], 2)
        XCTAssertEqual(second["sessionId"]?.stringValue, sessionId)
        assertCitationsGrounded(second)
        // (Usage sums a turn's attempts: when the first turn took one, the follow-up's cached
        // tokens cover all of its prompt; in any case each attempt evaluates only the new turn:
        // at most the 500-token follow-up excerpt and the question.)
        let firstPrompt = first["usage"]?["promptTokens"]?.intValue ?? 0
        let cachedPrompt = second["usage"]?["cachedPromptTokens"]?.intValue ?? 0
        if first["verification"]?["attempts"] == 1 {
            XCTAssertGreaterThanOrEqual(cachedPrompt, firstPrompt, "the follow-up should reuse the first turn's KV state")
        }
        let secondAttempts = second["verification"]?["attempts"]?.intValue ?? 1
        let uncached = (second["usage"]?["promptTokens"]?.intValue ?? 0) - cachedPrompt
        XCTAssertGreaterThan(cachedPrompt, 0, "the follow-up should reuse the first turn's KV state")
        XCTAssertLessThanOrEqual(uncached, 700 * secondAttempts, "only the new turn is evaluated: \(second["usage"] ?? .null)")
        // The session holds both turns.
        let transcript = try XCTUnwrap(d.call("session/transcript", ["sessionId": .string(sessionId)]).result)
        XCTAssertEqual(transcript["turns"]?.arrayValue?.count, 4)
        print("ask/stream: first \(String(format: "%.1f", firstSeconds)) s, follow-up \(String(format: "%.1f", followSeconds)) s with \(cachedPrompt) cached prompt tokens")

        // The same first question again is served from the analysis cache, in a new session:
        // no prompt evaluated, nothing generated, the answer streamed as it was.
        let repeated = try ask(["uri": .string(Self.uri), "question": "Which city is the episode recorded in, and what noise do they apologise for?",
                                "workDoneToken": "ask-again"])
        XCTAssertEqual(repeated["cached"], true)
        XCTAssertEqual(repeated["answer"], first["answer"])
        XCTAssertNotEqual(repeated["sessionId"], first["sessionId"])
        let again = d.progress(token: "ask-again")
        assertNoModelWork(again, "the repeated ask/stream")
        XCTAssertEqual(streamedText(again), first["answer"]?.stringValue)
    }

    func testQuestionWithNoRelevantSegmentIsNotFound() throws {
        let r = try ask(["uri": .string(Self.uri), "question": "What is the best recipe for spinach lasagna?", "workDoneToken": "nf"])
        XCTAssertEqual(r["found"], false)
        XCTAssertTrue(r["answer"]?.stringValue?.lowercased().contains("not found in the document") ?? false, "\(r)")
        XCTAssertEqual(r["confidence"], "low")
        XCTAssertEqual(r["citations"], [])
        XCTAssertNil(r["timestamp"])
        // Answered with no model call: no prompt evaluated, nothing generated.
        XCTAssertEqual(r["usage"]?["promptTokens"], 0)
        XCTAssertEqual(r["usage"]?["generatedTokens"], 0)
        XCTAssertLessThan(r["retrieval"]?["termCoverage"]?.doubleValue ?? 1, 0.4)
        let nf = d.progress(token: "nf")
        assertNoModelWork(nf, "a question with no relevant segment")
        XCTAssertEqual(streamedText(nf), r["answer"]?.stringValue)
        // A near miss (the letters are there, no count of them): the evidence alone says the
        // document does not answer, so no answer the model could write is asked for.
        let near = try ask(["uri": .string(Self.uri), "question": "How many patient letters does the hospital group send?", "workDoneToken": "nm"])
        XCTAssertEqual(near["found"], false, "\(near)")
        XCTAssertGreaterThanOrEqual(near["retrieval"]?["termCoverage"]?.doubleValue ?? 0, 0.4, "retrieval found the subject")
        XCTAssertLessThan(near["answerability"]?["probability"]?.doubleValue ?? 1, 0.5)
        XCTAssertEqual(near["verification"]?["attempts"], 0)
        XCTAssertEqual(near["verification"]?["issues"]?.arrayValue?.first?["code"], "notAnswered")
        XCTAssertEqual(near["usage"]?["generatedTokens"], 0)
        assertNoModelWork(d.progress(token: "nm"), "a near miss the evidence rules out")
        // The default model's file names English only (general.languages): French falls back
        // to English, visibly; kept (languageFallback: keep), the answer is in French, the
        // not-found message localized, and the risk said in the provenance.
        let question = "Quelle est la recette des lasagnes aux épinards ?"
        let fellBack = try ask(["uri": .string(Self.uri), "question": .string(question), "language": "fr"])
        XCTAssertEqual(fellBack["language"], "en-us")
        XCTAssertEqual(fellBack["fallbackFrom"], "fr")
        let fr = try ask(["uri": .string(Self.uri), "question": .string(question), "language": "fr", "languageFallback": "keep"])
        XCTAssertEqual(fr["found"], false)
        XCTAssertEqual(fr["language"], "fr-fr")
        XCTAssertNil(fr["fallbackFrom"])
        XCTAssertEqual(fr["answer"], "Introuvable dans le document.")
        XCTAssertEqual(fr["provenance"]?["languageRisk"]?["fallbackWouldUse"], "en-us")
        XCTAssertEqual(fr["provenance"]?["languageRisk"]?["source"], "gguf")
        // Swedish falls back to the table's choice, British English, which the model writes.
        let sv = try ask(["uri": .string(Self.uri), "question": "What is the best recipe for spinach lasagna?", "language": "sv-SE"])
        XCTAssertEqual(sv["language"], "en-gb")
        XCTAssertEqual(sv["fallbackFrom"], "sv-se")
    }

    /// A plain-text document has no times: its citations carry where the cited text sits in
    /// the document as sent (UTF-16 offsets an editor can select).
    func testPlainTextCitationsPointIntoTheText() throws {
        let text = """
            Project notes, week 12.\r\n\r\nALICE: The battery  tests failed twice, so the launch moves from February to March.\r\n\r\n\
            BOB: Marketing needs the new date by Friday.\r\n\r\nCarol will write the   customer FAQ 😀 before the launch.
            """
        _ = d.call("document/open", ["uri": "file:///notes.txt", "text": .string(text)])
        defer { _ = d.call("document/close", ["uri": "file:///notes.txt"]) }
        let r = try ask(["uri": "file:///notes.txt", "question": "Why did the launch move to March?", "maxTokens": 64])
        let citations = try XCTUnwrap(r["citations"]?.arrayValue)
        XCTAssertFalse(citations.isEmpty, "\(r)")
        let utf16 = Array(text.utf16)
        for c in citations {
            XCTAssertNil(c["start"], "plain text has no times")
            let start = try XCTUnwrap(c["startOffset"]?.intValue, "\(c)"), end = try XCTUnwrap(c["endOffset"]?.intValue, "\(c)")
            let slice = String(decoding: utf16[start..<end], as: UTF16.self)
            XCTAssertEqual(slice.split(whereSeparator: \.isWhitespace).joined(separator: " "), c["text"]?.stringValue, "\(c)")
        }
    }

    func testBadQuestionsAndSessions() throws {
        XCTAssertEqual(d.call("ask/stream", ["uri": .string(Self.uri), "question": ""]).errorCode, -32602)
        XCTAssertEqual(d.call("ask/stream", ["uri": .string(Self.uri)]).errorCode, -32602)
        let unknown = d.call("ask/stream", ["uri": .string(Self.uri), "question": "Who is Priya?", "sessionId": "s999-nope"])
        XCTAssertEqual(unknown.errorCode, -32004)
        XCTAssertEqual(unknown["error"]?["data"]?["kind"], "session")
        let alone = d.call("ask/stream", ["question": "Who is Priya?", "sessionId": "s999-nope"])
        XCTAssertEqual(alone.errorCode, -32004, "a follow-up by sessionId alone names the missing session: \(alone)")
        XCTAssertEqual(alone["error"]?["data"]?["kind"], "session")
        XCTAssertEqual(d.call("ask/stream", ["uri": "file:///not-open.srt", "question": "Who is Priya?"]).errorCode, -32004)
    }
}

import JSONRPC
import ParlanceDocuments
@testable import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import XCTest

/// ask/stream over several documents (`uris`): one numbering for retrieval, the prompt and
/// the checks, mapped back to each document's own segments for citations; and the errors
/// for bad lists. No model.
final class MultiDocumentAskTests: XCTestCase {
    static func transcript(_ lines: [(String, String)], from start: Double = 0) -> ParsedTranscript {
        let segs = lines.enumerated().map { i, l in
            Segment(id: i + 1, start: start + Double(i) * 5, end: start + Double(i) * 5 + 4, speaker: l.0, text: l.1)
        }
        return ParsedTranscript(format: .srt, segments: segs, warnings: [], plainText: segs.map(\.text).joined(separator: "\n"))
    }

    let bees = transcript([
        ("ANA", "Welcome to the garden hour, today we talk about bees."),
        ("ANA", "We keep twelve hives behind the orchard."),
        ("TOMASZ", "The spring inspection found mites in three of them."),
    ])
    let bread = transcript([
        ("LEO", "Welcome to the bakery show."),
        ("LEO", "Our sourdough starter is fed twice a day with rye flour."),
        ("MIA", "The hives next door keep the orchard busy, but that is another story."),
        ("MIA", "We bake four hundred loaves every Saturday."),
    ], from: 100)

    var set: AskDocuments { AskDocuments([("file:///pods/bees.srt", bees), ("file:///pods/bread.srt", bread)]) }

    func input(_ docs: AskDocuments) -> AnalysisInput {
        AnalysisInput(documents: docs, contentHash: AskDocuments.contentHash([("a", "1"), ("b", "2")]), language: .init(language: "en"), format: .srt)
    }

    /// The set numbers every segment once, and each number maps back to its own document's segment.
    func testSegmentsAreNumberedOnAndMapBackToTheirDocument() throws {
        let docs = set
        XCTAssertEqual(docs.segments.map(\.id), [1, 2, 3, 4, 5, 6, 7])
        XCTAssertEqual(docs.openings, [1, 4])
        XCTAssertEqual(docs.part(of: 3)?.uri, "file:///pods/bees.srt")
        XCTAssertEqual(docs.part(of: 4)?.uri, "file:///pods/bread.srt")
        XCTAssertNil(docs.part(of: 8))
        // Set id 7 is bread's segment 4: its id, text, times and speaker, named by its uri.
        let c = try XCTUnwrap(docs.citation(docs.segments[6]))
        XCTAssertEqual(c, AskStream.Citation(uri: "file:///pods/bread.srt", segmentId: 4, start: 115, end: 119, speaker: "MIA",
                                             text: "We bake four hundred loaves every Saturday."))
        XCTAssertEqual(docs.citation(docs.segments[1])?.segmentId, 2)
        XCTAssertEqual(docs.citation(docs.segments[1])?.uri, "file:///pods/bees.srt")
        XCTAssertNil(docs.citation(Segment(id: 9, text: "not in the set")))
        XCTAssertEqual(docs.retrieval(used: [2, 3, 6]), [
            AskStream.DocumentRetrieval(uri: "file:///pods/bees.srt", segmentsSearched: 3, segmentsUsed: [2, 3]),
            AskStream.DocumentRetrieval(uri: "file:///pods/bread.srt", segmentsSearched: 4, segmentsUsed: [3]),
        ])
    }

    /// The prompt shows each document's passages under its title, with the set's ids.
    func testPromptLabelsPassagesWithTheirDocument() {
        let docs = set
        let shown = [docs.segments[1], docs.segments[2], docs.segments[6]]
        XCTAssertEqual(Retrieval.render(shown, of: input(docs)), """
            Document 1: bees.srt
            [2] ANA: We keep twelve hives behind the orchard.
            [3] TOMASZ: The spring inspection found mites in three of them.

            Document 2: bread.srt
            [7] MIA: We bake four hundred loaves every Saturday.
            """)
        // The whole set as prompt text: a speaker is named again in the next document.
        XCTAssertTrue(input(docs).promptText.contains("Document 2: bread.srt\n[4] LEO: Welcome to the bakery show."), input(docs).promptText)
        XCTAssertEqual(AskDocuments.titles(["file:///a/ep.srt", "file:///b/ep.srt", "file:///c/other%20one.vtt", "untitled:1"]),
                       ["file:///a/ep.srt", "file:///b/ep.srt", "other one.vtt", "untitled:1"])
    }

    /// BM25 ranks all the documents' segments at once; the neighbours that widen a hit are its own document's.
    func testRetrievalRunsAcrossDocumentsAndKeepsNeighboursInTheirDocument() async {
        let docs = set
        let sel = await Retrieval.select("How many loaves do they bake on Saturday?", coverageQuery: "How many loaves do they bake on Saturday?",
                                         input: input(docs), excluding: [], budget: 1000, tokenCount: { $0.count / 4 })
        XCTAssertTrue(sel.found)
        XCTAssertTrue(sel.segments.map(\.id).contains(7), "\(sel.segments.map(\.id))")
        let mites = await Retrieval.select("mites inspection", coverageQuery: "mites inspection", input: input(docs), excluding: [], budget: 1000,
                                           tokenCount: { $0.count / 4 })
        // Segment 3 ends bees.srt: its neighbour 4 (bread's welcome) is another document's.
        XCTAssertEqual(mites.segments.map(\.id), [2, 3])
        // A question about the hives finds them in both documents.
        let hives = await Retrieval.select("hives orchard", coverageQuery: "hives orchard", input: input(docs), excluding: [], budget: 1000,
                                           tokenCount: { $0.count / 4 })
        XCTAssertEqual(Set(hives.segments.compactMap { docs.part(of: $0.id)?.uri }), ["file:///pods/bees.srt", "file:///pods/bread.srt"])
    }

    /// The answer's evidence never quotes a document's opening, in any document.
    func testEvidenceSkipsEveryDocumentsOpening() {
        let docs = set
        let e = Answerability.evidence(question: "What is the bakery show about?", segments: docs.segments, openings: docs.openings)
        XCTAssertFalse(e.quote.contains(4), "\(e.quote)")
        XCTAssertTrue(Ask.extractive(question: "What is the bakery show about?", evidence: e, passages: AnswerVerifier.Passages(docs.segments),
                                     openings: docs.openings).allSatisfy { !docs.openings.contains($0.id) })
    }

    /// An answer that opens as the prompt heads a document's passages is the model writing
    /// the prompt on (seen on the default model: "Document 3: Theo's Rooftop Radio. In 2016…"
    /// over two documents): degenerate, so it is generated again or quoted instead.
    func testAnswerOpeningWithADocumentHeadingIsDegenerate() {
        let docs = set
        let answer = "Document 3: Theo's Rooftop Radio. In 2016, Tomasz started keeping bees."
        XCTAssertEqual(AskDocuments.heading(opening: answer), "Document 3")
        XCTAssertNil(AskDocuments.heading(opening: "The document says 2016."))
        XCTAssertNil(AskDocuments.heading(opening: "Documents 3 and 4 disagree: one says 2016."))
        XCTAssertEqual(AnswerVerifier.degenerate(question: "When did Tomasz start?", answer: answer, passages: AnswerVerifier.Passages(docs.segments),
                                                 instructions: [Ask.task]), .answerOpensWithLabel("Document 3"))
        XCTAssertNil(AnswerVerifier.degenerate(question: "When did Tomasz start?", answer: "Tomasz started keeping bees in 2016.",
                                               passages: AnswerVerifier.Passages(docs.segments), instructions: [Ask.task]))
    }

    /// An extractive answer over several documents names the document each quote is from.
    func testQuoteNamesItsDocument() {
        let s = set.segments[6]
        XCTAssertEqual(Ask.quote(s, document: set.part(of: s.id)?.title), "\u{201C}We bake four hundred loaves every Saturday.\u{201D} (MIA, 01:55, bread.srt)")
        XCTAssertEqual(Ask.quote(s), "\u{201C}We bake four hundred loaves every Saturday.\u{201D} (MIA, 01:55)")
    }

    /// Bad lists: each error says what is wrong and where, in data a program can act on.
    func testBadListsGetPreciseErrors() {
        XCTAssertNoThrow(try AskDocuments.check(uris: ["file:///a", "file:///b"], uri: nil, text: nil))
        XCTAssertThrowsError(try AskDocuments.check(uris: ["file:///a", "file:///b", "file:///a"], uri: nil, text: nil)) { e in
            let r = e as? ResponseError
            XCTAssertEqual(r?.code, .invalidParams)
            XCTAssertEqual(r?.message, "uris[2] repeats uris[0] ('file:///a'): give each document once")
            XCTAssertEqual(r?.data?["error"], "duplicateDocument")
            XCTAssertEqual(r?.data?["path"], "uris[2]")
            XCTAssertEqual(r?.data?["firstIndex"], 0)
        }
        XCTAssertThrowsError(try AskDocuments.check(uris: ["file:///a", "file:///b"], uri: "file:///a", text: nil)) { e in
            let r = e as? ResponseError
            XCTAssertEqual(r?.code, .invalidParams)
            XCTAssertEqual(r?.data?["error"], "conflictingSources")
            XCTAssertEqual(r?.data?["properties"], ["uris", "uri"])
        }
        XCTAssertThrowsError(try AskDocuments.check(uris: ["file:///a", "file:///b"], uri: nil, text: "1\n00:00:01,000 --> 00:00:02,000\nhi")) { e in
            XCTAssertEqual((e as? ResponseError)?.data?["properties"], ["uris", "text"])
        }
        let unknown = AskDocuments.unknown("file:///c", at: 1)
        XCTAssertEqual(unknown.code.rawValue, -32004)
        XCTAssertEqual(unknown.data?["id"], "file:///c")
        XCTAssertEqual(unknown.data?["path"], "uris[1]")
        XCTAssertEqual(unknown.data?["kind"], "document")
    }
}

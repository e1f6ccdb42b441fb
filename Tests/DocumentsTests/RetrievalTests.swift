import ParlanceDocuments
import XCTest

final class BM25Tests: XCTestCase {
    let docs = [
        "The cat sat on the mat.",
        "Dogs are running in the park with other dogs.",
        "A dog ran to the cat.",
        "Quantization of large language models saves memory.",
        "The weather was nice.",
    ]

    func testRankingAndStemming() {
        let index = BM25Index(documents: docs)
        let hits = index.search("running dogs", limit: 10)
        XCTAssertEqual(hits.map(\.index), [1, 2])
        XCTAssertGreaterThan(hits[0].score, hits[1].score)
        XCTAssertEqual(index.search("quantized model", limit: 10).map(\.index), [3])
        XCTAssertEqual(index.search("cats", limit: 1).map(\.index), [0])
        XCTAssertEqual(index.search("cats", limit: 5).map(\.index), [0, 2])
    }

    func testNoMatchIsEmpty() {
        let index = BM25Index(documents: docs)
        XCTAssertTrue(index.search("zebra unicorn", limit: 5).isEmpty)
        XCTAssertTrue(index.search("the and of", limit: 5).isEmpty)  // only stopwords
        XCTAssertTrue(index.search("", limit: 5).isEmpty)
        XCTAssertTrue(index.search("cat", limit: 0).isEmpty)
        XCTAssertTrue(BM25Index(documents: []).search("cat", limit: 5).isEmpty)
    }

    func testDiacriticsAndCJK() {
        let index = BM25Index(documents: ["Café culture in Zürich", "会议很重要", "Nothing here"])
        XCTAssertEqual(index.search("cafe zurich", limit: 5).map(\.index), [0])
        XCTAssertEqual(index.search("会议", limit: 5).map(\.index), [1])
    }
}

final class TextMatchTests: XCTestCase {
    let segs = [
        Segment(id: 1, text: "First, we stopped running the model"),
        Segment(id: 2, text: "continuously and only ran it when asked."),
        Segment(id: 3, text: "Second, we capped the threads."),
        Segment(id: 4, text: "Priya's team at Fernhill Labs"),
        Segment(id: 5, text: "measured it on a MacBook Air."),
    ]

    func testNormalize() {
        XCTAssertEqual(TextMatch.normalize("  Héllo,   WORLD!  It’s fine... 'quoted' "), "hello world it's fine quoted")
        XCTAssertEqual(TextMatch.normalize("state-of-the-art\nÆther Øresund"), "state of the art aether oresund")
        XCTAssertEqual(TextMatch.normalize("?!"), "")
    }

    func testQuotesWithinAndAcrossSegments() {
        XCTAssertEqual(TextMatch.segmentsContaining("we capped the threads", in: segs), [3])
        XCTAssertEqual(TextMatch.segmentsContaining("running the model, continuously and only", in: segs), [1, 2])
        XCTAssertEqual(TextMatch.segmentsContaining("when asked. Second, we capped the threads. Priya's team", in: segs), [2, 3, 4])
        XCTAssertEqual(TextMatch.segmentsContaining("WE STOPPED RUNNING", in: segs), [1])
        XCTAssertEqual(TextMatch.segmentsContaining("we", in: segs), [1, 3])
        XCTAssertEqual(TextMatch.segmentsContaining("cap", in: segs), [])  // whole words only
        XCTAssertEqual(TextMatch.segmentsContaining("a sentence nobody said", in: segs), [])
        XCTAssertEqual(TextMatch.segmentsContaining("...", in: segs), [])
        // Four segments is too far.
        XCTAssertEqual(TextMatch.segmentsContaining("the model continuously and only ran it when asked second we capped the threads priya's team at fernhill labs measured", in: segs), [])
    }

    func testOccurrences() {
        XCTAssertEqual(TextMatch.occurrences(of: "priya", in: segs), [4])
        XCTAssertEqual(TextMatch.occurrences(of: "Fernhill Labs", in: segs), [4])
        XCTAssertEqual(TextMatch.occurrences(of: "macbook air", in: segs), [5])
        XCTAssertEqual(TextMatch.occurrences(of: "Mac", in: segs), [])
        XCTAssertEqual(TextMatch.occurrences(of: "", in: segs), [])
    }
}

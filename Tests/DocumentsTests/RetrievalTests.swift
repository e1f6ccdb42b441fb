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

    /// A French or Spanish question ranks by what it asks about, not by "qui", "du", "en",
    /// "el", "de": the segment that names the subject comes first.
    func testFunctionWordsOfOtherLanguagesDoNotRank() {
        let french = BM25Index(documents: [
            "Elle a été repeinte en bleu en 1990, ce qui explique sa couleur.",
            "L'architecte s'appelait Marie Dubois. Elle avait déjà construit deux gares.",
            "La gare du nord date de 1880.",
        ])
        XCTAssertEqual(french.search("Qui était l'architecte de la gare en brique ?", limit: 3).first?.index, 1)
        XCTAssertEqual(french.search("architecte", limit: 3).map(\.index), [1])  // "l'architecte" is "architecte"
        let spanish = BM25Index(documents: ["El local tiene una terraza en la plaza.", "Somos doce en la cocina y tres en la sala."])
        XCTAssertEqual(spanish.search("¿Cuántos cocineros hay en la cocina?", limit: 2).map(\.index), [1])
        XCTAssertTrue(spanish.search("¿Cuándo es el de la en?", limit: 2).isEmpty)  // only function words
    }

    /// The words of another language's list that are English words still count.
    func testEnglishWordsOfOtherLanguagesStillCount() {
        let index = BM25Index(documents: ["The men went to war.", "Her son took vitamin C.", "Did Dell's laptop die?", "Rock and roll."])
        XCTAssertEqual(index.search("men war", limit: 4).map(\.index), [0])
        XCTAssertEqual(index.search("son", limit: 4).map(\.index), [1])
        XCTAssertEqual(index.search("vitamin c", limit: 4).map(\.index), [1])
        XCTAssertEqual(index.search("dell die", limit: 4).map(\.index), [2])
        XCTAssertEqual(BM25Index.terms("O'Brien don't"), ["obrien"])
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

import ParlanceDocuments
import ParlanceHash
import XCTest

/// The fake tokenizer from the brief: words × 1.3, rounded up.
func fakeTokens(_ s: String) -> Int {
    let words = s.split(whereSeparator: { $0.isWhitespace }).count
    return Int((Double(words) * 1.3).rounded(.up))
}

final class ChunkerTests: XCTestCase {
    func segments(_ n: Int, words: Int) -> [Segment] {
        (1...n).map { i in
            Segment(id: i, start: Double(i * 10), end: Double(i * 10 + 9), speaker: "S",
                    text: (1...words).map { "w\(i)_\($0)" }.joined(separator: " "))
        }
    }

    func testBudgetRespectedOnCueBoundaries() {
        let segs = segments(50, words: 10)  // 13 tokens each; 7 fit in 100 (91 tokens)
        let chunks = Chunker.chunk(segs, budget: 100, tokenCount: fakeTokens)
        XCTAssertEqual(chunks.count, 8)
        XCTAssertEqual(chunks.map(\.segmentIds.lowerBound), [1, 8, 15, 22, 29, 36, 43, 50])
        XCTAssertEqual(chunks.map(\.segmentIds.upperBound), [7, 14, 21, 28, 35, 42, 49, 50])
        XCTAssertEqual(chunks.map(\.tokenCount), [91, 91, 91, 91, 91, 91, 91, 13])
        XCTAssertEqual(chunks.map(\.index), Array(0..<8))
        XCTAssertEqual(chunks[0].start, 10)
        XCTAssertEqual(chunks[0].end, 79)
        XCTAssertEqual(chunks[7].start, 500)
        XCTAssertEqual(chunks[0].text, segs[0..<7].map(\.text).joined(separator: "\n"))
        for c in chunks {
            XCTAssertLessThanOrEqual(c.tokenCount, 100)
            XCTAssertEqual(c.tokenCount, fakeTokens(c.text))
        }
    }

    func testHugeSingleCueSplitsOnSentencesKeepingIdAndTimes() {
        let sentence = (1...14).map { "word\($0)" }.joined(separator: " ") + "."  // 15 words incl. "word14." → 14 words
        let big = Array(repeating: sentence, count: 20).joined(separator: " ")
        let segs = [
            Segment(id: 1, start: 0, end: 5, text: "Short intro."),
            Segment(id: 2, start: 5, end: 125, speaker: "GUEST", text: big),
            Segment(id: 3, start: 125, end: 130, text: "Short outro."),
        ]
        let chunks = Chunker.chunk(segs, budget: 100, tokenCount: fakeTokens)
        // 14 words = 19 tokens per sentence; 5 sentences = 70 words = 91 tokens.
        XCTAssertEqual(chunks.map(\.segmentIds), [1...1, 2...2, 2...2, 2...2, 2...2, 3...3])
        XCTAssertEqual(chunks.map(\.tokenCount), [3, 91, 91, 91, 91, 3])
        XCTAssertTrue(chunks[1...4].allSatisfy { $0.start == 5 && $0.end == 125 && $0.text.hasSuffix("word14.") })
        XCTAssertEqual(chunks[1...4].map(\.text).joined(separator: " "), big)
    }

    func testCJKSentencesSplitWithoutInventedSpaces() {
        let text = String(repeating: "我们讨论了这个会议。这个问题很重要！", count: 30)
        let chunks = Chunker.chunk([Segment(id: 4, start: 1, end: 9, text: text)], budget: 50, tokenCount: { $0.count })
        XCTAssertEqual(chunks.map(\.text).joined(), text)
        XCTAssertTrue(chunks.allSatisfy { $0.tokenCount <= 50 && !$0.text.contains(" ") && $0.segmentIds == 4...4 })
        XCTAssertEqual(chunks.first?.text.count, 46)  // sentences of 10 + 8 + 10 + 8 + 10 characters
    }

    func testSentenceWithoutPunctuationSplitsOnWords() {
        let words = (1...200).map { "w\($0)" }
        let segs = [Segment(id: 9, start: 1, end: 2, text: words.joined(separator: " "))]
        let chunks = Chunker.chunk(segs, budget: 100, tokenCount: fakeTokens)
        XCTAssertEqual(chunks.map { $0.text.split(separator: " ").count }, [76, 76, 48])
        XCTAssertTrue(chunks.allSatisfy { $0.segmentIds == 9...9 && $0.tokenCount <= 100 })
        XCTAssertEqual(chunks.map(\.text).joined(separator: " "), words.joined(separator: " "))
    }

    func testSingleGiantWordSplitsOnCharacters() {
        let word = String(repeating: "x", count: 1000)
        let chunks = Chunker.chunk([Segment(id: 1, text: word)], budget: 10, tokenCount: { $0.count / 4 + 1 })
        XCTAssertTrue(chunks.allSatisfy { $0.tokenCount <= 10 })
        XCTAssertEqual(chunks.map(\.text).joined(), word)
        XCTAssertEqual(chunks.first?.text.count, 39)
    }

    func testHashesAreStableAndMatchSHA256() {
        let segs = segments(10, words: 5)
        let a = Chunker.chunk(segs, budget: 30, tokenCount: fakeTokens)
        let b = Chunker.chunk(segs, budget: 30, tokenCount: fakeTokens)
        XCTAssertEqual(a, b)
        for c in a { XCTAssertEqual(c.contentHash, SHA256.hex(c.text)) }
        XCTAssertEqual(Chunker.chunk([Segment(id: 1, text: "abc")], budget: 10, tokenCount: fakeTokens).first?.contentHash,
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testDegenerateInputs() {
        XCTAssertEqual(Chunker.chunk([], budget: 100, tokenCount: fakeTokens), [])
        // A budget of 0 acts as 1: with words × 1.3 even one character is 2 tokens, so every
        // character ends up alone (the closest the chunker can get).
        let chunks = Chunker.chunk(segments(3, words: 2), budget: 0, tokenCount: fakeTokens)
        XCTAssertEqual(chunks.count, 24)
        XCTAssertTrue(chunks.allSatisfy { $0.text.count == 1 })
        XCTAssertEqual(Chunker.chunk(segments(3, words: 2), budget: -5, tokenCount: { _ in 1 }).map(\.segmentIds), [1...3])
        let unordered = [Segment(id: 5, text: "a"), Segment(id: 2, text: "b")]
        XCTAssertEqual(Chunker.chunk(unordered, budget: 100, tokenCount: fakeTokens).first?.segmentIds, 2...5)
    }

    func testPromptTextAndTimestamps() {
        let segs = [
            Segment(id: 12, start: 221.4, end: 225, speaker: "MAYA", text: "Hello."),
            Segment(id: 13, start: 3725, end: 3730, text: "Later."),
            Segment(id: 14, text: "Untimed."),
        ]
        XCTAssertEqual(Chunker.promptText(for: segs), "[12 @ 03:41] MAYA: Hello.\n[13 @ 1:02:05] Later.\n[14] Untimed.")
        XCTAssertEqual(Chunker.timestamp(0), "00:00")
        XCTAssertEqual(Chunker.timestamp(59.99), "00:59")
        XCTAssertEqual(Chunker.timestamp(3600), "1:00:00")
        XCTAssertEqual(Chunker.timestamp(-5), "00:00")
        XCTAssertEqual(Chunker.timestamp(.nan), "00:00")
        XCTAssertEqual(Chunker.timestamp(.infinity), "00:00")
        XCTAssertEqual(Chunker.timestamp(1e300), "1000000:00:00")
    }

    func testTokenBudgets() {
        XCTAssertEqual(TokenBudget.summary.limits, .init(input: 3000, output: 1000))
        XCTAssertEqual(TokenBudget.condensedSummary.limits, .init(input: 2000, output: 500))
        XCTAssertEqual(TokenBudget.tags.limits, .init(input: 2000, output: 300))
        XCTAssertEqual(TokenBudget.entities.limits, .init(input: 2000, output: 500))
        XCTAssertEqual(TokenBudget.highlights.limits, .init(input: 3000, output: 800))
        XCTAssertEqual(TokenBudget.qa.limits, .init(input: 3000, output: 500))
        XCTAssertEqual(TokenBudget.summary.scaled(toContext: 8192), .init(input: 3000, output: 1000))
        // 2048 context: 256 overhead, 1792 available, factor 0.448.
        XCTAssertEqual(TokenBudget.summary.scaled(toContext: 2048), .init(input: 1344, output: 448))
        for b in TokenBudget.allCases {
            for n in [0, 1, 10, 512, 1000, 4096] {
                let l = b.scaled(toContext: n)
                XCTAssertGreaterThanOrEqual(l.input, 1)
                XCTAssertGreaterThanOrEqual(l.output, 1)
                if n >= 512 { XCTAssertLessThanOrEqual(l.total + TokenBudget.overhead(forContext: n), n) }
            }
        }
    }
}

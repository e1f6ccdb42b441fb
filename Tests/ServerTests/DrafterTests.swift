import ParlanceEngine
import XCTest

/// Drafts from the text: the n-gram lookup, the per-sequence policy, the step cost model.
final class DrafterTests: XCTestCase {
    func testDraftIsWhatFollowedTheLongestEarlierNGram() {
        // "the cat sat on the mat . the cat" → after "the cat": "sat on the mat"
        var i = NGramIndex([1, 2, 3, 4, 1, 5, 6, 1, 2])
        XCTAssertEqual(i.draft(4), [3, 4, 1, 5])
        XCTAssertEqual(i.draft(2), [3, 4], "at most k tokens")
        i.append(3)
        XCTAssertEqual(i.draft(3), [4, 1, 5], "the index follows appended tokens")
        XCTAssertEqual(NGramIndex([7, 8, 9]).draft(4), [], "no n-gram of the tail occurs earlier")
        XCTAssertEqual(NGramIndex([7, 8, 9, 7, 8]).draft(4), [9, 7, 8], "never the tail itself")
        // The longest n-gram wins over a later, shorter one: "5 1 2" occurred before 9.
        XCTAssertEqual(NGramIndex([5, 1, 2, 9, 0, 1, 2, 8, 5, 1, 2]).draft(1), [9])
    }

    func testSiblingOutputDraftsButNotTheSharedPrompt() {
        let prompt: [Token] = [10, 11, 12, 13]
        var sibling = NGramIndex(prompt + [20, 21, 22, 23])
        sibling.append(24)
        let mine = NGramIndex(prompt + [30, 21, 22])
        XCTAssertEqual(mine.draft(3, others: [(sibling, prompt.count)]), [23, 24])
        // An n-gram found only in the sibling's prompt part is not drafted from it.
        let other = NGramIndex(prompt + [11, 12])
        XCTAssertEqual(other.draft(2, others: [(sibling, prompt.count)]), [13, 11], "own text first")
        XCTAssertEqual(NGramIndex([40, 11, 12]).draft(2, others: [(sibling, prompt.count)]), [])
    }

    func testDraftsAlwaysRejectedStopDrafting() {
        var p = DraftPolicy()
        var generated = 0
        var drafted = 0
        for _ in 0..<400 {
            generated += 1
            guard p.allows(generated: generated) else { continue }
            p.record(drafted: p.length, accepted: 0, generated: generated)
            drafted += 1
        }
        XCTAssertTrue(p.stopped)
        XCTAssertFalse(p.allows(generated: 10_000))
        XCTAssertLessThanOrEqual(drafted, 9, "three misses in a row pause; the third pause stops")
        XCTAssertLessThan(p.acceptance, 0.1)
    }

    func testDraftLengthGrowsWhenTakenWholeAndShrinksWhenCut() {
        var p = DraftPolicy()
        let start = p.length
        p.record(drafted: start, accepted: start, generated: 10)
        XCTAssertEqual(p.length, start * 2)
        for _ in 0..<10 { p.record(drafted: p.length, accepted: p.length, generated: 10) }
        XCTAssertEqual(p.length, DraftPolicy.maxLength)
        p.record(drafted: p.length, accepted: 3, generated: 30)
        XCTAssertEqual(p.length, 4)
        XCTAssertGreaterThan(p.acceptance, 0.8)
        XCTAssertFalse(p.stopped)
        // Under a tenth of 32 or more drafted tokens taken stops it.
        var q = DraftPolicy()
        for g in 0..<8 { q.record(drafted: 5, accepted: g == 0 ? 1 : 0, generated: g * 100) }
        XCTAssertTrue(q.stopped)
    }

    func testCostModelDraftsOnlyWhatPaysForItself() throws {
        var c = StepCost()
        XCTAssertEqual(c.length(available: 5, p: 0.5, tokens: 1, yield: 1), StepCost.probe, "nothing measured yet: a short probe")
        c.record(tokens: 1, seconds: 0.010)
        XCTAssertNil(c.model, "one size tells nothing of what a token costs")
        XCTAssertEqual(c.length(available: 5, p: 0.9, tokens: 1, yield: 1), StepCost.probe, "still a probe")
        // A step of one token costs 10 ms; each more token 1 ms.
        for n in [1, 2, 4, 8, 16] { c.record(tokens: n, seconds: 0.010 + 0.001 * Double(n - 1)) }
        let m = try XCTUnwrap(c.model)
        XCTAssertEqual(m.perToken, 0.001, accuracy: 1e-6)
        XCTAssertEqual(m.fixed, 0.009, accuracy: 1e-6)
        XCTAssertGreaterThan(c.length(available: 8, p: 0.9, tokens: 1, yield: 1), 4, "likely drafts are worth verifying")
        XCTAssertEqual(c.length(available: 8, p: 0.02, tokens: 1, yield: 1), 0, "unlikely ones are not")
        // Beside eight generating sequences the same draft is worth less than alone.
        XCTAssertLessThanOrEqual(c.length(available: 8, p: 0.6, tokens: 8, yield: 8), c.length(available: 8, p: 0.6, tokens: 1, yield: 1))
        // Where a token costs as much as a step, no draft below certainty pays.
        var dear = StepCost()
        for n in [1, 2, 4] { dear.record(tokens: n, seconds: 0.01 * Double(n)) }
        XCTAssertEqual(dear.length(available: 8, p: 0.7, tokens: 1, yield: 1), 0)
    }
}

import Foundation
import XCTest
@testable import ParlanceEngine

/// The number guard: tokens that would write a number its source does not begin with are
/// banned, wherever the number stands and however its separators fall; and through the real
/// model, output counting on past its source's numbers stops counting.
final class NumberGuardTests: XCTestCase {
    /// A vocabulary of a few digit-holding tokens, by text.
    let vocabulary = ["1", "5", "0", ",150", "50", "3pm", ":30", "10", "Q3", "2025"]
    func guarding(_ source: String) -> NumberGuard {
        NumberGuard(source: source, digitTokens: vocabulary.enumerated().map { (Token($0.offset), $0.element) })
    }
    func banned(_ g: NumberGuard) -> [String] { g.banned.map { vocabulary[Int($0)] } }

    func testOnlyTheSourcesNumbersCanBeWritten() {
        var g = guarding("Rent is £1,150 from 3 March; the Q3 review is at 3pm.")
        XCTAssertEqual(banned(g), ["5", "0", ",150", "50", ":30", "10", "2025"], "a number begins with 1 or 3")
        g.observe("rent of £")
        g.observe("1")
        XCTAssertEqual(banned(g), ["5", "0", "50", "3pm", ":30", "10", "2025"], "after 1: 1,150 goes on with 1 or ,150; Q3 is a new number")
        g.observe(",150")
        XCTAssertTrue(banned(g).contains("0"), "£1,1500 is not the rent")
        var written = NumberGuard(source: "the rent is £2,280", digitTokens: [(0, "28"), (1, "9")])
        written.observe("£2.")
        XCTAssertEqual(written.banned, [1], "2.28 reads as the digits of 2,280 (FactRepair restores its separators); 2.9 begins no number")
        g.observe(" on ")
        XCTAssertFalse(banned(g).contains("3pm"), "a new number: 3")
        g.observe("3")
        XCTAssertTrue(banned(g).contains(":30"), "3:30 is not 3pm")
        XCTAssertEqual(guarding("at 10:30").banned.map { vocabulary[Int($0)] }.contains("10"), false)
        var t = guarding("at 10:30")
        t.observe("10")
        XCTAssertFalse(banned(t).contains(":30"), "10:30 as the source writes it")
    }

    /// A number of two digits or more that only begins one of the source's cannot end there:
    /// after "11" of "1,150" every token but those going on with it is banned (the end of
    /// generation too); one digit, or a whole number of the source, may end.
    func testAStartedNumberOfTwoDigitsGoesOnToOneOfTheSources() {
        // Tokens 0–9 hold digits (as in `vocabulary`); 10 ","; 11 " on"; 12 "."; 13 the end.
        let words = vocabulary + [",", " on", ".", "</s>"]
        func guarding(_ source: String) -> NumberGuard {
            NumberGuard(source: source, digitTokens: vocabulary.enumerated().map { (Token($0.offset), $0.element) },
                        separatorTokens: [(10, ","), (12, ".")], vocabularySize: words.count)
        }
        func admissible(_ g: NumberGuard) -> [String] {
            let banned = Set(g.banned)
            return words.indices.filter { !banned.contains(Token($0)) }.map { words[$0] }
        }
        var g = guarding("Rent is £1,150 from 3 March, order 48213.")
        g.observe("£1")
        XCTAssertTrue(admissible(g).contains(" on"), "one digit may end: \(admissible(g))")
        g.observe("1")
        XCTAssertEqual(admissible(g), ["5", "50"], "11 goes on to 1150 (a separator may be left out, not put after 11); nothing ends it")
        g.observe("5")
        g.observe("0")
        XCTAssertEqual(admissible(g), ["Q3", ",", " on", ".", "</s>"], "1150 is whole: it may end; no digit may follow")
        var order = guarding("order 48213 ships")
        order.observe(" #4")
        XCTAssertTrue(admissible(order).contains("."), "4 may end")
        order.observe(",")
        XCTAssertFalse(admissible(order).contains("8"), "48213 has no separator after its 4: not '4,8'")
        var grouped = guarding("Rent is £1,150")
        grouped.observe("£1")
        grouped.observe(",")
        XCTAssertTrue(admissible(grouped).contains("1"), "1,150 is written so")
        var t = guarding("at 10:30")
        t.observe("10")
        XCTAssertEqual(admissible(t), [":30", ",", "."], "10 is not whole in this source: it goes on to 10:30")
        var same = guarding("at 10:30 or 10")
        same.observe("10")
        XCTAssertTrue(admissible(same).contains(" on"), "10 is whole here")
        // Without the vocabulary's size, as before: a number may end anywhere.
        var old = NumberGuard(source: "£1,150", digitTokens: vocabulary.enumerated().map { (Token($0.offset), $0.element) })
        old.observe("11")
        XCTAssertFalse(old.mustGoOn)
    }

    /// The default model, greedy, continuing a count: without the guard it counts on; with
    /// the source's numbers only 1 to 4, it writes no other number.
    func testACountStopsAtTheSourcesNumbers() async throws {
        let path = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"], "set by scripts/setup.sh")
        let engine = try Engine(config: EngineConfig(modelPath: path, contextSize: 512, threads: 1, parallel: 1, cachedSequences: 0))
        let source = "Step 1: open the box. Step 2: take out the lamp. Step 3: plug it in. Step 4: switch it on."
        let prompt = engine.tokenize(source + " Step")
        func generate(_ guarded: Bool) async throws -> String {
            var r = GenerationRequest(prompt: prompt, settings: .init(sampling: SamplingOptions(temperature: 0, repeatPenalty: 1.0), maxTokens: 40))
            if guarded { r.numberGuard = engine.numberGuard(source: source) }
            for try await event in engine.generate(r) { if case .done(let result) = event { return result.text } }
            return ""
        }
        func numbers(_ s: String) -> Set<String> {
            Set(s.split(whereSeparator: { !$0.isNumber }).map(String.init))
        }
        let free = try await generate(false)
        XCTAssertFalse(numbers(free).isSubset(of: ["1", "2", "3", "4"]), "the premise: the model counts on (\(free))")
        let guarded = try await generate(true)
        XCTAssertTrue(numbers(guarded).isSubset(of: ["1", "2", "3", "4"]), guarded)
        XCTAssertFalse(guarded.trimmingCharacters(in: .whitespaces).isEmpty)
    }
}

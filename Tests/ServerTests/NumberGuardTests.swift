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

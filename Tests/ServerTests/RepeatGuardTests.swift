import Foundation
import XCTest
@testable import ParlanceEngine

/// The repeat guard: a token that would complete a run of the output's own tokens already
/// written is banned; shorter repeats are not; and through the real model, greedy output
/// that loops without the guard writes no run twice with it.
final class RepeatGuardTests: XCTestCase {
    func testATokenCompletingARunWrittenBeforeIsBanned() {
        var g = RepeatGuard(run: 4)
        for t: Token in [1, 2, 3, 4, 9, 1, 2] { g.observe(t) }
        XCTAssertEqual(g.banned, [], "1 2 then 3 is a run of three only")
        g.observe(3)
        XCTAssertEqual(g.banned, [4], "1 2 3 then 4 is the run 1 2 3 4 again")
        g.observe(5)
        XCTAssertEqual(g.banned, [], "1 2 3 5 went elsewhere")
        for t: Token in [1, 2, 3] { g.observe(t) }
        XCTAssertEqual(g.banned, [4, 5], "both runs after 1 2 3 were written")
        XCTAssertEqual(RepeatGuard(run: 2).run, RepeatGuard.shortest, "a run shorter than a phrase is not guarded")
    }

    /// The default model, greedy, continuing a text that repeats itself: it repeats it again
    /// without the guard; with it, no run of six of its tokens comes twice, and its output
    /// is still text.
    func testGreedyOutputThatLoopsWritesNoRunTwiceWithTheGuard() async throws {
        let path = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"], "set by scripts/setup.sh")
        let engine = try Engine(config: EngineConfig(modelPath: path, contextSize: 512, threads: 1, parallel: 1, cachedSequences: 0))
        let line = "The review moves to Friday at 3pm. Please bring the slides. "
        let prompt = engine.tokenize(String(repeating: line, count: 4))
        func generate(_ run: Int?) async throws -> [Token] {
            var r = GenerationRequest(prompt: prompt, settings: .init(sampling: SamplingOptions(temperature: 0, repeatPenalty: 1.0), maxTokens: 48))
            r.noRepeatRun = run
            for try await event in engine.generate(r) { if case .done(let result) = event { return result.tokens } }
            return []
        }
        func repeatedRun(_ tokens: [Token], _ n: Int) -> Bool {
            guard tokens.count > n else { return false }
            let runs = (0...(tokens.count - n)).map { Array(tokens[$0..<($0 + n)]) }
            return Set(runs.map { $0.map(String.init).joined(separator: ",") }).count < runs.count
        }
        // A grammar's literal is written even where it repeats a run: the ban gives way when
        // it leaves nothing admissible.
        let fact = "The review moves to Friday at 3pm."
        var r = GenerationRequest(prompt: prompt, settings: .init(sampling: SamplingOptions(temperature: 0, repeatPenalty: 1.0), maxTokens: 64),
                                  grammar: "root ::= \"\(fact)\" [^\\x00-\\x1F]{0,40} \" \(fact)\"")
        r.noRepeatRun = 4
        var text = ""
        for try await event in engine.generate(r) { if case .done(let result) = event { text = result.text } }
        XCTAssertTrue(text.hasPrefix(fact) && text.hasSuffix(" " + fact), text)

        let free = try await generate(nil)
        XCTAssertTrue(repeatedRun(free, 6), "the premise: greedy output repeats the line (\(free.count) tokens)")
        let guarded = try await generate(6)
        XCTAssertEqual(guarded.count, 48, "the guard does not end the output")
        XCTAssertFalse(repeatedRun(guarded, 6), "a run of six tokens written twice")
    }
}

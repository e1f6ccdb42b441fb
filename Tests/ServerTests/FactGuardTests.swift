import XCTest
@testable import ParlanceEngine

/// The fact guard over a tokenizer whose tokens are characters: a fact begun distinctively
/// is finished exactly; a start that could begin something else is left to the model.
final class FactGuardTests: XCTestCase {
    func guarding(_ facts: [String]) -> FactGuard {
        FactGuard(facts: facts, tokenize: { $0.unicodeScalars.map { Token($0.value) } },
                  piece: { String(UnicodeScalar(UInt32($0)).map(Character.init) ?? " ") })
    }

    /// What the output is when the model writes `prefix` and then lets the guard finish.
    func complete(_ prefix: String, _ g: inout FactGuard) -> String {
        var out = ""
        for c in prefix.unicodeScalars {
            out.unicodeScalars.append(c)
            g.observe(Token(c.value), text: String(c), wasForced: false)
            if g.forced.isEmpty { continue }
            while let t = g.next() {
                let s = UnicodeScalar(UInt32(t))!
                out.unicodeScalars.append(s)
                g.observe(t, text: String(s), wasForced: true)
            }
            break
        }
        return out
    }

    func testAFactBegunIsFinishedExactly() {
        var g = guarding(["1Z999AA10123456784", "£1,150", "Priyanka"])
        XCTAssertEqual(complete("the parcel 1Z", &g), "the parcel 1Z999AA10123456784")
        g = guarding(["1Z999AA10123456784", "£1,150", "Priyanka"])
        XCTAssertEqual(complete("it costs £1.15", &g), "it costs £1,150")
        g = guarding(["1Z999AA10123456784", "£1,150", "Priyanka"])
        XCTAssertEqual(complete("ask Priya", &g), "ask Priyanka")
        XCTAssertEqual(g.completions, 1)
    }

    func testStartsThatCouldBeginSomethingElseAreLeftAlone() {
        var g = guarding(["3pm", "100kg", "Thelma", "2025"])
        XCTAssertEqual(complete("takes 3 to 5 days", &g), "takes 3 to 5 days", "a digit alone does not begin 3pm")
        XCTAssertEqual(complete("for 100 people", &g), "for 100 people", "a number's unit is never forced after the number")
        XCTAssertEqual(complete("The end", &g), "The end", "three letters do not begin a name")
        XCTAssertEqual(complete("in 202", &g), "in 2025", "a number's further digits are")
        // Mid-word: a spelling without its leading space needs a word boundary before it.
        g = guarding(["Priyanka"])
        XCTAssertEqual(complete("(Priy", &g), "(Priyanka")
        g = guarding(["Priyanka"])
        XCTAssertEqual(complete("xPriy", &g), "xPriy")
    }

    func testTwoFactsThatBeginAlikeWaitUntilTheyDiffer() {
        var g = guarding(["£1,150", "£1,900"])
        XCTAssertEqual(complete("from £1", &g), "from £1")
        g = guarding(["£1,150", "£1,900"])
        XCTAssertEqual(complete("from £1,9", &g), "from £1,900")
    }
}

/// Through the default model, under a grammar (a tool-call step's answer, a schema's string):
/// a fact begun is finished as far as the grammar accepts it, and a forced token never
/// breaks the grammar.
final class FactGuardUnderGrammarTests: XCTestCase {
    func testUnderAGrammarAFactBegunIsFinishedAsFarAsTheGrammarAccepts() async throws {
        let path = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"], "set by scripts/setup.sh")
        let engine = try Engine(config: EngineConfig(modelPath: path, contextSize: 512, threads: 1, parallel: 1, cachedSequences: 0))
        // The fact is not in the prompt: unguarded, the model cannot write it after "1Z".
        let fact = "1Z999AA10123456784"
        let prompt = engine.tokenize("Your parcel has shipped. Tracking number:")
        func generate(_ grammar: String, guarded: Bool) async throws -> String {
            var r = GenerationRequest(prompt: prompt, settings: .init(sampling: SamplingOptions(temperature: 0, repeatPenalty: 1.0), maxTokens: 32),
                                      grammar: grammar)
            if guarded { r.factGuard = engine.factGuard([fact]) }
            for try await event in engine.generate(r) { if case .done(let result) = event { return result.text } }
            return ""
        }
        let open = #"root ::= " 1Z" [0-9A-Z]{1,24} "\n""#
        let free = try await generate(open, guarded: false)
        XCTAssertFalse(free.contains(fact), "the premise: unguarded, the model does not write the fact (\(free))")
        let guarded = try await generate(open, guarded: true)
        XCTAssertTrue(guarded.hasPrefix(" \(fact)"), guarded)
        // A grammar that admits only five more characters: the fact is forced that far, no further.
        let short = #"root ::= " 1Z" [0-9A-Z]{1,5} "\n""#
        let cut = try await generate(short, guarded: true)
        XCTAssertEqual(cut, " 1Z999AA\n")
    }
}

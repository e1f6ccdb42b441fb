import Foundation
import ParlanceJSON
import ParlanceSchema
import XCTest
@testable import ParlanceEngine

/// The spill guard: a string the grammar closed while the model meant to go on is reopened.
final class SpillGuardTests: XCTestCase {
    func testTheLexerSeesClosesNotOpensOrEscapes() {
        var l = JSONStringLexer()
        XCTAssertFalse(l.read("{\""), "a key opens")
        XCTAssertFalse(l.read("summary\":"), "the key closes after its last letter")
        XCTAssertFalse(l.read(" \"A feature called"))
        XCTAssertFalse(l.read(" \\\"Scan\\\""), "escaped quotes stay inside the string")
        XCTAssertTrue(l.read(" \""), "a space and a quote close the value")
        XCTAssertEqual(l.opened, 2)
        XCTAssertFalse(l.read(", \"b\": \"The end.\""), "a value closed after its full stop")
        XCTAssertTrue(l.read(", \"c\": \"one\\n\""), "after an escaped newline")
        XCTAssertFalse(l.read(", \"x \",\""), "a close that opens the next string does not end outside a string")
        XCTAssertTrue(l.inString)
    }

    /// The default model, greedy, summarizing texts that quote names, under a schema: with the
    /// guard off it ends values where it meant to open a quote (`"The team named the new
    /// release "`) and its sentence spills into the next key; with it on each such close is
    /// taken back and the value goes on (`… release Blue Harbor, which …`).
    func testAStringClosedWhereTheModelMeantToGoOnIsReopened() async throws {
        let path = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"], "set by scripts/setup.sh")
        var config = EngineConfig(modelPath: path, contextSize: 1024, threads: MachineDefaults.threads, parallel: 1, cachedSequences: 0)
        config.checkKV = true  // the cell taken back leaves the cache and the slot's tokens alike
        let engine = try Engine(config: config)
        let schema: JSONValue = ["type": "object", "additionalProperties": false, "required": ["summary", "topics"], "properties": [
            "summary": ["type": "string", "maxLength": 300],
            "topics": ["type": "array", "maxItems": 3, "items": ["type": "string", "maxLength": 60]],
        ]]
        let grammar = try GrammarBuilder.gbnf(for: schema)
        func generate(_ text: String, guarded: Bool) async throws -> (summary: String, undone: Int) {
            let prompt = engine.prompt.tokens(for: [
                ChatMessage(.system, "You summarize texts as JSON."),
                ChatMessage(.user, "Text: \(text)\nGive summary (two sentences) and topics."),
            ])
            var s = GenerationSettings(sampling: SamplingOptions(temperature: 0, repeatPenalty: 1.0), maxTokens: 160)
            s.spillGuard = guarded
            for try await event in engine.generate(GenerationRequest(prompt: prompt, settings: s, grammar: grammar)) {
                guard case .done(let result) = event else { continue }
                let summary = try XCTUnwrap(JSONParser.parse(result.text)["summary"]?.stringValue, result.text)
                return (summary, result.stats.spillsUndone)
            }
            throw CancellationError()
        }
        var spilled = 0
        for text in Self.texts {
            let off = try await generate(text, guarded: false), on = try await generate(text, guarded: true)
            XCTAssertEqual(off.undone, 0)
            if off.summary.last?.isWhitespace == true { spilled += 1 }
            XCTAssertFalse(on.summary.last?.isWhitespace ?? true, "guarded: \(on.summary.debugDescription)")
            if off.summary.last?.isWhitespace == true {
                XCTAssertGreaterThanOrEqual(on.undone, 1, text)
                XCTAssertGreaterThan(on.summary.count, off.summary.count, "the value went on: \(on.summary.debugDescription)")
            }
        }
        XCTAssertGreaterThanOrEqual(spilled, 3, "the premise: unguarded, the model ends values where it meant to quote a name")
    }

    static let texts = [
        "Maria Lopez launched a new phone app called \"Scan and Go\". It reads receipts and totals a month of spending.",
        "The team named the new release \"Blue Harbor\". It ships on Monday with faster search and a new editor.",
        "Our podcast, \"The Local Loop\", talked about a feature called \"Quick Notes\" that saves a voice memo as text.",
        "Host: Welcome back to \"Tech Talk\". Guest: Thanks. Our startup built a tool called \"Ledger Lens\" for small shops.",
        "The council approved the \"Green Streets\" plan. It adds bike lanes on Main Street and plants 200 trees.",
    ]
}

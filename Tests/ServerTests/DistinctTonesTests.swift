import ParlanceEngine
import ParlanceProtocol
import XCTest
@testable import ParlanceFeatures

/// Two tones of one composition that come back alike fail together; the one whose tone
/// markers miss is generated again and kept when it no longer reads like the other.
final class DistinctTonesTests: XCTestCase {
    let original = "team the last deploy broke checkout again roll it back and page me if it breaks"
    let same = "Team: The last deploy broke checkout again. Roll it back and page me if it breaks."

    func variation(_ id: String, _ tone: Tone, _ text: String) -> ComposeVariation {
        ComposeVariation(id: id, tone: tone, audience: .team, text: text, formalityScore: Formality.score(text), keyPointsPreserved: [], keyPointsMissing: [],
                         diff: WordDiff.diff(original, text), seed: 7, finishReason: "stop", usage: .zero,
                         verification: Verification(passed: true, attempts: 1, issues: []))
    }

    func testIdenticalTonesFailTogetherWhenTheRetryIsAlikeToo() async throws {
        var results: [(Int, ComposeVariation, [Token])] = [(0, variation("c.1", .formal, same), []), (1, variation("c.2", .casual, same), [])]
        var regenerated: [Tone] = []
        try await Compose.separateTones(&results, original: original) { v, _ in
            regenerated.append(v.tone)
            return (self.variation(v.id, v.tone, self.same), [])
        }
        XCTAssertFalse(regenerated.isEmpty, "a variation of the pair is generated again")
        for (_, v, _) in results {
            XCTAssertEqual(v.verification?.passed, false, v.tone.rawValue)
            XCTAssertTrue(v.verification?.issues.contains { $0.code == .toneMismatch && $0.message.contains("word for word") } ?? false, "\(v)")
        }
    }

    func testTheToneThatMissesItsMarkersIsRegeneratedAndKept() async throws {
        var results: [(Int, ComposeVariation, [Token])] = [(0, variation("c.1", .formal, same), []), (1, variation("c.2", .casual, same), [])]
        var regenerated: [Tone] = []
        try await Compose.separateTones(&results, original: original) { v, _ in
            regenerated.append(v.tone)
            return (self.variation(v.id, v.tone, v.tone == .casual ? "Hey, heads up: the deploy broke checkout again. Can you roll it back? Ping me if it breaks!"
                                                                    : "Dear team, the last deployment has broken checkout again. Please roll it back, and page me should it break."), [])
        }
        XCTAssertTrue(regenerated.contains(.casual), "the casual text has no casual markers: \(regenerated)")
        XCTAssertLessThan(Compose.overlap(results[0].1.text, results[1].1.text), Compose.alikeOverlap)
        for (_, v, _) in results {
            XCTAssertFalse(v.verification?.issues.contains { $0.message.contains("word for word") && $0.repaired != true } ?? true, "\(v)")
        }
        // The variation generated again says why, as a repaired issue.
        let casual = try XCTUnwrap(results.first { $0.1.tone == .casual }?.1)
        XCTAssertTrue(casual.verification?.issues.contains { $0.message == "reads nearly word for word like the formal variation: repaired" && $0.repaired == true } ?? false,
                      "\(String(describing: casual.verification))")
        XCTAssertEqual(Compose.alike([variation("a", .formal, "Dear team, the review moves to Friday. Please bring your mockups."),
                                      variation("b", .casual, "Hey team, the review moves to Friday. Bring your mockups.")]).count, 0,
                       "two tones that share their facts but not their words are not alike")
    }

    /// A variation alike with two others is generated again once, not once per pair; a pair
    /// that no longer reads alike by its turn is left alone.
    func testAVariationIsGeneratedAgainOnceAtMost() async throws {
        var results: [(Int, ComposeVariation, [Token])] = [(0, variation("c.1", .formal, same), []), (1, variation("c.2", .empathetic, same), []),
                                                           (2, variation("c.3", .direct, same), [])]
        var regenerated: [String] = []
        try await Compose.separateTones(&results, original: original) { v, _ in
            regenerated.append(v.id)
            return (self.variation(v.id, v.tone, self.same), [])
        }
        XCTAssertEqual(regenerated.count, Set(regenerated).count, "generated again more than once: \(regenerated)")
        XCTAssertEqual(Set(regenerated), ["c.1", "c.2", "c.3"], "every tone misses its markers, each once")
    }

    /// A formal variation that scores no more formal than the casual one fails with it; the
    /// one whose markers miss is generated again and kept once the order is right.
    func testAFormalVariationNoMoreFormalThanTheCasualOneIsRegenerated() async throws {
        let formalish = "Dear residents, please be advised that the lift will be unavailable until Monday. We apologise for the inconvenience."
        let casualish = "Hey, the lift's down till Monday, so grab the stairs, ok?"
        XCTAssertLessThan(Compose.overlap(formalish, casualish), Compose.alikeOverlap, "not alike by their words")
        XCTAssertEqual(Compose.conflict(variation("a", .formal, casualish), variation("b", .casual, formalish), language: "en"), .toneOrder(.casual))
        XCTAssertNil(Compose.conflict(variation("a", .formal, formalish), variation("b", .casual, casualish), language: "en"))
        XCTAssertNil(Compose.conflict(variation("a", .formal, casualish), variation("b", .direct, formalish), language: "en"), "only formal and casual have an order")

        // The formal one misses its markers (contractions, slang); the casual one has its own.
        let casual = "Heads up: the lift is down until Monday, so you'll need the stairs."
        XCTAssertEqual(ToneCheck.check(casual, tone: .casual, original: original), [])
        XCTAssertLessThanOrEqual(Formality.score(casualish), Formality.score(casual), "the pair is in the wrong order")
        var results: [(Int, ComposeVariation, [Token])] = [(0, variation("c.1", .formal, casualish), []), (1, variation("c.2", .casual, casual), [])]
        var regenerated: [Tone] = []
        try await Compose.separateTones(&results, original: original) { v, _ in
            regenerated.append(v.tone)
            return (self.variation(v.id, v.tone, formalish), [])
        }
        XCTAssertEqual(regenerated, [.formal], "the tone that misses its markers")
        XCTAssertEqual(results[0].1.text, formalish)
        XCTAssertGreaterThan(Formality.score(results[0].1.text), Formality.score(results[1].1.text))
        XCTAssertTrue(results[0].1.verification?.issues.contains { $0.message == "scores no more formal than the casual variation: repaired" } ?? false,
                      "\(String(describing: results[0].1.verification))")
        XCTAssertEqual(results[1].1.verification?.passed, true)

        // A retry in the wrong order again: both fail, each naming the other.
        results = [(0, variation("c.1", .formal, casualish), []), (1, variation("c.2", .casual, formalish), [])]
        try await Compose.separateTones(&results, original: original) { v, _ in (v, []) }
        XCTAssertEqual(results.map { $0.1.verification?.passed }, [false, false])
        XCTAssertTrue(results[1].1.verification?.issues.contains { $0.message == "scores no less formal than the formal variation" } ?? false,
                      "\(String(describing: results[1].1.verification))")
    }
}

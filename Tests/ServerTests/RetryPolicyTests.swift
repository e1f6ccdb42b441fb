import ParlanceEngine
@testable import ParlanceFeatures
import ParlanceProtocol
import ParlanceSchema
import XCTest

/// What a failing variation gets next (`Compose.RetryPolicy`): facts it lacks are put back
/// by sentences continuing it (`FactInsertion`), not a new variation; anything worse gets one new
/// variation; an insertion or a grammar attempt is final.
final class RetryPolicyTests: XCTestCase {
    static let selection = "Hi Priyanka, the rent of £1,150 for Flat 4 is due on 3 March. The agreement allows a £35 late fee. "
        + "Drilling runs 9am to 4pm at Canal House."
    static let kept = "Dear Priyanka, the rent of £1,150 for Flat 4 is due on 3 March."

    func policy(_ tone: Tone = .formal, grammar: Bool = true, selection: String = selection) -> Compose.RetryPolicy {
        Compose.RetryPolicy(tone: tone, refinement: false, attempts: Attempts(verify: true, maxAttempts: 3), acceptsGrammar: grammar, selection: selection)
    }

    func attempt(_ text: String, _ findings: [Finding], n: Int = 1, inserted: Bool = false, constrained: Bool = false) -> Compose.Attempt {
        let out = Generated(text: text, json: nil, tokens: [], prompt: ModelPrompt(messages: [], tokens: []), usage: .zero, finishReason: .stop)
        return Compose.Attempt(out: out, seed: 1, attempt: n, text: text, findings: findings, repaired: false, missingFacts: 0,
                               constrained: constrained, toneRetried: false, inserted: inserted)
    }

    static let missing = Finding(.factMissing, .factsMissing(["£35"]))
    static let echo = Finding(.instructionEcho, .rewriteEchoesPrompt("Rewrite the text"))
    static let tone = Finding(.toneMismatch, .tone(.formal, [.contractions(["don't"])]))
    /// A tone off in the way a sentence of its marker phrases mends.
    static func off(_ tone: Tone) -> Finding {
        let failure: ToneCheck.Failure = switch tone {
        case .formal: .readsCasual(0.4)
        case .casual: .readsFormal(0.7)
        case .empathetic: .noAcknowledgement
        case .diplomatic: .noHedge
        case .direct: .noMainWordsFirst
        }
        return Finding(.toneMismatch, .tone(tone, [failure]))
    }

    /// A formal or casual variation of a Spanish (French, German…) selection whose tone is
    /// off gets one new variation opening with a phrase of that language's address, not a
    /// sentence of English marker phrases; a tone whose phrases are English alone (empathetic)
    /// is reported, not retried.
    func testAToneOffInAnotherLanguageOpensWithThatLanguagesAddress() throws {
        let selection = "Hola Marta, el técnico no podrá venir hasta el jueves 14 de marzo. Te descontaremos 50 euros del alquiler."
        func spanish(_ tone: Tone) -> Compose.RetryPolicy {
            Compose.RetryPolicy(tone: tone, refinement: false, attempts: Attempts(verify: true, maxAttempts: 3), acceptsGrammar: true,
                                selection: selection, language: "es")
        }
        for (tone, opener) in [(Tone.formal, "Estimados:"), (.casual, "¡Hola!")] {
            let a = attempt(selection, [Self.off(tone)])
            let p = spanish(tone)
            XCTAssertFalse(p.mendable(a), "no English sentence is added to a Spanish text")
            XCTAssertTrue(p.worthRetrying(a, a.findings), "\(tone)")
            let plan = p.plan(attempt: 2, after: a)
            XCTAssertNil(plan.mending)
            XCTAssertNotNil(plan.toneHint)
            let grammar = try XCTUnwrap(plan.grammar, "\(tone)")
            XCTAssertTrue(grammar.contains(GrammarBuilder.literal(opener)), grammar)
            XCTAssertFalse(grammar.contains("Dear team") || grammar.contains("Hey,"), grammar)
        }
        let e = attempt(selection, [Self.off(.empathetic)])
        XCTAssertFalse(spanish(.empathetic).worthRetrying(e, e.findings))
        XCTAssertEqual(Compose.distinctOpeners(.empathetic, language: "es"), [])
        XCTAssertEqual(Compose.distinctOpeners(.formal, language: "fr-CA").first, "Madame, Monsieur,")
        XCTAssertEqual(Compose.distinctOpeners(.casual, language: "en").first, "Hey,")
    }

    func testMissingFactsAreInsertedNotRegenerated() {
        let p = policy()
        let a = attempt(Self.kept + " The agreement allows a late fee. Drilling runs 9am to 4pm at Canal House.", [Self.missing, Self.tone])
        XCTAssertTrue(p.worthRetrying(a, a.findings))
        let plan = p.plan(attempt: 2, after: a)
        XCTAssertEqual(plan.insert.map(\.text), ["£35"])
        XCTAssertNil(plan.grammar)
        XCTAssertNil(plan.toneHint)
        // The insertion is final, whatever it found.
        let b = attempt(a.text + " The fee is £35.", [Self.tone], n: 2, inserted: true)
        XCTAssertFalse(p.worthRetrying(b, b.findings))
        XCTAssertEqual(p.plan(attempt: 3, after: b).insert.count, 0)
    }

    func testAToneOffTooIsMendedByTheSentencesThatPutTheFactsBack() {
        for tone in [Tone.empathetic, .diplomatic, .formal, .casual] {
            let p = policy(tone)
            let a = attempt(Self.kept + " The agreement allows a late fee. Drilling runs 9am to 4pm at Canal House.", [Self.missing, Self.off(tone)])
            let plan = p.plan(attempt: 2, after: a)
            XCTAssertEqual(plan.insert.map(\.text), ["£35"])
            XCTAssertEqual(plan.mending, tone)
            for lead in FactInsertion.leads(mending: tone) where tone != .formal {
                XCTAssertEqual(ToneCheck.check(Self.kept + " " + lead + " the agreement allows a £35 late fee.", tone: tone, original: Self.selection), [],
                               "\(lead) marks \(tone)")
            }
            // The tone alone was fine: the plain connectors; casual's own, which keep it casual.
            XCTAssertEqual(p.plan(attempt: 2, after: attempt(a.text, [Self.missing])).mending, tone == .casual ? .casual : nil)
            // Not in another language: the phrases are English.
            let spanish = Compose.RetryPolicy(tone: tone, refinement: false, attempts: Attempts(verify: true, maxAttempts: 3), acceptsGrammar: true,
                                              selection: Self.selection, language: "es")
            XCTAssertNil(spanish.plan(attempt: 2, after: a).mending)
        }
        XCTAssertNil(policy(.direct).plan(attempt: 2, after: attempt(Self.kept, [Self.missing, Self.off(.direct)])).mending)
        // Contractions a sentence cannot take out.
        XCTAssertNil(policy(.formal).plan(attempt: 2, after: attempt(Self.kept, [Self.missing, Self.tone])).mending)
    }

    /// A passage quoted from a transcript is no message: no sentence of a tone's phrases is
    /// added to it ("Let me know if you've been working on any projects…" was added to a
    /// podcast's quote about a career in marine mechanics, and passed).
    func testAQuoteGetsNoSentenceAddressedToAReader() {
        let quote = "He actually started his career in marine mechanics, which is pretty interesting. And during the pandemic, "
            + "decided to switch tracks into, you know, web development and front-end development in general."
        XCTAssertFalse(FactInsertion.addressesReader(quote))
        XCTAssertFalse(FactInsertion.addressesReader("we forced the copyright guys to go after our customers, and then they had to go sue everybody"))
        XCTAssertTrue(FactInsertion.addressesReader(Self.selection))
        XCTAssertFalse(FactInsertion.addressesReader("All the models chose to proceed through the intersection. History shows why."))
        XCTAssertFalse(FactInsertion.addressesReader("History shows why the models failed."))
        XCTAssertTrue(FactInsertion.addressesReader("Team, the launch moves to March."))
        XCTAssertTrue(FactInsertion.addressesReader("Do you know when he's back?"))
        XCTAssertTrue(FactInsertion.addressesReader("The build is red again. Can you look at it before the release?"))
        for tone in [Tone.empathetic, .diplomatic, .formal, .casual] {
            let a = attempt(quote, [Self.off(tone)])
            XCTAssertNil(policy(tone, selection: quote).plan(attempt: 2, after: a).mending, "\(tone)")
        }
    }

    func testAToneOffAloneGetsOneSentenceWithAMarkerPhraseNotANewVariation() {
        for tone in [Tone.empathetic, .diplomatic, .formal, .casual] {
            let a = attempt(Self.selection, [Self.off(tone)])
            let p = policy(tone)
            XCTAssertTrue(p.worthRetrying(a, a.findings))
            let plan = p.plan(attempt: 2, after: a)
            XCTAssertEqual(plan.mending, tone)
            XCTAssertEqual(plan.insert.count, 0)
            XCTAssertNil(plan.grammar)
            // The sentence is final.
            XCTAssertFalse(p.worthRetrying(attempt(Self.selection + " I understand.", [Self.off(tone)], n: 2, inserted: true), [Self.off(tone)]))
        }
        // Direct has no phrase; contractions left in a formal text are not mended by a sentence.
        XCTAssertFalse(policy(.direct).worthRetrying(attempt(Self.selection, [Self.off(.direct)]), [Self.off(.direct)]))
        XCTAssertFalse(policy(.formal).worthRetrying(attempt(Self.selection, [Self.tone]), [Self.tone]))
    }

    func testFactsOfMoreSentencesThanAnInsertionSaysAgainAreInsertedUpToItsLimit() {
        let p = policy(selection: Self.selection + " Call Ravi on 0161 496 0000.")
        let a = attempt("Dear Priyanka, the rent is due on 3 March.", [Self.missing])
        let missing = FactGrammar.missing(p.units, in: a.text)
        XCTAssertEqual(FactInsertion.sentences(carrying: missing, in: p.selection).count, FactInsertion.maxSentences + 1)
        XCTAssertTrue(p.worthRetrying(a, a.findings))
        // The facts of the first sentences an insertion says again; the last one's stay missing.
        XCTAssertEqual(p.plan(attempt: 2, after: a).insert.map(\.text), ["£1,150", "Flat", "4", "£35", "9", "Canal", "House"])
    }

    func testWorseFindingsGetOneNewVariationThenAnInsertion() {
        let p = policy()
        let a = attempt(Self.kept + " Rewrite the text.", [Self.echo, Self.missing])
        XCTAssertTrue(p.worthRetrying(a, a.findings))
        XCTAssertEqual(p.plan(attempt: 2, after: a).insert.count, 0, "an echo: a new variation")
        let again = attempt(Self.kept + " Rewrite the text again.", [Self.echo], n: 2)
        XCTAssertFalse(p.worthRetrying(again, again.findings), "a second new variation rescued almost none")
        let factsOnly = attempt(Self.kept + " The agreement allows a late fee. Drilling runs 9am to 4pm at Canal House.", [Self.missing], n: 2)
        XCTAssertTrue(p.worthRetrying(factsOnly, factsOnly.findings))
        XCTAssertEqual(p.plan(attempt: 3, after: factsOnly).insert.map(\.text), ["£35"])
        // The new variation is written under the facts grammar, and may still leave a fact
        // out (its gaps end where the model ends them): the fact is put back all the same.
        let underGrammar = attempt(factsOnly.text, [Self.missing], n: 2, constrained: true)
        XCTAssertTrue(p.worthRetrying(underGrammar, underGrammar.findings))
        XCTAssertEqual(p.plan(attempt: 3, after: underGrammar).insert.map(\.text), ["£35"])
        // Anything worse after a grammar attempt: final.
        let echoed = attempt(Self.kept + " Rewrite the text again.", [Self.echo, Self.missing], n: 2, constrained: true)
        XCTAssertFalse(p.worthRetrying(echoed, echoed.findings))
    }

    /// A variation cut mid-clause is ended before the facts' sentences follow it: run on,
    /// "…careful planning, In addition, revenue…" read "In" as an invented name and the
    /// sentence with the facts was taken out again.
    func testTheSentencesPuttingFactsBackFollowAnEndedSentence() {
        XCTAssertEqual(FactInsertion.closed("I am confident that with careful planning,"), "I am confident that with careful planning.")
        XCTAssertEqual(FactInsertion.closed("We expect to be back within"), "We expect to be back within.")
        XCTAssertEqual(FactInsertion.closed("It is due on 3 March.\n"), "It is due on 3 March.\n")
        XCTAssertEqual(FactInsertion.closed("Will you come?"), "Will you come?")
        XCTAssertEqual(FactInsertion.closed("Best regards \u{2014} "), "Best regards.")
        let selection = "Revenue for October was €1.84M, 6% above forecast. Gross margin slipped to 44%."
        let cut = "I am writing about our results. I am confident that with careful planning,"
        let text = FactInsertion.closed(cut) + " " + (FactInsertion.copied(FactGrammar.units(selection).filter { $0.text == "€1.84M" || $0.text == "6%" },
                                                                          selection: selection, lead: "In addition,") ?? "")
        XCTAssertEqual(text, "I am writing about our results. I am confident that with careful planning. In addition, revenue for October was €1.84M, 6% above forecast.")
        let verified = RewriteVerifier.verify(.init(original: selection, rewrite: text, instructions: [], language: "en", lengthBounds: 0.1...10,
                                                    previous: nil, examples: [], tone: nil), mode: .repair)
        XCTAssertTrue(verified.value.contains("€1.84M"), "\(verified.findings)")
    }

    func testWithoutGrammarsAFactMissingGetsOneNewVariation() {
        let p = policy(grammar: false)
        let a = attempt(Self.kept, [Self.missing])
        XCTAssertTrue(p.worthRetrying(a, a.findings))
        XCTAssertEqual(p.plan(attempt: 2, after: a).insert.count, 0)
        XCTAssertFalse(p.worthRetrying(attempt(Self.kept, [Self.missing], n: 2), [Self.missing]))
    }
}

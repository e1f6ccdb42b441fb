import ParlanceFeatures
import ParlanceProtocol
import ParlanceSchema
import XCTest

/// The deterministic repairs of a rewrite (facts put back, tone markers) and the tone
/// checks, on passing and failing examples, without a model.
final class RewriteRepairTests: XCTestCase {
    static let rent = "Hi Priyanka, just a reminder that the rent of £1,150 for Flat 4 is due on 3 March. Last month's payment arrived six days late."

    // MARK: Facts changed in place

    /// The facts a repair put back.
    func changes(_ r: Repaired<String>) -> [FactRepair.Change] {
        r.findings.compactMap { if case .factChanged(let c) = $0.subject { c } else { nil } }
    }

    func testAmountChangedInPlaceIsRestored() {
        let rewrite = "Dear Priyanka, this is a reminder that the rent of £1,200 for Flat 4 is due on 3 March. Last month's payment arrived six days late."
        let r = FactRepair.repair(original: Self.rent, rewrite: rewrite)
        XCTAssertEqual(r.value, "Dear Priyanka, this is a reminder that the rent of £1,150 for Flat 4 is due on 3 March. Last month's payment arrived six days late.")
        XCTAssertEqual(r.findings, [Finding(.factMissing, .factChanged(FactRepair.Change(changed: "£1,200", restored: "£1,150")), action: .restored)])
        let issue = r.issues[0]
        XCTAssertEqual(issue.code, .factMissing)
        XCTAssertEqual(issue.repaired, true)
        XCTAssertTrue(issue.message.contains("£1,200") && issue.message.contains("£1,150") && issue.message.hasSuffix("restored"), issue.message)
    }

    func testShortenedNameIsRestoredEvenAfterANewGreeting() {
        let rewrite = "Dear Priya, the rent of £1,150 for Flat 4 is due on 3 March. Last month's payment arrived six days late."
        let r = FactRepair.repair(original: Self.rent, rewrite: rewrite)
        XCTAssertEqual(r.value, "Dear Priyanka, the rent of £1,150 for Flat 4 is due on 3 March. Last month's payment arrived six days late.")
        XCTAssertEqual(changes(r).map(\.changed), ["Priya"])
        // A possessive keeps its 's.
        let possessive = FactRepair.repair(original: "Priyanka will send the keys.", rewrite: "Priya's keys will be sent.")
        XCTAssertEqual(possessive.value, "Priyanka's keys will be sent.")
    }

    func testDatesAndNumbersWrittenAnotherWayGetTheSelectionsSpelling() {
        let rewrite = "Priyanka, your rent of £1150 for Flat 4 is due on March 3rd. Last month's payment came 6 days late."
        let r = FactRepair.repair(original: Self.rent, rewrite: rewrite)
        XCTAssertEqual(r.value, "Priyanka, your rent of £1,150 for Flat 4 is due on 3 March. Last month's payment came six days late.")
        XCTAssertEqual(Set(changes(r).map(\.restored)), ["3 March", "£1,150", "six"])
        // A weekday the selection gives comes back with its date.
        let works = FactRepair.repair(original: "Work starts on Monday 3 June at Canal House.", rewrite: "Work at Canal House begins June 3.")
        XCTAssertEqual(works.value, "Work at Canal House begins Monday 3 June.")
    }

    func testANumberWhoseUnitChangedWithItGetsItsUnitBack() {
        let original = "Under the scheme the deposit of £1,600 should be returned within 10 days of the tenancy ending."
        let r = FactRepair.repair(original: original, rewrite: "The £1,600 deposit should be returned within 3 weeks of the tenancy ending.")
        XCTAssertEqual(r.value, "The £1,600 deposit should be returned within 10 days of the tenancy ending.")
        XCTAssertEqual(changes(r), [FactRepair.Change(changed: "3 weeks", restored: "10 days")])
    }

    func testNothingIsRepairedWhereTheAlignmentIsAmbiguousOrTheTextWouldGetWorse() {
        // A fact dropped altogether: nothing sits where it was.
        let dropped = "Dear Priyanka, the rent for Flat 4 is due on 3 March. Last month's payment arrived six days late."
        XCTAssertEqual(FactRepair.repair(original: Self.rent, rewrite: dropped).findings, [])
        // Two invented amounts far from where the one missing was: which one replaced it is unknown.
        let two = "Priyanka, £40 or £50 is what we charge. The rent for Flat 4 is due on 3 March; last month's payment was six days late."
        XCTAssertEqual(FactRepair.repair(original: Self.rent, rewrite: two).findings, [])
        // A name elsewhere, unlike the missing one, is not taken for it...
        let other = "Tom says the rent of £1,150 for Flat 4 is due on 3 March. Last month's payment arrived six days late."
        XCTAssertEqual(FactRepair.repair(original: Self.rent, rewrite: other).value, other)
        // ...but one standing where it stood is (the model swapped the name).
        let swappedName = "Dear Tom, the rent of £1,150 for Flat 4 is due on 3 March. Last month's payment arrived six days late."
        XCTAssertEqual(FactRepair.repair(original: Self.rent, rewrite: swappedName).value.prefix(14), "Dear Priyanka,")
        // Another fact of the selection standing in the place is never overwritten.
        let swapped = FactRepair.repair(original: "Pay £35 by Friday, or £1,150 by Monday.", rewrite: "Please pay £35 by Friday, or £35 by Monday.")
        XCTAssertEqual(swapped.findings, [])
        // A faithful rewrite is left exactly as it is.
        let faithful = "Dear Priyanka, the rent of £1,150 for Flat 4 is due on 3 March. Last month's payment arrived six days late."
        XCTAssertEqual(FactRepair.repair(original: Self.rent, rewrite: faithful).value, faithful)
        // "twice" is not respelt into "2 times".
        XCTAssertEqual(FactRepair.repair(original: "The tests failed twice.", rewrite: "The tests failed 2 times.").value, "The tests failed 2 times.")
    }

    func testAGreetingToAnInventedNameLosesTheName() {
        let original = "The boiler in flat 2B stopped working again on Sunday night."
        XCTAssertEqual(FactRepair.dropInventedGreetingName(original: original, rewrite: "Dear Sarah, the boiler in flat 2B failed again on Sunday.").value,
                       "Hello, the boiler in flat 2B failed again on Sunday.")
        XCTAssertEqual(FactRepair.dropInventedGreetingName(original: original, rewrite: "Hi Mark Jones! The boiler failed.").findings.map(\.subject),
                       [.greetingName("Mark Jones")])
        // A name the selection has, a group, or no greeting: left alone.
        for (source, rewrite) in [("Hi Priyanka, the rent is due.", "Dear Priyanka, the rent is due."), (original, "Dear residents, the boiler failed on Sunday."),
                                  (original, "The boiler in flat 2B failed on Sunday.")] {
            let same = FactRepair.dropInventedGreetingName(original: source, rewrite: rewrite)
            XCTAssertEqual(same.value, rewrite)
            XCTAssertEqual(same.findings, [])
        }
    }

    // MARK: Missing facts by construction

    func testTheSelectionsFactsAsGrammarsForceThemAndWhatAVariationLacks() throws {
        // In the selection's order, a date as a whole.
        let units = FactGrammar.units(Self.rent)
        XCTAssertEqual(units.map(\.text), ["Priyanka", "£1,150", "Flat", "4", "3 March", "six"])
        let lacking = FactGrammar.missing(units, in: "Dear Priyanka, the rent of £1,150 for Flat 4 is due on March 3. It was late.")
        XCTAssertEqual(lacking.map(\.text), ["3 March", "six"], "a date not written as the selection writes it is lacking too")
        XCTAssertEqual(FactGrammar.units("we should talk about it soon.").count, 0)
    }

    func testAnOpeningGrammarStartsWithAMarkerPhraseThatEndsWhereAWordDoes() throws {
        let g = try XCTUnwrap(FactGrammar.opening(selection: Self.rent, openers: FactGrammar.openers(for: .empathetic)))
        XCTAssertTrue(g.hasPrefix("root ::= opener tail\n"), g)
        XCTAssertTrue(g.contains(#"opener ::= ("I understand" | "Thank you for""#), g)
        XCTAssertTrue(g.contains(#"| "We appreciate") [ ,.!]"#), "the phrase ends where a word does: \(g)")
        // Free text is bounded and has no control characters but newlines.
        XCTAssertTrue(g.contains("tail ::= c{0,") && !g.contains("c*"), g)
        XCTAssertTrue(g.contains(#"c ::= [^\x00-\x09\x0B-\x1F]"#), g)
        XCTAssertNil(FactGrammar.opening(selection: Self.rent, openers: FactGrammar.openers(for: .formal)))
        XCTAssertEqual(FactGrammar.openers(for: .formal), [])
        // Quotes and backslashes in a phrase are escaped.
        XCTAssertEqual(GrammarBuilder.literal("say \"hi\"\\"), #""say \"hi\"\\""#)
    }

    // MARK: Tone markers

    func testFormalNeedsNoContractionsNoSlangAndFullSentences() {
        let original = "The invoice for €900 is overdue. Please pay it by Friday."
        func markers(_ text: String) -> [String] { ToneCheck.check(text, tone: .formal, original: original).map(\.marker) }
        XCTAssertEqual(markers("Please be advised that the invoice of €900 is overdue. We kindly request that payment be made by Friday."), [])
        XCTAssertEqual(markers("We'd kindly request payment of the €900 invoice, which is overdue, by Friday."), ["contractions"])
        XCTAssertEqual(markers("We kindly request that you don't delay payment of the €900 invoice beyond Friday."), ["contractions"])
        XCTAssertTrue(markers("hey, the €900 invoice is overdue, pay it by Friday ok").contains("slang"))
        XCTAssertTrue(markers("Regarding the invoice of €900 which is overdue and payment by Friday").contains("fullSentences"))
    }

    func testCasualNeedsTwoOfContractionsYouAndShortSentences() {
        let original = "Please be advised that the invoice of €900 is overdue and requires payment by Friday."
        func markers(_ text: String) -> [String] { ToneCheck.check(text, tone: .casual, original: original).map(\.marker) }
        XCTAssertEqual(markers("Hey, the €900 invoice is late. Can you pay it by Friday? Thanks!"), [])
        XCTAssertEqual(markers("That €900 invoice? It's late. Friday works."), [])
        XCTAssertFalse(markers("Please be advised that the invoice of €900 is overdue; we therefore request that payment be made by Friday.").isEmpty)
    }

    func testEmpatheticNeedsAnAcknowledgement() {
        let original = "Your order #48213 will arrive on Thursday."
        XCTAssertEqual(ToneCheck.check("I'm sorry for the wait: your order #48213 arrives on Thursday.", tone: .empathetic, original: original), [])
        XCTAssertEqual(ToneCheck.check("Thank you for your patience. Order #48213 arrives Thursday.", tone: .empathetic, original: original), [])
        XCTAssertEqual(ToneCheck.check("Order #48213 will arrive on Thursday.", tone: .empathetic, original: original).map(\.marker), ["acknowledgement"])
    }

    func testDirectPutsAFactFirstAndIsShorter() {
        let original = "I wanted to let you know that, after a lot of discussion, we have decided that the launch will move to 14 May."
        XCTAssertEqual(ToneCheck.check("The launch moves to 14 May. We discussed it at length.", tone: .direct, original: original), [])
        XCTAssertEqual(ToneCheck.check("We talked about it a lot. The launch moves to 14 May.", tone: .direct, original: original).map(\.marker), ["mainPointFirst"])
        let long = "The launch will move to 14 May, and I wanted to let you know that after a great deal of discussion this is what we have decided together."
        XCTAssertEqual(ToneCheck.check(long, tone: .direct, original: original).map(\.marker), ["shorter"])
    }

    func testDiplomaticNeedsAHedge() {
        let original = "Your proposal is rejected."
        XCTAssertEqual(ToneCheck.check("Perhaps we could revisit the proposal another time.", tone: .diplomatic, original: original), [])
        XCTAssertEqual(ToneCheck.check("Would it be possible to rework the proposal?", tone: .diplomatic, original: original), [])
        XCTAssertEqual(ToneCheck.check("Your proposal is rejected. Do it again.", tone: .diplomatic, original: original).map(\.marker), ["hedges"])
    }

    func testToneMismatchIsReportedWithTheMarker() {
        let issues = RewriteVerifier.check(.init(original: "Your order #48213 will arrive on Thursday.", rewrite: "Order #48213 arrives on Thursday.",
                                                 instructions: [], language: "en", tone: .empathetic))
        XCTAssertEqual(issues.map(\.code), [.toneMismatch])
        XCTAssertTrue(issues[0].message.contains("acknowledgement"), issues[0].message)
    }

    // MARK: Tone repairs

    func testFormalRepairExpandsContractionsAndDropsSlangOpeners() {
        let repaired = ToneCheck.repair("Hey Priyanka, we're sorry but it's late and we don't know why. It's been a week.", tone: .formal)
        let text = repaired.value
        XCTAssertEqual(text, "Dear Priyanka, we are sorry but it is late and we do not know why. It has been a week.")
        XCTAssertFalse(repaired.findings.isEmpty)
        XCTAssertEqual(ToneCheck.repair("Hey, the report's ready. Don't wait!", tone: .formal).value, "The report's ready. Do not wait!")
        // The markers the repair can fix are gone (the formality score may still want more).
        let after = ToneCheck.check(text, tone: .formal, original: "x").map(\.marker)
        XCTAssertFalse(after.contains("contractions") || after.contains("slang"), "\(after)")
        // Nothing to do: the text is unchanged and nothing is reported.
        let clean = ToneCheck.repair("We regret the delay.", tone: .formal)
        XCTAssertEqual(clean.value, "We regret the delay.")
        XCTAssertEqual(clean.findings, [])
    }

    func testCasualRepairContractsButNotAtAClausesEnd() {
        let repaired = ToneCheck.repair("I am sure we are late, and it is not ideal. Do not worry: yes, it is.", tone: .casual)
        XCTAssertEqual(repaired.value, "I'm sure we're late, and it isn't ideal. Don't worry: yes, it is.")
        XCTAssertFalse(repaired.findings.isEmpty)
        XCTAssertEqual(ToneCheck.repair("See you soon.", tone: .casual).findings, [])
        // Only formal and casual have lexical repairs.
        XCTAssertEqual(ToneCheck.repair("We do not know.", tone: .empathetic).value, "We do not know.")
    }

    func testRepairedFormalAndCasualSeparateInFormality() {
        let formal = ToneCheck.repair("We're sorry it's late; we don't have the parts yet.", tone: .formal).value
        let casual = ToneCheck.repair("We are sorry it is late; we do not have the parts yet.", tone: .casual).value
        XCTAssertNotEqual(formal, casual)
        XCTAssertGreaterThan(Formality.score(formal), Formality.score(casual))
    }

    // MARK: Invented sentences

    /// A sentence saying only what the selection does not ("You will also get a 1% discount on
    /// your next purchase.") is taken out; a greeting to "Team" invents nothing. A sentence
    /// that also carries the selection's own ("a refund of £12.99 and an additional 2%
    /// credit") stays, its invention reported: removing it lost what it carried (issue 77).
    func testASentenceWithAnInventedFigureIsTakenOut() {
        let original = "Order #48213 went to the old address on Harrow Road. We refunded the £12.99 delivery charge and a new parcel goes out by express on Thursday."
        let rewrite = "Dear Team,\nOrder #48213 went to the old address on Harrow Road. We refunded the £12.99 delivery charge. You will also get a 1% discount on your next purchase. A new parcel goes out by express on Thursday.\n\nBest regards"
        let r = RewriteVerifier.verify(.init(original: original, rewrite: rewrite, instructions: [], language: "en"), mode: .repair)
        XCTAssertEqual(r.value, "Dear Team,\nOrder #48213 went to the old address on Harrow Road. We refunded the £12.99 delivery charge. A new parcel goes out by express on Thursday.\n\nBest regards")
        XCTAssertEqual(r.findings.filter(\.isOpen).map(\.code), [], r.findings.map(\.message).joined(separator: "; "))
        let removed = r.findings.filter { !$0.isOpen }
        XCTAssertEqual(removed.map(\.code), [.unsupportedFact])
        XCTAssertTrue(removed[0].message.contains("(1%): removed"), removed[0].message)
        // Beside the selection's own fact, the invention stays and is reported.
        let mixed = "Order #48213 went to the old address on Harrow Road. We are offering a refund of £12.99 and an additional 2% credit. A new parcel goes out by express on Thursday."
        let m = RewriteVerifier.verify(.init(original: original, rewrite: mixed, instructions: [], language: "en"), mode: .repair)
        XCTAssertEqual(m.value, mixed)
        XCTAssertTrue(m.findings.filter(\.isOpen).map(\.code).contains(.unsupportedFact), m.findings.map(\.message).joined(separator: "; "))
        // Reported only, nothing is taken out.
        let reported = RewriteVerifier.verify(.init(original: original, rewrite: rewrite, instructions: [], language: "en"), mode: .report)
        XCTAssertEqual(reported.value, rewrite)
        XCTAssertTrue(reported.findings.map(\.code).contains(.unsupportedFact))
    }

    /// When the invention is most of the rewrite, nothing is taken out: the findings decide.
    func testARewriteMostlyInventedKeepsItsSentences() {
        let invented = Facts.extract("30")
        let text = "The deposit of 30 pounds is due in 30 days, as agreed with the 30 tenants. Thanks."
        XCTAssertEqual(InventedSentences.drop(invented, from: text).value, text)
        XCTAssertEqual(InventedSentences.drop(invented, from: "It is 30. Rent is due on Monday, as agreed in the tenancy.").value,
                       "Rent is due on Monday, as agreed in the tenancy.")
    }

    func testSeverityWeighsMissingFactsAboveTone() {
        let tone = [Finding(.toneMismatch, .tone(.diplomatic, [.noHedge]))]
        let facts = [Finding(.factMissing, .factsMissing(["£1,150"]))]
        XCTAssertLessThan(RewriteVerifier.severity(tone, missingFacts: 0), RewriteVerifier.severity(facts, missingFacts: 1))
    }
}

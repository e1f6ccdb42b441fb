@testable import ParlanceFeatures
import XCTest

/// What puts a variation's missing facts back (`FactInsertion`): the selection's own
/// sentences that carry them, verbatim after a connector, a greeting cut; and the grammar of
/// the sentence that mends a tone, read by the test recognizer as llama.cpp reads it.
final class FactInsertionGrammarTests: XCTestCase {
    static let selection = "Hi Priyanka, the rent of £1,150 for Flat 4 is due on 3 March. The agreement allows a £35 late fee. "
        + "Drilling runs 9am to 4pm at Canal House."

    func units(_ facts: [String], of selection: String = selection) -> [FactGrammar.Unit] {
        let units = FactGrammar.units(selection).filter { facts.contains($0.text) }
        XCTAssertEqual(units.map(\.text), facts)
        return units
    }

    func testTheSentencesCarryingTheFactsAreCopiedVerbatimAfterTheLead() throws {
        let copied = try XCTUnwrap(FactInsertion.copied(units(["£35", "9"]), selection: Self.selection, lead: "In addition,"))
        XCTAssertEqual(copied, "In addition, the agreement allows a £35 late fee. Drilling runs 9am to 4pm at Canal House.")
        XCTAssertTrue(FactGrammar.missing(units(["£35", "9"]), in: copied).isEmpty)
        XCTAssertNil(FactInsertion.copied([], selection: Self.selection, lead: "Also,"), "nothing to put back")
    }

    func testAGreetingIsCutUnlessItCarriesAFact() throws {
        XCTAssertEqual(FactInsertion.copied(units(["£1,150", "3 March"]), selection: Self.selection, lead: "Please note that"),
                       "Please note that the rent of £1,150 for Flat 4 is due on 3 March.")
        XCTAssertEqual(FactInsertion.copied(units(["Priyanka", "£1,150"]), selection: Self.selection, lead: "Also,"),
                       "Also, hi Priyanka, the rent of £1,150 for Flat 4 is due on 3 March.", "the name is in the greeting")
    }

    func testTheLeadIsInTheSelectionsLanguage() throws {
        let fr = "Chers parents, la sortie au musée prévue le vendredi 22 novembre est reportée. Le départ reste fixé à 8 h 30."
        XCTAssertEqual(FactInsertion.copied(Array(FactGrammar.units(fr).prefix(1)), selection: fr, lead: FactInsertion.lead("fr")),
                       "De plus, la sortie au musée prévue le vendredi 22 novembre est reportée.")
        XCTAssertEqual(FactInsertion.lead("es-MX"), "Además,")
        // German puts the verb first after a connector: the sentence stands alone, a capital restored.
        let de = "Hallo Jonas, die Miete von 1.150 Euro ist am Freitag fällig."
        let units = FactGrammar.units(de).filter { $0.text.contains("150") }
        XCTAssertFalse(units.isEmpty)
        XCTAssertNil(FactInsertion.lead("de"))
        XCTAssertEqual(FactInsertion.copied(units, selection: de, lead: FactInsertion.lead("de")), "Die Miete von 1.150 Euro ist am Freitag fällig.")
    }

    func testANameOrIKeepsItsCapitalAfterTheLead() throws {
        let s = "HeatRight sent an engineer on 3 May. I paid £80 for it. Maria booked it, and we told Maria twice."
        XCTAssertEqual(FactInsertion.copied(units(["3 May"], of: s), selection: s, lead: "Also,"), "Also, HeatRight sent an engineer on 3 May.")
        XCTAssertEqual(FactInsertion.copied(units(["£80"], of: s), selection: s, lead: "Also,"), "Also, I paid £80 for it.")
        XCTAssertTrue(FactInsertion.keepsCapital("Maria", in: s), "capitalised after a lower-case word")
        XCTAssertFalse(FactInsertion.keepsCapital("Drilling", in: Self.selection))
        XCTAssertEqual(FactInsertion.copied(units(["9"]), selection: Self.selection, lead: "Just so you know,"),
                       "Just so you know, drilling runs 9am to 4pm at Canal House.")
    }

    func testASentenceMendingAToneOpensWithAMarkerPhraseAndStaysShort() throws {
        let g = try GBNFGrammar(try XCTUnwrap(FactInsertion.toneGrammar(.empathetic)))
        XCTAssertTrue(g.accepts("I understand this change may be frustrating."))
        XCTAssertFalse(g.accepts("This change may be frustrating."), "no marker phrase")
        XCTAssertFalse(g.accepts("I understand " + String(repeating: "very ", count: 12) + "much."), "more words than a short sentence")
        XCTAssertTrue(try GBNFGrammar(try XCTUnwrap(FactInsertion.toneGrammar(.diplomatic))).accepts("Could we talk about it this week?"))
        XCTAssertNil(FactInsertion.toneGrammar(.direct), "direct has no marker phrase")
        // Formal and casual: a sentence that moves the formality score their way.
        let formal = try GBNFGrammar(try XCTUnwrap(FactInsertion.toneGrammar(.formal)))
        XCTAssertTrue(formal.accepts("Please do not hesitate to contact me should you have any questions."))
        XCTAssertFalse(formal.accepts("Hit me up if anything's unclear."))
        XCTAssertTrue(try GBNFGrammar(try XCTUnwrap(FactInsertion.toneGrammar(.casual))).accepts("Hope you're all set for Monday!"))
    }

    /// A formal variation that read a little casual, and a casual one that read formal, each
    /// with one sentence of its tone's phrases added, pass their tone's check.
    func testTheMendingSentencesOfFormalAndCasualMendThem() throws {
        let sentence = try GBNFGrammar(try XCTUnwrap(FactInsertion.toneGrammar(.formal)))
        func formal(_ text: String) -> Bool { sentence.accepts(String(text.split(separator: ".").last!.dropFirst()) + ".") }
        let casualish = "Hi Priyanka, the rent for Flat 4 is due on 3 March. I saw it's late again, so just a reminder."
        XCTAssertEqual(ToneCheck.check(casualish, tone: .formal, original: casualish).map(\.marker), ["contractions", "formality"])
        let formalRepaired = ToneCheck.repair(casualish, tone: .formal).value
        XCTAssertEqual(ToneCheck.check(formalRepaired, tone: .formal, original: casualish).map(\.marker), ["formality"])
        let mended = formalRepaired + " Should you require any further information, please do not hesitate to contact the office."
        XCTAssertTrue(formal(mended))
        XCTAssertEqual(ToneCheck.check(mended, tone: .formal, original: casualish), [], "\(Formality.score(formalRepaired)) → \(Formality.score(mended))")
        let stiff = "Dear Priyanka, please be advised that the rent for Flat 4 is due on 3 March. The payment for the previous month was received late."
        XCTAssertFalse(ToneCheck.check(stiff, tone: .casual, original: stiff).isEmpty)
        XCTAssertEqual(ToneCheck.check(stiff + " Let me know if you've got any questions.", tone: .casual, original: stiff), [])
    }

    func testTheSentencesToSayAgainAndTheClosingKeptAfterTheInsertion() {
        let units = FactGrammar.units(Self.selection).filter { ["£35", "9"].contains($0.text) }
        XCTAssertEqual(FactInsertion.sentences(carrying: units, in: Self.selection),
                       ["The agreement allows a £35 late fee.", "Drilling runs 9am to 4pm at Canal House."])
        let letter = "Dear Priyanka,\nThe rent is due on 3 March. Please pay it.\n\nBest regards,\nRavi\n"
        XCTAssertEqual(FactInsertion.split(letter).body, "Dear Priyanka,\nThe rent is due on 3 March. Please pay it.")
        XCTAssertEqual(FactInsertion.split(letter).tail, "\n\nBest regards,\nRavi")
        XCTAssertEqual(FactInsertion.split("The rent is due on 3 March. Please pay it.").tail, "")
        // A text of short lines only has no body to insert into before them.
        XCTAssertEqual(FactInsertion.split("Rent\ndue Friday").body, "Rent\ndue Friday")
        XCTAssertEqual(FactInsertion.split("Rent\ndue Friday").tail, "")
    }
}

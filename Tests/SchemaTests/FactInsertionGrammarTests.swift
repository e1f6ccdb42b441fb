@testable import ParlanceFeatures
import XCTest

/// The sentences that put a variation's missing facts back (`FactInsertion`): their grammar,
/// read by the test recognizer as llama.cpp reads it, admits after a connector one plain
/// sentence per sentence of the selection, carrying its facts verbatim and in order, and nothing else.
final class FactInsertionGrammarTests: XCTestCase {
    static let selection = "Hi Priyanka, the rent of £1,150 for Flat 4 is due on 3 March. The agreement allows a £35 late fee. "
        + "Drilling runs 9am to 4pm at Canal House."

    func grammar(_ facts: [String], of selection: String = selection) throws -> GBNFGrammar {
        let units = FactGrammar.units(selection).filter { facts.contains($0.text) }
        XCTAssertEqual(units.map(\.text), facts)
        return try GBNFGrammar(try XCTUnwrap(FactInsertion.grammar(units, selection: selection)))
    }

    func testASentenceCarryingTheFactsInOrderIsTheOnlyOutput() throws {
        let g = try grammar(["Flat", "4", "3 March"])
        XCTAssertTrue(g.accepts("Also, the rent for Flat 4 is due on 3 March."))
        XCTAssertTrue(g.accepts("Note that Flat 4 pays on 3 March, as agreed!"), "a fact may follow the connector")
        XCTAssertFalse(g.accepts("The rent for Flat 4 is due on 3 March."), "no connector: the message begun again")
        XCTAssertFalse(g.accepts("Also, the rent for Flat 4 is due on 4 March."), "a fact changed")
        XCTAssertFalse(g.accepts("Also, on 3 March Flat 4 pays."), "facts out of order")
        XCTAssertFalse(g.accepts("Also, the rent for Flat 4 is due on 3 March"), "no sentence end")
        XCTAssertFalse(g.accepts("Also, the rent for Flat 4 applies. It is due on 3 March."), "two sentences")
        XCTAssertFalse(g.accepts("Also, the rent for Flat 4 is due on\n3 March."), "a line break")
        XCTAssertFalse(g.accepts("Also, the rent for Flat 4 is due on (3 March)."), "a fact in brackets: glued to its gap")
        XCTAssertFalse(g.accepts("Also, the rent for Flatmates 4 is due on 3 March."), "a name runs on into another word")
        XCTAssertFalse(g.accepts("Also, the rent for theFlat 4 is due on 3 March."), "a fact sticks to the word before it")
        // Between two facts, at most as many words as their distance in the selection allows (" is due on ": 5).
        XCTAssertTrue(g.accepts("Also, Flat 4 is surely still due on 3 March."))
        XCTAssertFalse(g.accepts("Also, Flat 4 is surely and truly still due on 3 March."))
        XCTAssertFalse(FactInsertion.grammar([[FactGrammar.Unit]](), selection: Self.selection) != nil, "nothing to force: no grammar")
    }

    func testTheFactsOfEachSentenceAreSaidInASentenceOfTheirOwn() throws {
        let g = try grammar(["4", "£35"])
        XCTAssertTrue(g.accepts("In addition, the rent for Flat 4 is due soon. The agreement allows a £35 late fee."))
        XCTAssertFalse(g.accepts("In addition, Flat 4 owes a £35 late fee."), "the facts of two sentences strewn through one")
    }

    func testANumberMayTakeItsUnitAndANameItsPunctuation() throws {
        let g = try grammar(["9", "4", "Canal", "House"], of: "Drilling runs 9am to 4pm at Canal House.")
        XCTAssertTrue(g.accepts("Also, drilling goes from 9am to 4pm at Canal House."))
        XCTAssertTrue(g.accepts("Note that from 9 to 4 the noise is at Canal House, sadly."))
        XCTAssertFalse(g.accepts("Also, from 9 to 4 the noise is at Canaley House."))
        XCTAssertFalse(g.accepts("Also, drilling goes from 9pm to 4am at Canal House."), "a unit changed")
        // The gaps are bounded in words, so a bound reached ends a word, never cuts one.
        XCTAssertFalse(g.accepts("Also, from 9am " + String(repeating: "and then ", count: 10) + "to 4pm at Canal House."))
        let ten = "one two three four five six seven eight nine ten"
        XCTAssertTrue(g.accepts("Also, \(ten) 9am to 4pm at Canal House."))
        XCTAssertFalse(g.accepts("Also, \(ten) eleven 9am to 4pm at Canal House."))
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
        XCTAssertTrue(FactInsertion.request(units, selection: Self.selection).hasSuffix("Add two sentences to your message, in the same tone, that also say: The agreement allows a £35 late fee. Drilling runs 9am to 4pm at Canal House."))
        let letter = "Dear Priyanka,\nThe rent is due on 3 March. Please pay it.\n\nBest regards,\nRavi\n"
        XCTAssertEqual(FactInsertion.split(letter).body, "Dear Priyanka,\nThe rent is due on 3 March. Please pay it.")
        XCTAssertEqual(FactInsertion.split(letter).tail, "\n\nBest regards,\nRavi")
        XCTAssertEqual(FactInsertion.split("The rent is due on 3 March. Please pay it.").tail, "")
        // A text of short lines only has no body to insert into before them.
        XCTAssertEqual(FactInsertion.split("Rent\ndue Friday").body, "Rent\ndue Friday")
        XCTAssertEqual(FactInsertion.split("Rent\ndue Friday").tail, "")
    }
}

@testable import ParlanceFeatures
import XCTest

/// The sentence that puts a variation's missing facts back (`FactInsertion`): its grammar,
/// read by the test recognizer as llama.cpp reads it, admits a plain sentence carrying the
/// facts verbatim and in order, and nothing else.
final class FactInsertionGrammarTests: XCTestCase {
    static let selection = "Hi Priyanka, the rent of £1,150 for Flat 4 is due on 3 March. The agreement allows a £35 late fee. "
        + "Drilling runs 9am to 4pm at Canal House."

    func grammar(_ facts: [String], of selection: String = selection) throws -> GBNFGrammar {
        let units = FactGrammar.units(selection).filter { facts.contains($0.text) }
        XCTAssertEqual(units.map(\.text), facts)
        return try GBNFGrammar(try XCTUnwrap(FactInsertion.grammar(units)))
    }

    func testASentenceCarryingTheFactsInOrderIsTheOnlyOutput() throws {
        let g = try grammar(["Flat", "4", "£35"])
        XCTAssertTrue(g.accepts("The late fee for Flat 4 is £35."))
        XCTAssertTrue(g.accepts("Flat 4 also owes a £35 fee, as agreed!"), "a fact may open the sentence")
        XCTAssertFalse(g.accepts("The late fee for Flat 4 is £36."), "a fact changed")
        XCTAssertFalse(g.accepts("The fee of £35 for Flat 4."), "facts out of order")
        XCTAssertFalse(g.accepts("The late fee for Flat 4 is £35"), "no sentence end")
        XCTAssertFalse(g.accepts("The fee for Flat 4 applies. It is £35."), "two sentences")
        XCTAssertFalse(g.accepts("The fee for Flat 4 is\n£35."), "a line break")
        XCTAssertFalse(g.accepts("The fee for Flat 4 is (£35)."), "a fact in brackets: glued to its gap")
        XCTAssertFalse(g.accepts("The fee for Flatmates 4 is £35."), "a name runs on into another word")
        XCTAssertFalse(g.accepts("The fee for theFlat 4 is £35."), "a fact sticks to the word before it")
        XCTAssertFalse(FactInsertion.grammar([]) != nil, "nothing to force: no grammar")
    }

    func testANumberMayTakeItsUnitAndANameItsPunctuation() throws {
        let g = try grammar(["9", "4", "Canal", "House"], of: "Drilling runs 9am to 4pm at Canal House.")
        XCTAssertTrue(g.accepts("Drilling goes from 9am to 4pm at Canal House."))
        XCTAssertTrue(g.accepts("From 9 to 4 the noise is at Canal House, sadly."))
        XCTAssertFalse(g.accepts("From 9 to 4 the noise is at Canaley House."))
        // The gap between two facts is bounded by their distance in the selection.
        XCTAssertFalse(g.accepts("From 9am " + String(repeating: "and then ", count: 10) + "to 4pm at Canal House."))
    }

    func testTheSentencesToSayAgainAndTheClosingKeptAfterTheInsertion() {
        let units = FactGrammar.units(Self.selection).filter { ["£35", "9"].contains($0.text) }
        XCTAssertEqual(FactInsertion.sentences(carrying: units, in: Self.selection),
                       ["The agreement allows a £35 late fee.", "Drilling runs 9am to 4pm at Canal House."])
        XCTAssertTrue(FactInsertion.request(units, selection: Self.selection).hasSuffix("says: The agreement allows a £35 late fee. Drilling runs 9am to 4pm at Canal House."))
        let letter = "Dear Priyanka,\nThe rent is due on 3 March. Please pay it.\n\nBest regards,\nRavi\n"
        XCTAssertEqual(FactInsertion.split(letter).body, "Dear Priyanka,\nThe rent is due on 3 March. Please pay it.")
        XCTAssertEqual(FactInsertion.split(letter).tail, "\n\nBest regards,\nRavi")
        XCTAssertEqual(FactInsertion.split("The rent is due on 3 March. Please pay it.").tail, "")
        // A text of short lines only has no body to insert into before them.
        XCTAssertEqual(FactInsertion.split("Rent\ndue Friday").body, "Rent\ndue Friday")
        XCTAssertEqual(FactInsertion.split("Rent\ndue Friday").tail, "")
    }
}

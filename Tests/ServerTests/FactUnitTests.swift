@testable import ParlanceFeatures
import XCTest

/// A number written with a unit is kept only with that unit (`FactUnits`); a weekday opening
/// a sentence is a fact.
final class FactUnitTests: XCTestCase {
    /// What variations of the compose tuning part wrote and passed: the value was there, the
    /// thing it counts was not.
    func testAnAmountAReferenceAndAClockTimeKeepTheirUnits() {
        let original = "Order #48213 costs £2,750. Doors open at 7am, and tickets are £2 each."
        let facts = Facts.extract(original)
        XCTAssertEqual(facts.filter { $0.kind == .number }.map { "\($0.text) \($0.unit ?? "-")" }, ["48213 #", "£2,750 £", "7 am", "£2 £"])
        let mangled = "It should come in 48213 days, which will take place on 2750 days of operation. We sell out in 7 hours with your team of 2."
        XCTAssertEqual(Facts.missing(facts, in: mangled).map(\.text), ["48213", "£2,750", "7", "£2"])
        for kept in ["Order number 48213 costs 2,750 pounds. Doors open at 7 a.m.; tickets are 2 pounds each.",
                     "Your order (#48213) comes to GBP 2750. We open at 7:00 am, and a ticket is £2."] {
            XCTAssertEqual(Facts.missing(facts, in: kept).map(\.text), [], kept)
        }
        // A bare number is kept by its value, whatever stands beside it.
        XCTAssertEqual(Facts.missing(Facts.extract("We sold 40 boxes."), in: "We sold £40 of boxes."), [])
        XCTAssertEqual(Facts.measuredNumbers("50 € or EUR 60, at 5 pm; 6 amazing days").map { $0.unit ?? "-" }, ["€", "€", "pm", "-"])
    }

    /// "Tuesdays are our in-office day": capitalised only because it opens the sentence, and
    /// still a fact; "May I ask" is not the month.
    func testAWeekdayOpeningASentenceIsAFact() {
        let original = "From 1 April, everyone can work from home. Tuesdays are our in-office day. May I ask you to keep them free?"
        XCTAssertEqual(Facts.extract(original).filter { $0.kind == .name }.map(\.text), ["April", "Tuesdays"])
        let check = { (rewrite: String) in
            RewriteVerifier.check(.init(original: original, rewrite: rewrite, instructions: [], language: "en")).map(\.code)
        }
        XCTAssertTrue(check("From 1 April, everyone can work from home. Please keep your in-office day free.").contains(.factMissing))
        XCTAssertFalse(check("From 1 April everyone can work from home, but Tuesday is our in-office day: please keep it free.").contains(.factMissing))
    }
}

import ParlanceDocuments
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema
import XCTest
@testable import ParlanceFeatures

/// A long transcript's part notes are generated under a schema whose every text fits the
/// notes' token budget: the model fills fields to their limits, so under the full schema
/// most parts ran out of tokens and were generated a second time, under the fitted one.
final class CondenseTests: XCTestCase {
    func testPartNotesFitTheirTokenBudgetFromTheFirstAttempt() {
        let segments = (1...60).map { Segment(id: $0, start: Double($0 * 4), end: Double($0 * 4 + 4), text: "Line \($0) of the part.") }
        let budget = Condense.notesTokens * 5 / 2
        XCTAssertGreaterThan(SchemaBudget.maxChars(Condense.notesSchema(segments)), budget, "the full schema admits notes longer than the budget")
        let fitted = Condense.fittedNotesSchema(segments)
        XCTAssertLessThanOrEqual(SchemaBudget.maxChars(fitted), budget)
        // What the fitted schema admits is still valid notes, with the part's own segment ids.
        let notes: JSONValue = ["summary": "The council moved the budget vote to March.", "entities": ["people": ["Councillor Fraser"], "organizations": [],
                                "products": [], "locations": ["Leeds"], "resources": []],
                                "moments": [["title": "Budget vote", "segmentId": 12]], "quote": [["segmentId": 40]], "actionItems": []]
        XCTAssertEqual(SchemaValidator.validate(notes, against: fitted), [])
        XCTAssertEqual(SchemaValidator.validate(notes, against: Condense.notesSchema(segments)), [])
        var outside = notes.objectValue ?? [:]
        outside["quote"] = [["segmentId": 61]]
        XCTAssertFalse(SchemaValidator.validate(.object(outside), against: fitted).isEmpty, "a quote outside the part is refused")
    }

    /// The analyses whose results hold numbers only inside their text are held to the
    /// transcript's numbers while they generate (`NumberGuard`); one with a number field (a
    /// segment id, a score) is not, as no guard on digits could tell a field from a sentence.
    func testOnlyAnalysesWithoutNumberFieldsAreHeldToTheTranscriptsNumbers() {
        XCTAssertFalse(AnalysisJob.hasNumberField(Summarize.Result.generationSchema))
        XCTAssertFalse(AnalysisJob.hasNumberField(AnalyzeTags.Result.generationSchema))
        XCTAssertFalse(AnalysisJob.hasNumberField(AnalyzeContent.Result.generationSchema))
        XCTAssertTrue(AnalysisJob.hasNumberField(Condense.notesSchema([Segment(id: 1, text: "A line.")])), "the notes cite segment ids")
        XCTAssertTrue(AnalysisJob.hasNumberField(["type": "object", "properties": ["score": ["type": ["number", "null"]]]]))
        // Where a number was refused after the space before it, the text keeps one space.
        XCTAssertEqual(AnalysisVerifier.spaced("The new date is March  in order to ship by Friday ."), "The new date is March in order to ship by Friday.")
        XCTAssertEqual(AnalysisVerifier.spaced("Pourquoi ? Parce que."), "Pourquoi ? Parce que.")
        let repaired = AnalysisVerifier(fields: [], proseKeys: ["summary"], labels: [], names: []).apply(["summary": "Ships in March ."])
        XCTAssertEqual(repaired.value["summary"], "Ships in March.")
    }
}

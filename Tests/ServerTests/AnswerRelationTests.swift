import ParlanceDocuments
@testable import ParlanceFeatures
import XCTest

/// An answer whose value the segments give only of something else fails
/// (`AnswerVerifier.saidOfOther`); one whose value stands beside the question's subject,
/// in its sentence, the sentence before or as its speaker's, passes.
final class AnswerRelationTests: XCTestCase {
    /// The support call of the labeled set's tuning part, as shown to the model.
    let segments = [
        Segment(id: 20, start: 120, end: 128, speaker: "Keisha", text: "The eighteen-month contract has no early termination fee after the first year.",
                startOffset: 0, endOffset: 10),
        Segment(id: 21, start: 128, end: 133, speaker: "Paul", text: "It cuts out between eight and ten at night. I'll take the new contract.", startOffset: 10, endOffset: 20),
        Segment(id: 22, start: 133, end: 139, speaker: "Keisha", text: "Done. Your new price of 41 pounds a month starts with your next bill on the 1st of June.",
                startOffset: 20, endOffset: 30),
        Segment(id: 23, start: 140, end: 148, speaker: "Keisha",
                text: "I've also added a goodwill credit of 10 pounds for the connection problems. Your reference for today's call is CX-2281.",
                startOffset: 30, endOffset: 40),
        Segment(id: 24, start: 148, end: 152, speaker: "Paul", text: "I started with you in 2016, so thank you.", startOffset: 40, endOffset: 50),
    ]

    func issues(_ question: String, _ answer: String) -> [String] {
        AnswerVerifier.check(question: question, answer: answer, cited: [], shown: segments, instructions: []).issues
            .filter { $0.code == .notAnswered }.map(\.message)
    }

    func testAValueSaidOnlyOfSomethingElseIsNotTheAnswer() {
        let wrong = issues("What is the early termination fee on the eighteen-month contract?", "The early termination fee on the eighteen-month contract is 10 pounds.")
        XCTAssertEqual(wrong.count, 1)
        XCTAssertTrue(wrong.first?.contains("10") ?? false, "\(wrong)")
        XCTAssertTrue(issues("How much is Paul's monthly price from June?", "Paul pays 41 pounds a month from June.").isEmpty)
        // First person: said by Paul, about Paul.
        XCTAssertTrue(issues("In which year did Paul become a customer?", "Paul has been a customer since 2016.").isEmpty)
        // One of the answer's values beside the subject is enough; a value the segments do not
        // give is `factsNotInSegments`' to judge.
        XCTAssertTrue(issues("What credit did Keisha add for the connection problems?", "A credit of 10 pounds, reference CX-2281.").isEmpty)
        XCTAssertTrue(issues("What credit did Keisha add for the connection problems?", "A credit of 25 pounds.").isEmpty)
    }

    /// Captions cut a sentence into cues: the value and the subject are in different cues of
    /// one sentence, and that sentence says the value of the subject (the W3C talk, issue 77).
    func testAValueInTheNextCaptionCueOfTheSameSentenceIsSaidOfTheSubject() {
        let cues = [
            Segment(id: 233, start: 639, end: 643, speaker: "Jutta", text: "My recommendation is that we reconsider the 80/20 rule.", startOffset: 0, endOffset: 1),
            Segment(id: 234, start: 643, end: 645, speaker: "Jutta", text: "It came about because Pareto noticed", startOffset: 1, endOffset: 2),
            Segment(id: 235, start: 645, end: 647, speaker: "Jutta", text: "that 80% of land in Italy", startOffset: 2, endOffset: 3),
            Segment(id: 236, start: 647, end: 649, speaker: "Jutta", text: "was owned by 20% of the population", startOffset: 3, endOffset: 4),
        ]
        XCTAssertEqual(AnswerVerifier.saidOfOther(question: "What did Pareto observe?",
                                                  answer: "Pareto observed that 80% of land in Italy was owned by 20% of the population.",
                                                  segments: cues, language: "en"), [])
        XCTAssertEqual(AnswerVerifier.joinedCues(cues).map(\.id), [233, 234])
    }
}

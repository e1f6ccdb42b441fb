import ParlanceFeatures
import ParlanceProtocol
import XCTest

/// The seed's Worth-It score: round(100 × (0.6 × depth + 0.4 × sentiment)), a bonus when
/// both are high, a penalty for shallow content, depth alone (flagged) without comments.
final class WorthItScoreTests: XCTestCase {
    func testBlendWithoutNudges() {
        let s = WorthIt.score(depth: 0.5, sentiment: 0.75)
        XCTAssertEqual(s.baseScore, 60)  // 100 × (0.30 + 0.30)
        XCTAssertEqual(s.adjustment, 0)
        XCTAssertEqual(s.finalScore, 60)
        XCTAssertEqual(s.depthWeight, 0.6)
        XCTAssertEqual(s.sentimentWeight, 0.4)
        XCTAssertTrue(s.usedComments)
        XCTAssertNil(s.note)
    }

    func testBonusWhenDepthAndSentimentAreBothHigh() {
        let s = WorthIt.score(depth: 0.9, sentiment: 0.8)
        XCTAssertEqual(s.baseScore, 86)  // round(100 × (0.54 + 0.32))
        XCTAssertEqual(s.adjustment, 5)
        XCTAssertEqual(s.finalScore, 91)
        XCTAssertEqual(s.adjustmentReasons.count, 1)
        // Just below the threshold on one side: no bonus.
        XCTAssertEqual(WorthIt.score(depth: 0.9, sentiment: 0.79).adjustment, 0)
        // Clamped at 100.
        XCTAssertEqual(WorthIt.score(depth: 1, sentiment: 1).finalScore, 100)
    }

    func testPenaltyForLowDepthAndClampAtZero() {
        let s = WorthIt.score(depth: 0.2, sentiment: 0.9)
        XCTAssertEqual(s.baseScore, 48)  // 100 × (0.12 + 0.36)
        XCTAssertEqual(s.adjustment, -10)
        XCTAssertEqual(s.finalScore, 38)
        XCTAssertEqual(WorthIt.score(depth: 0.05, sentiment: 0).finalScore, 0)
        XCTAssertEqual(WorthIt.score(depth: 0.3, sentiment: 0.5).adjustment, 0, "0.3 is not low")
    }

    func testDepthAloneWithoutCommentsIsFlagged() {
        let s = WorthIt.score(depth: 0.72, sentiment: nil)
        XCTAssertEqual(s.baseScore, 72)
        XCTAssertEqual(s.finalScore, 72)
        XCTAssertEqual(s.depthWeight, 1)
        XCTAssertEqual(s.sentimentWeight, 0)
        XCTAssertFalse(s.usedComments)
        XCTAssertNotNil(s.note)
        XCTAssertEqual(WorthIt.score(depth: 0.9, sentiment: nil).adjustment, 0, "no bonus without comments")
    }
}

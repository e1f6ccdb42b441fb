import Foundation
import ParlanceInProcess
import ParlanceJSON
import XCTest

@testable import ParlanceCLI

/// `parlance analyze chapters` prints a video description's chapter list, and every
/// analysis takes `--instructions` (from the methods' params).
final class ChaptersRenderTests: XCTestCase {
    func testChaptersAsYouTubeLines() {
        let r: JSONValue = ["chapters": [
            ["title": "Welcome", "startSegmentId": 1, "endSegmentId": 3, "start": 1.2, "end": 14.1],
            ["title": "Battery tests", "startSegmentId": 4, "endSegmentId": 40, "start": 14.1, "end": 600.5],
            ["title": "Pricing", "startSegmentId": 41, "endSegmentId": 90, "start": 3725.9, "end": 4000],
        ], "cached": false]
        XCTAssertEqual(Render.chapters(r), "00:00 Welcome\n00:14 Battery tests\n1:02:05 Pricing\n", "the first line is 00:00, as YouTube wants it")
        XCTAssertEqual(Render.analysis(r), Render.chapters(r))
        let plain: JSONValue = ["chapters": [["title": "Intro", "startSegmentId": 1, "endSegmentId": 2, "startOffset": 0, "endOffset": 40]]]
        XCTAssertEqual(Render.chapters(plain), "[1] Intro\n", "plain text has no times: the first segment's number")
        XCTAssertEqual(Render.analysis(["tags": ["a"]]), Render.fields(["tags": ["a"]]))
    }

    func testAnalyzeTakesChaptersAndInstructions() throws {
        let settings = DaemonSettings(env: [:])
        let parsed = try Parser.command(Command.named("analyze")!, settings, ["chapters", "--instructions", "focus on pricing", "ep.srt"])
        XCTAssertEqual(parsed?.positionals, ["chapters", "ep.srt"])
        XCTAssertTrue(Command.named("analyze")!.options.contains { $0.name == "--instructions" })
        XCTAssertTrue(Command.named("summarize")!.options.contains { $0.name == "--instructions" })
        XCTAssertTrue(AnalysisKinds.all.contains { $0.word == "chapters" })
    }
}

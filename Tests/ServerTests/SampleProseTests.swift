import Foundation
import ParlanceDocuments
@testable import ParlanceFeatures
import ParlanceJSON
import XCTest

/// The bundled sample's own stand-in summary passes the prose checks it stands in for.
final class SampleProseTests: XCTestCase {
    func testTheSamplesExtractiveSummaryPassesTheProseChecks() throws {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Samples/podcast-sample.srt").path) { dir.deleteLastPathComponent() }
        let text = try String(contentsOf: dir.appendingPathComponent("Samples/podcast-sample.srt"), encoding: .utf8)
        let t = try TranscriptParser.parse(text, format: nil)
        let names = ListItemRules.names(in: AnalysisInput.render(t.segments), speakers: t.segments.compactMap(\.speaker))
        let source = SourceSupport(segments: t.segments)
        let prose = try XCTUnwrap(source.extractiveSummary(sentences: 2))
        let check = AnalysisVerifier(fields: [], proseKeys: ["summary"], labels: ["summary"], names: names, source: source)
        XCTAssertEqual(check.scalarFindings(["summary": .string(prose)]).map(\.issue.message), [], prose)
    }
}

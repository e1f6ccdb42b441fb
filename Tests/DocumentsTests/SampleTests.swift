import ParlanceDocuments
import XCTest

final class SampleTests: XCTestCase {
    func testBundledSRTSample() throws {
        let t = try TranscriptParser.parse(bytes: SampleFiles.bytes("podcast-sample.srt"), format: nil)
        XCTAssertEqual(t.format, .srt)
        XCTAssertEqual(t.warnings, [])
        XCTAssertEqual(t.segments.count, 108)
        XCTAssertEqual(t.speakers, ["MAYA", "THEO", "PRIYA"])
        XCTAssertTrue(t.segments.allSatisfy { $0.speaker != nil })
        XCTAssertEqual(t.segments.first?.start, 1.2)
        XCTAssertEqual(t.segments.last?.end, 449.0)
        XCTAssertEqual(t.segments.first?.text,
                       "Welcome back to The Local Loop, the show about software that runs on the machine in front of you.")
        // Numbered action items keep their speaker ("Two:" is not a name).
        let items = t.segments.filter { $0.text.hasPrefix("Two:") || $0.text.hasPrefix("Three:") }
        XCTAssertEqual(items.map(\.speaker), ["THEO", "THEO"])
        for s in t.segments {
            XCTAssertEqual(t.slice(s), s.text)
            XCTAssertLessThanOrEqual(s.start ?? 0, s.end ?? 0)
        }
        XCTAssertFalse(t.plainText.contains("-->"))
        XCTAssertEqual(LanguageDetector.detect(t.plainText).code, "en")
    }

    func testBundledVTTSampleMatchesSRT() throws {
        let srt = try TranscriptParser.parse(bytes: SampleFiles.bytes("podcast-sample.srt"), format: nil)
        let vtt = try TranscriptParser.parse(bytes: SampleFiles.bytes("podcast-sample.vtt"), format: nil)
        XCTAssertEqual(vtt.format, .vtt)
        XCTAssertEqual(vtt.warnings, [])
        XCTAssertEqual(vtt.segments.map(\.text), srt.segments.map(\.text))
        XCTAssertEqual(vtt.segments.map(\.start), srt.segments.map(\.start))
        XCTAssertEqual(vtt.segments.map { $0.speaker?.uppercased() }, srt.segments.map(\.speaker))
        XCTAssertEqual(vtt.speakers, ["Maya", "Theo", "Priya"])
    }

    func testSampleRetrievalFindsTheBatterySection() throws {
        let t = try TranscriptParser.parse(bytes: SampleFiles.bytes("podcast-sample.srt"), format: .srt)
        let index = BM25Index(documents: t.segments.map(\.text))
        let top = index.search("battery life", limit: 3).map { t.segments[$0.index].text }
        XCTAssertEqual(top.first, "Let's talk about battery life, because that was the first thing our listeners asked about.")
        XCTAssertEqual(index.search("kubernetes helm chart", limit: 5).count, 0)
    }
}

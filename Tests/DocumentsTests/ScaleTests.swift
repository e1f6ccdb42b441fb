import Foundation
import ParlanceDocuments
import XCTest

final class ScaleTests: XCTestCase {
    /// A 5 MB SRT parses completely, without warnings. (How fast is `make bench`'s concern,
    /// not a test's: the duration is printed, never asserted.)
    func testFiveMegabyteSRT() throws {
        var cues: [String] = []
        var size = 0
        var n = 0
        while size < 5_000_000 {
            n += 1
            let ms = n * 2000
            func ts(_ v: Int) -> String {
                String(format: "%02d:%02d:%02d,%03d", v / 3_600_000, v / 60_000 % 60, v / 1000 % 60, v % 1000)
            }
            let cue = "\(n)\n\(ts(ms)) --> \(ts(ms + 1500))\nSPEAKER \(n % 3 + 1): Cue number \(n) talks about <i>local</i> models,\nquantization and battery life.\n"
            size += cue.utf8.count + 1
            cues.append(cue)
        }
        let text = cues.joined(separator: "\n")
        let started = Date()
        let t = try TranscriptParser.parse(text, format: nil)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(t.segments.count, n)
        XCTAssertEqual(t.warnings, [])
        XCTAssertEqual(t.segments.last?.speaker, "SPEAKER \(n % 3 + 1)")
        XCTAssertEqual(t.segments.last?.text, "Cue number \(n) talks about local models, quantization and battery life.")
        XCTAssertEqual(t.segments.last?.endOffset, t.plainText.unicodeScalars.count)
        print("5 MB SRT parsed in \(String(format: "%.3f", elapsed)) s")
    }

    /// Pathological shapes finish and stay within budget.
    func testPathologicalInputs() throws {
        let oneLine = String(repeating: "word ", count: 200_000)
        let t = try TranscriptParser.parse(oneLine, format: .text)
        XCTAssertEqual(t.segments.count, 1)
        let chunks = Chunker.chunk(t.segments, budget: 3000, tokenCount: fakeTokens)
        XCTAssertTrue(chunks.allSatisfy { $0.tokenCount <= 3000 && $0.segmentIds == 1...1 })
        XCTAssertEqual(chunks.map { $0.text.split(separator: " ").count }.reduce(0, +), 200_000)

        let garbage = String(repeating: "garbage\nmore\n\n", count: 20_000)
        XCTAssertThrowsError(try TranscriptParser.parse(garbage, format: .srt)) {
            XCTAssertEqual($0 as? TranscriptParseError, .noText)
        }
        let tags = "1\n00:00:01,000 --> 00:00:02,000\n" + String(repeating: "<i>a</i> <b", count: 20_000)
        XCTAssertEqual(try TranscriptParser.parse(tags, format: .srt).segments.first?.text.hasPrefix("a <ba <ba"), true)
    }

    func testWarningsAreCapped() throws {
        var text = ""
        for k in 0..<2000 { text += "\(k)\n00:00:0x,000 --> 00:00:01,000\nbad\n\n" }
        text += "9999\n00:00:01,000 --> 00:00:02,000\ngood\n"
        let t = try TranscriptParser.parse(text, format: .srt)
        XCTAssertEqual(t.segments.map(\.text), ["good"])
        XCTAssertEqual(t.warnings.count, 501)
        XCTAssertEqual(t.warnings.first?.line, 2)
        XCTAssertEqual(t.warnings.last?.message, "1500 further warnings not shown")
    }
}

import Foundation
import ParlanceDocuments
import XCTest

/// YouTube's rolling automatic captions (`yt-dlp --write-auto-sub`) are read once.
final class RollingCaptionTests: XCTestCase {
    /// The shape yt-dlp writes: header metadata and a `Style:` block, a cue opening with a
    /// line of one space, each line spoken word by word, then settled in a 10 ms cue and
    /// repeated as the next cue's first line; a blank cue of two lines of one space for a 3 s
    /// pause before the last line.
    let rolling = """
        WEBVTT
        Kind: captions
        Language: en
        Style:
        ::cue(c.colorCCCCCC) { color: rgb(204,204,204);
         }
        ##

        00:00:01.000 --> 00:00:03.000 align:start position:0%
         
        hello<00:00:01.500><c> there</c><c.colorCCCCCC><00:00:02.000><c> friends</c></c>

        00:00:03.000 --> 00:00:03.010 align:start position:0%
        hello there<c.colorCCCCCC> friends
         </c>

        00:00:03.010 --> 00:00:05.000 align:start position:0%
        hello there<c.colorCCCCCC> friends</c>
        this<00:00:03.400><c> is</c><00:00:03.800><c> a</c><00:00:04.200><c> test</c>

        00:00:05.000 --> 00:00:05.010 align:start position:0%
        this is a test
         

        00:00:05.010 --> 00:00:08.000 align:start position:0%
         
         

        00:00:08.000 --> 00:00:10.000 align:start position:0%
        this is a test
        after<00:00:08.500><c> a</c><00:00:09.000><c> pause</c>
        """

    func testRollingCuesAreReadOnceAndMergedAtPauses() {
        let t = parsed(rolling)
        XCTAssertEqual(t.format, .vtt)
        XCTAssertEqual(t.warnings, [])
        XCTAssertEqual(t.segments.map(\.text), ["hello there friends this is a test", "after a pause"])
        XCTAssertEqual(t.segments.map(\.start), [1.0, 8.0])
        // A word ends where the next starts, or with its cue: "test" with the cue at 5.0.
        XCTAssertEqual(t.segments.map(\.end), [5.0, 10.0])
        XCTAssertEqual(t.segments.map(\.speaker), [nil, nil])
        for s in t.segments { XCTAssertEqual(t.slice(s), s.text) }
    }

    func testStyleBlockAfterBlankLineIsSkipped() {
        let text = "WEBVTT\nKind: captions\n\nStyle:\n::cue { color: red }\n##\n\nNOTE yt-dlp\n\n00:01.000 --> 00:02.000\nHi\n"
        let t = parsed(text)
        XCTAssertEqual(t.segments.map(\.text), ["Hi"])
        XCTAssertEqual(t.warnings, [])
    }

    /// Cues of five words each, rolled as YouTube does; `times[k]` is word k's start.
    private func rollingVTT(_ times: [Double]) -> String {
        func stamp(_ t: Double) -> String {
            let ms = Int((t * 1000).rounded())
            return String(format: "00:%02d:%02d.%03d", ms / 60_000, ms / 1000 % 60, ms % 1000)
        }
        var out = "WEBVTT\n\n"
        var previous = " "  // yt-dlp opens the first cue with a line of one space
        for first in stride(from: 0, to: times.count, by: 5) {
            let k = Array(first..<min(first + 5, times.count))
            let end = k.last! + 1 < times.count ? times[k.last! + 1] : times[k.last!] + 0.5
            let spoken = k.map { $0 == first ? "w\($0)" : "<\(stamp(times[$0]))><c> w\($0)</c>" }.joined()
            out += "\(stamp(times[first])) --> \(stamp(end - 0.01))\n\(previous)\n\(spoken)\n\n"
            previous = k.map { "w\($0)" }.joined(separator: " ")
            out += "\(stamp(end - 0.01)) --> \(stamp(end))\n\(previous)\n \n\n"
        }
        return out
    }

    func testSegmentsAreCutAtPausesOrLength() {
        // 50 words 0.3 s apart with a 1.5 s pause after word 20: cut there.
        var times = (0..<50).map { Double($0) * 0.3 }
        for k in 20..<50 { times[k] += 1.2 }
        let t = parsed(rollingVTT(times))
        XCTAssertEqual(t.segments.map { $0.text.split(separator: " ").count }, [20, 30])
        XCTAssertEqual(t.segments.first?.text.hasPrefix("w0 w1 w2"), true)
        XCTAssertEqual(t.segments.map(\.start), [0.0, times[20]])

        // 100 words without a pause: cut at 40 words at most, 15 at least.
        let long = parsed(rollingVTT((0..<100).map { Double($0) * 0.3 }))
        let counts = long.segments.map { $0.text.split(separator: " ").count }
        XCTAssertEqual(counts.reduce(0, +), 100)
        XCTAssertTrue(counts.allSatisfy { $0 <= 40 }, "\(counts)")
        XCTAssertTrue(counts.dropLast().allSatisfy { $0 >= 15 }, "\(counts)")
    }

    func testWordTimingsAloneDoNotMakeCuesRoll() {
        let text = "WEBVTT\n\n00:01.000 --> 00:02.000\none<00:01.500> two\n\n00:02.000 --> 00:03.000\nthree\n\n00:03.000 --> 00:04.000\nthree\n"
        let t = parsed(text)
        XCTAssertEqual(t.segments.map(\.text), ["one two", "three", "three"])
    }

    // MARK: Real files

    /// Words as a reader cue by cue sees them: every line of every cue, tags removed.
    private func naiveWords(_ vtt: String) -> Int {
        var count = 0
        var inCue = false
        for line in vtt.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            if line.contains("-->") {
                inCue = true
            } else if line.isEmpty {
                inCue = false
            } else if inCue {
                let text = line.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
                count += text.split(whereSeparator: \.isWhitespace).count
            }
        }
        return count
    }

    /// kalanick-autocaption.vtt, 1,737 cues: 18,957 words cue by cue, 6,343 read once (33%),
    /// in 263 segments of 6 to 40 words (24 on average).
    func testRealAutoCaptionsAreReadOnce() throws {
        let text = try RealWorldFiles.text("kalanick-autocaption.vtt")
        let t = try TranscriptParser.parse(text, format: nil)
        XCTAssertEqual(t.format, .vtt)
        XCTAssertEqual(t.warnings, [])
        let naive = naiveWords(text)
        let words = t.plainText.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        XCTAssertEqual(naive, 18_957)
        XCTAssertEqual(Double(words.count) / Double(naive), 1.0 / 3, accuracy: 0.03, "\(words.count) of \(naive)")
        XCTAssertTrue((200...330).contains(t.segments.count), "\(t.segments.count) segments")
        XCTAssertTrue(t.segments.allSatisfy { $0.text.split(separator: " ").count <= 40 })
        XCTAssertEqual(t.segments.first?.start, 3.17)
        XCTAssertEqual(t.segments.first?.text.hasPrefix("good to be here I love Chicago alright so yeah so my name is Travis"), true)
        XCTAssertEqual(t.segments.suffix(2).map(\.text).joined(separator: " "), "write a blog make it interesting and hustle"
            + " the hell out of it to make sure that other people are reading it right and linking to it all right")
        for (a, b) in zip(t.segments, t.segments.dropFirst()) {
            XCTAssertLessThanOrEqual(a.start ?? 0, a.end ?? 0)
            XCTAssertLessThanOrEqual(a.end ?? 0, b.start ?? 0)
        }
        // No run of 8 words comes back within 16 words of itself, as a rolled line would.
        // The speaker really says four phrases twice, 24 to 26 words apart ("met the smartest
        // 20 year old on the planet", "how do I get my pitch in front of you"…).
        var last: [ArraySlice<String>: Int] = [:]
        var repeated = Set<ArraySlice<String>>()
        for k in 0..<max(0, words.count - 7) {
            let run = words[k..<(k + 8)]
            if let p = last[run] {
                XCTAssertGreaterThan(k - p, 16, "'\(run.joined(separator: " "))' repeated at word \(k)")
                repeated.insert(run)
            }
            last[run] = k
        }
        XCTAssertLessThanOrEqual(repeated.count, 8)
    }

    /// Human-edited WebVTT does not roll: one segment per cue, as before.
    func testRealHumanCaptionsDoNotRoll() throws {
        let text = try RealWorldFiles.text("w3c-we-count.vtt")
        let t = try TranscriptParser.parse(text, format: nil)
        XCTAssertEqual(t.warnings, [])
        XCTAssertEqual(t.segments.count, 294)
        XCTAssertEqual(t.segments.first?.text, "My name is Jutta Treviranus")
        XCTAssertEqual(t.speakers, ["Jutta"])
        XCTAssertEqual(naiveWords(text), t.plainText.split(whereSeparator: \.isWhitespace).count)
    }
}

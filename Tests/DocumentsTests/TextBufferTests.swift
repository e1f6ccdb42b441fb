import ParlanceDocuments
import XCTest

/// The editor buffer: LSP positions in each encoding, edits in place, line starts kept
/// right across every kind of line break — checked against a naive model of the text.
final class TextBufferTests: XCTestCase {
    let multiByte = "a😀b 日本語 e\u{301}x\r\nsecond 🇩🇪 line\rthird\n\nlast"

    func testPositionsInEachEncoding() {
        let b = TextBuffer(multiByte)
        XCTAssertEqual(b.lineCount, 5)
        // "a😀b": 😀 is 4 UTF-8 bytes, 2 UTF-16 units, 1 scalar.
        XCTAssertEqual(b.offset(line: 0, character: 3, encoding: .utf16), 5)   // before "b"
        XCTAssertEqual(b.offset(line: 0, character: 5, encoding: .utf8), 5)
        XCTAssertEqual(b.offset(line: 0, character: 2, encoding: .utf32), 5)
        // Inside the emoji: rounded down to its start.
        XCTAssertEqual(b.offset(line: 0, character: 2, encoding: .utf16), 1)
        XCTAssertEqual(b.offset(line: 0, character: 3, encoding: .utf8), 1)
        // Past the end of a line: its end, before "\r\n" (never the next line).
        let lineEnd = Array("a😀b 日本語 e\u{301}x".utf8).count
        XCTAssertEqual(b.offset(line: 0, character: 999, encoding: .utf16), lineEnd)
        // Lines after "\r\n", "\r", "\n"; a line past the end is the end of the text.
        XCTAssertEqual(b.text(in: b.offset(line: 1, character: 0, encoding: .utf16)..<b.offset(line: 1, character: 6, encoding: .utf16)), "second")
        XCTAssertEqual(b.text(in: b.offset(line: 2, character: 0, encoding: .utf16)..<b.offset(line: 2, character: 99, encoding: .utf16)), "third")
        XCTAssertEqual(b.offset(line: 9, character: 0, encoding: .utf16), b.byteCount)
        // Round trip: every character boundary maps back to the same position.
        for enc in PositionEncoding.allCases {
            for line in 0..<b.lineCount {
                var ch = 0
                while true {
                    let o = b.offset(line: line, character: ch, encoding: enc)
                    let p = b.position(of: o, encoding: enc)
                    XCTAssertEqual(p.line, line)
                    if p.character < ch || o == b.offset(line: line, character: 9999, encoding: enc) { break }
                    XCTAssertEqual(p.character, ch, "\(enc) line \(line) char \(ch)")
                    ch += 1
                }
            }
        }
        // Combining marks are two scalars: é = e + U+0301 counts 2 in UTF-16 and UTF-32.
        let e = b.offset(line: 0, character: 9, encoding: .utf16)  // "a😀b 日本語 " is 9 UTF-16 units
        XCTAssertEqual(b.text(in: e..<b.offset(line: 0, character: 11, encoding: .utf16)), "e\u{301}")
    }

    func testEditsMatchANaiveModel() {
        var rng = SplitMix(seed: 7)
        let pieces = ["a", "😀", "日本", "e\u{301}", "\n", "\r\n", "\r", " ", "word", "", "\n\n", "🇩🇪"]
        for round in 0..<40 {
            var text = (0..<rng.next(30)).map { _ in pieces[rng.next(pieces.count)] }.joined()
            var b = TextBuffer(text)
            for step in 0..<60 {
                let bytes = Array(text.utf8)
                // Random boundaries (on scalar starts, as positions from an editor are).
                let starts = [0] + text.unicodeScalars.indices.map { text.utf8.distance(from: text.utf8.startIndex, to: $0) } + [bytes.count]
                var lo = starts[rng.next(starts.count)], hi = starts[rng.next(starts.count)]
                if lo > hi { swap(&lo, &hi) }
                let insert = (0..<rng.next(3)).map { _ in pieces[rng.next(pieces.count)] }.joined()
                // Through positions, as didChange does, in a random encoding.
                let enc = PositionEncoding.allCases[rng.next(3)]
                let ps = b.position(of: lo, encoding: enc), pe = b.position(of: hi, encoding: enc)
                let s = b.offset(line: ps.line, character: ps.character, encoding: enc)
                let e = b.offset(line: pe.line, character: pe.character, encoding: enc)
                // A boundary between "\r" and "\n" is not a position: skip those edits.
                guard s == lo, e == hi else { continue }
                b.replace(s..<e, with: insert)
                text = String(decoding: bytes[0..<lo] + Array(insert.utf8) + bytes[hi...], as: UTF8.self)
                XCTAssertEqual(b.text, text, "round \(round) step \(step)")
                XCTAssertEqual(b.lineStarts, TextBuffer(text).lineStarts, "round \(round) step \(step): line starts")
            }
        }
    }

    func testSingleCharacterEditsOnALargeBufferDoNotCopyIt() {
        let line = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 2) + "\n"
        var b = TextBuffer(String(repeating: line, count: 12_000))  // about 1 MB
        let before = b.byteCount
        for i in 0..<2000 {
            let o = b.offset(line: 6000 + i % 50, character: 10, encoding: .utf16)
            b.replace(o..<o, with: "x")
        }
        XCTAssertEqual(b.byteCount, before + 2000)
        XCTAssertEqual(b.lineCount, 12_001)
    }
}

/// A small deterministic generator, so a failure repeats.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(max(1, bound)))
    }
}

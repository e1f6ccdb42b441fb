import ParlanceProtocol

/// A word-level diff: both texts are split into words (letters and digits, with inner
/// apostrophes and hyphens) and single punctuation marks; the longest common subsequence
/// of those tokens anchors the diff, and everything between two anchors — the changed
/// words and the whitespace around them — becomes one hunk. So applying every hunk to
/// the original gives the other text exactly, and an editor can preview and apply a
/// variation like a code edit. Offsets are UTF-16 code units (LSP positions).
public enum WordDiff {
    public struct Token: Equatable, Sendable {
        public var text: String
        public var start: Int   // UTF-16 offset
        public var end: Int
        public var isWord: Bool
    }

    /// Words and punctuation marks with their UTF-16 ranges; whitespace separates them.
    public static func tokens(_ s: String) -> [Token] {
        let chars = Array(s)
        var out: [Token] = []
        var offset = 0
        var i = 0
        func isWordChar(_ c: Character) -> Bool { c.isLetter || c.isNumber }
        while i < chars.count {
            let c = chars[i]
            if c.isWhitespace {
                offset += c.utf16.count
                i += 1
                continue
            }
            let start = offset
            var text = String(c)
            offset += c.utf16.count
            i += 1
            if isWordChar(c) {
                while i < chars.count {
                    let d = chars[i]
                    let joiner = (d == "'" || d == "\u{2019}" || d == "-") && i + 1 < chars.count && isWordChar(chars[i + 1])
                    guard isWordChar(d) || joiner else { break }
                    text.append(d)
                    offset += d.utf16.count
                    i += 1
                }
                out.append(Token(text: text, start: start, end: offset, isWord: true))
            } else {
                out.append(Token(text: text, start: start, end: offset, isWord: false))
            }
        }
        return out
    }

    /// Pairs (index in a, index in b) of a longest common subsequence of equal tokens.
    static func matches(_ a: [Token], _ b: [Token], maxCells: Int = 4_000_000) -> [(Int, Int)] {
        var head = 0
        while head < a.count, head < b.count, a[head].text == b[head].text { head += 1 }
        var tail = 0
        while tail < a.count - head, tail < b.count - head, a[a.count - 1 - tail].text == b[b.count - 1 - tail].text { tail += 1 }
        var pairs = (0..<head).map { ($0, $0) }
        let ma = a[head..<(a.count - tail)].map(\.text)
        let mb = b[head..<(b.count - tail)].map(\.text)
        let n = ma.count, m = mb.count
        if n > 0, m > 0, (n + 1) * (m + 1) <= maxCells {
            // lengths[i][j]: LCS of ma[i...] and mb[j...]
            let w = m + 1
            var lengths = [Int32](repeating: 0, count: (n + 1) * w)
            for i in stride(from: n - 1, through: 0, by: -1) {
                for j in stride(from: m - 1, through: 0, by: -1) {
                    lengths[i * w + j] = ma[i] == mb[j] ? lengths[(i + 1) * w + j + 1] + 1 : max(lengths[(i + 1) * w + j], lengths[i * w + j + 1])
                }
            }
            var i = 0, j = 0
            while i < n, j < m {
                if ma[i] == mb[j] {
                    pairs.append((head + i, head + j))
                    i += 1
                    j += 1
                } else if lengths[(i + 1) * w + j] >= lengths[i * w + j + 1] {
                    i += 1
                } else {
                    j += 1
                }
            }
        }
        pairs += (0..<tail).map { (a.count - tail + $0, b.count - tail + $0) }
        return pairs
    }

    public static func diff(_ original: String, _ revised: String) -> WordDiffResult {
        let ua = Array(original.utf16), ub = Array(revised.utf16)
        let ta = tokens(original), tb = tokens(revised)
        let pairs = matches(ta, tb)
        // Anchors: the matched tokens, between a virtual start and end.
        var anchors: [(aEnd: Int, bEnd: Int, aStart: Int, bStart: Int)] = [(0, 0, 0, 0)]
        for (i, j) in pairs { anchors.append((ta[i].end, tb[j].end, ta[i].start, tb[j].start)) }
        anchors.append((ua.count, ub.count, ua.count, ub.count))
        var hunks: [DiffHunk] = []
        for k in 1..<anchors.count {
            var (a0, a1) = (anchors[k - 1].aEnd, anchors[k].aStart)
            var (b0, b1) = (anchors[k - 1].bEnd, anchors[k].bStart)
            if ua[a0..<a1].elementsEqual(ub[b0..<b1]) { continue }
            // Trim whitespace both sides share, so hunks start and end at words.
            while a0 < a1, b0 < b1, ua[a0] == ub[b0], isSpace(ua[a0]) { a0 += 1; b0 += 1 }
            while a1 > a0, b1 > b0, ua[a1 - 1] == ub[b1 - 1], isSpace(ua[a1 - 1]) { a1 -= 1; b1 -= 1 }
            hunks.append(DiffHunk(originalStart: a0, originalEnd: a1, replacementStart: b0, replacementEnd: b1,
                                  original: String(decoding: ua[a0..<a1], as: UTF16.self),
                                  replacement: String(decoding: ub[b0..<b1], as: UTF16.self)))
        }
        let wordsA = ta.filter(\.isWord).count, wordsB = tb.filter(\.isWord).count
        let kept = pairs.filter { ta[$0.0].isWord }.count
        let similarity = wordsA + wordsB == 0 ? 1 : Double(2 * kept) / Double(wordsA + wordsB)
        return WordDiffResult(hunks: hunks, wordsKept: kept, wordsRemoved: wordsA - kept, wordsAdded: wordsB - kept,
                              similarity: (similarity * 1000).rounded() / 1000)
    }

    /// The original with every hunk applied (what an editor does to accept a variation).
    public static func apply(_ hunks: [DiffHunk], to original: String) -> String {
        var u = Array(original.utf16)
        for h in hunks.sorted(by: { $0.originalStart > $1.originalStart }) {
            u.replaceSubrange(h.originalStart..<h.originalEnd, with: Array(h.replacement.utf16))
        }
        return String(decoding: u, as: UTF16.self)
    }

    private static func isSpace(_ u: UInt16) -> Bool { u == 0x20 || u == 0x0A || u == 0x09 || u == 0x0D }
}

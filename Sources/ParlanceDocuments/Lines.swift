/// Splits UTF-8 input into lines without copying, and small byte-level helpers shared by
/// the format detector and the cue parser.
struct Lines {
    let bytes: [UInt8]
    /// Byte ranges of each line, terminators (CRLF, LF or a lone CR) excluded.
    let ranges: [Range<Int>]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var ranges: [Range<Int>] = []
        var start = Lines.bomLength(bytes)
        var i = start
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b == 0x0A || b == 0x0D {
                ranges.append(start..<i)
                if b == 0x0D, i + 1 < n, bytes[i + 1] == 0x0A { i += 1 }
                start = i + 1
            }
            i += 1
        }
        if start < n { ranges.append(start..<n) }
        self.ranges = ranges
    }

    var count: Int { ranges.count }

    subscript(i: Int) -> ArraySlice<UInt8> { bytes[ranges[i]] }

    static func bomLength(_ b: [UInt8]) -> Int {
        b.count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF ? 3 : 0
    }
}

enum Bytes {
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0C || b == 0x0B }
    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// True when the line holds only spaces and tabs (or nothing).
    static func isBlank(_ s: ArraySlice<UInt8>) -> Bool { s.allSatisfy(isSpace) }

    static func trimmed(_ s: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var lo = s.startIndex, hi = s.endIndex
        while lo < hi, isSpace(s[lo]) { lo += 1 }
        while hi > lo, isSpace(s[hi - 1]) { hi -= 1 }
        return s[lo..<hi]
    }

    /// Position of the first occurrence of `-->` in `s`, if any.
    static func arrow(in s: ArraySlice<UInt8>) -> Int? {
        var i = s.startIndex
        while i + 2 < s.endIndex {
            if s[i] == 0x2D, s[i + 1] == 0x2D, s[i + 2] == 0x3E { return i }
            i += 1
        }
        return nil
    }

    /// True when the line (trimmed) is a run of ASCII digits, like an SRT cue number.
    static func isInteger(_ s: ArraySlice<UInt8>) -> Bool {
        let t = trimmed(s)
        return !t.isEmpty && t.allSatisfy(isDigit)
    }

    /// True when `s` begins with the ASCII `word` followed by whitespace or the end.
    static func startsWithKeyword(_ s: ArraySlice<UInt8>, _ word: String) -> Bool {
        let w = Array(word.utf8)
        guard s.count >= w.count else { return false }
        for (k, c) in w.enumerated() where s[s.startIndex + k] != c { return false }
        return s.count == w.count || isSpace(s[s.startIndex + w.count])
    }
}

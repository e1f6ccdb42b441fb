/// How an LSP position counts characters within a line (LSP 3.17 `PositionEncodingKind`).
public enum PositionEncoding: String, Sendable, CaseIterable {
    case utf8 = "utf-8"
    case utf16 = "utf-16"
    case utf32 = "utf-32"
}

/// An editor buffer: UTF-8 bytes edited in place, with the start of every line kept
/// current, so an edit at an LSP position costs the length of the lines it touches plus
/// shifting the line starts after it — never a copy of the whole text. Lines end at
/// "\n", "\r\n" or "\r", as in LSP.
public struct TextBuffer: Sendable {
    public private(set) var bytes: [UInt8]
    /// Byte offset where each line starts; the first is 0. A text ending with a line
    /// break has an empty last line starting at its end.
    public private(set) var lineStarts: [Int]

    public init(_ text: String) {
        bytes = Array(text.utf8)
        lineStarts = [0] + TextBuffer.breaks(in: bytes, from: 0, to: bytes.count, includingEnd: true)
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }
    public var lineCount: Int { lineStarts.count }
    public var byteCount: Int { bytes.count }

    public func text(in range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    /// The byte offset of an LSP position. A line past the end is the end of the text; a
    /// character past the end of its line is the end of that line (before its line break:
    /// a selection never spills into the next line); a character inside a multi-unit
    /// character is rounded down to its start.
    public func offset(line: Int, character: Int, encoding: PositionEncoding) -> Int {
        guard line >= 0 else { return 0 }
        guard line < lineStarts.count else { return bytes.count }
        let start = lineStarts[line], end = contentEnd(ofLine: line)
        var units = 0, i = start
        while i < end {
            let (length, width) = TextBuffer.scalar(at: i, in: bytes, end: end, encoding: encoding)
            if units + width > character { break }
            units += width
            i += length
        }
        return i
    }

    /// The LSP position of a byte offset (clamped to the text).
    public func position(of offset: Int, encoding: PositionEncoding) -> (line: Int, character: Int) {
        let o = min(max(0, offset), bytes.count)
        let line = self.line(containing: o)
        var units = 0, i = lineStarts[line]
        let end = min(o, contentEnd(ofLine: line))
        while i < end {
            let (length, width) = TextBuffer.scalar(at: i, in: bytes, end: end, encoding: encoding)
            units += width
            i += length
        }
        return (line, units)
    }

    /// Replaces a byte range. Only the lines around the edit are scanned again; the line
    /// starts after it move by the length difference.
    public mutating func replace(_ range: Range<Int>, with text: String) {
        let lower = min(max(0, range.lowerBound), bytes.count), upper = min(max(lower, range.upperBound), bytes.count)
        let inserted = Array(text.utf8)
        let delta = inserted.count - (upper - lower)
        // From the line before the edit (a "\r" there may pair with an inserted "\n") to the
        // first line starting after it, in the old coordinates.
        let lo = max(0, line(containing: lower) - 1)
        var hi = line(containing: upper) + 1
        while hi < lineStarts.count, lineStarts[hi] <= upper { hi += 1 }
        bytes.replaceSubrange(lower..<upper, with: inserted)
        let scanFrom = lineStarts[lo]
        let atEnd = hi == lineStarts.count
        let scanTo = atEnd ? bytes.count : lineStarts[hi] + delta
        let fresh = TextBuffer.breaks(in: bytes, from: scanFrom, to: scanTo, includingEnd: atEnd)
        if delta != 0 { for k in hi..<lineStarts.count { lineStarts[k] += delta } }
        lineStarts.replaceSubrange((lo + 1)..<hi, with: fresh)
    }

    /// The line holding byte `offset` (the last line starting at or before it).
    public func line(containing offset: Int) -> Int {
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Where line `line`'s text ends, before its line break.
    func contentEnd(ofLine line: Int) -> Int {
        var end = line + 1 < lineStarts.count ? lineStarts[line + 1] : bytes.count
        if end > lineStarts[line], bytes[end - 1] == 0x0A { end -= 1 }
        if end > lineStarts[line], bytes[end - 1] == 0x0D { end -= 1 }
        return end
    }

    /// Line starts after breaks in `bytes[from..<to]`; one at `to` itself only when
    /// `includingEnd` (the scan reaches the end of the text).
    static func breaks(in bytes: [UInt8], from: Int, to: Int, includingEnd: Bool) -> [Int] {
        var out: [Int] = []
        var i = from
        while i < to {
            let b = bytes[i]
            if b == 0x0A || (b == 0x0D && (i + 1 >= bytes.count || bytes[i + 1] != 0x0A)) {
                if i + 1 < to || includingEnd { out.append(i + 1) }
            }
            i += 1
        }
        return out
    }

    /// The byte length of the character at `i` and its width in `encoding`'s units.
    /// Invalid UTF-8 counts as one byte, one unit (as it decodes to U+FFFD).
    static func scalar(at i: Int, in bytes: [UInt8], end: Int, encoding: PositionEncoding) -> (Int, Int) {
        let b = bytes[i]
        let length = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
        guard i + length <= end, (1..<length).allSatisfy({ bytes[i + $0] & 0xC0 == 0x80 }) else { return (1, 1) }
        switch encoding {
        case .utf8: return (length, length)
        case .utf16: return (length, length == 4 ? 2 : 1)
        case .utf32: return (length, 1)
        }
    }
}

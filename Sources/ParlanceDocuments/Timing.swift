/// Cue timing lines: `00:01:02,500 --> 00:01:04,000 align:start` (SRT commas or WebVTT
/// dots, hours optional). All arithmetic is on small bounded values, so hostile input
/// cannot overflow.
enum Timing {
    enum Line: Equatable {
        /// Not a timing line at all (no `-->`, or text that merely contains an arrow).
        case none
        case valid(start: Double, end: Double)
        /// Looks like a timing line but does not parse.
        case malformed(String)
    }

    /// Classifies one input line.
    static func parse(_ line: ArraySlice<UInt8>) -> Line {
        guard let arrow = Bytes.arrow(in: line) else { return .none }
        let left = Bytes.trimmed(line[line.startIndex..<arrow])
        // Only a line that starts with a digit is a timing line; "a --> b" is cue text.
        guard let first = left.first, Bytes.isDigit(first) else { return .none }
        var right = line[(arrow + 3)...]
        right = Bytes.trimmed(right)
        var endToken = right.startIndex
        while endToken < right.endIndex, !Bytes.isSpace(right[endToken]) { endToken += 1 }
        guard let start = timestamp(left) else {
            return .malformed("malformed start time '\(String(decoding: left.prefix(40), as: UTF8.self))'")
        }
        let endText = right[right.startIndex..<endToken]
        guard let end = timestamp(endText) else {
            return .malformed("malformed end time '\(String(decoding: endText.prefix(40), as: UTF8.self))'")
        }
        return .valid(start: start, end: end)
    }

    /// `[HH:]MM:SS[(,|.)fff]` in seconds, or nil. Hours may have any number of digits up
    /// to 9; minutes and seconds must be below 60 (minutes may exceed 59 only without hours).
    static func timestamp(_ s: ArraySlice<UInt8>) -> Double? {
        var fields: [Int] = []
        var fraction = 0  // first (up to) 9 fractional digits as an integer
        var fractionDigits = 0
        var value = 0
        var digits = 0
        var i = s.startIndex
        while i < s.endIndex {
            let b = s[i]
            if Bytes.isDigit(b) {
                guard digits < 9 else { return nil }
                value = value * 10 + Int(b - 0x30)
                digits += 1
            } else if b == 0x3A {  // ':'
                guard digits > 0, fields.count < 2 else { return nil }
                fields.append(value)
                value = 0
                digits = 0
            } else if b == 0x2C || b == 0x2E {  // ',' or '.'
                guard digits > 0 else { return nil }
                var j = i + 1
                guard j < s.endIndex else { return nil }
                while j < s.endIndex {
                    guard Bytes.isDigit(s[j]) else { return nil }
                    if fractionDigits < 9 {
                        fraction = fraction * 10 + Int(s[j] - 0x30)
                        fractionDigits += 1
                    }
                    j += 1
                }
                i = j
                break
            } else {
                return nil
            }
            i += 1
        }
        guard digits > 0, !fields.isEmpty else { return nil }
        fields.append(value)
        let seconds = fields[fields.count - 1]
        let minutes = fields[fields.count - 2]
        let hours = fields.count == 3 ? fields[0] : 0
        guard seconds < 60 else { return nil }
        if fields.count == 3, minutes >= 60 { return nil }
        // Whole seconds and fraction combined in one division, so 00:00:05,754 is exactly 5.754.
        let whole = Double(hours) * 3600 + Double(minutes) * 60 + Double(seconds)
        var scale = 1.0
        for _ in 0..<fractionDigits { scale *= 10 }
        return (whole * scale + Double(fraction)) / scale
    }
}

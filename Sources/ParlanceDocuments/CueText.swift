/// Cleaning one line of cue text: styling tags, entities, dialogue dashes and speaker labels.
/// Works on UTF-8 bytes (the input is already validated), since a 5 MB transcript has
/// hundreds of thousands of lines and most need no work at all.
enum CueText {
    struct Line {
        var speaker: String?
        var text: ArraySlice<UInt8>
        /// Started with a dialogue dash ("- "), so it is a new, unnamed speaker.
        var dashed: Bool
    }

    /// Cleans a raw line: strips tags, then the dash, then reads a `NAME:` label.
    static func line(_ raw: ArraySlice<UInt8>) -> Line {
        var text: ArraySlice<UInt8>
        var voice: String?
        if raw.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "&") }) {
            let (bytes, v) = Markup.strip(raw)
            text = bytes[...]
            voice = v
        } else {
            text = raw
        }
        text = text.drop(while: Bytes.isSpace)
        var dashed = false
        if text.first == UInt8(ascii: "-") {
            if let next = text.dropFirst().first, Bytes.isSpace(next) {
                dashed = true
                text = text.dropFirst().drop(while: Bytes.isSpace)
            }
        } else if text.count >= 4, text.first == 0xE2, text[text.startIndex + 1] == 0x80,
                  text[text.startIndex + 2] == 0x93 || text[text.startIndex + 2] == 0x94 {  // – or —
            dashed = true
            text = text.dropFirst(3).drop(while: Bytes.isSpace)
        }
        if let (name, rest) = speakerLabel(text) {
            return Line(speaker: name, text: rest, dashed: dashed)
        }
        return Line(speaker: voice, text: text, dashed: dashed)
    }

    // MARK: Speaker labels

    /// Words that end in a colon at the start of a line without naming anyone.
    private static let notNames: Set<String> = [
        "note", "notes", "nb", "warning", "caution", "important", "tip", "hint", "example", "question", "answer",
        "update", "edit", "step", "result", "reason", "remember", "so", "and", "but", "well", "yes", "no", "okay",
        "ok", "now", "then", "here", "this", "that", "first", "second", "third", "fourth", "fifth", "finally",
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "source", "summary", "ps",
        "re", "fyi", "todo", "fact", "translation", "chorus", "verse", "bonus", "spoiler", "disclaimer", "goal",
        "problem", "solution", "conclusion", "definition", "quote", "title", "subject", "date", "time",
        "location", "total", "also", "plus", "why", "what", "how", "who", "when", "where", "lesson", "rule",
    ]

    /// `NAME: rest` where NAME is one to four words that each start with an uppercase letter
    /// (later words may be numbers, as in "Speaker 2"). Returns nil for anything else.
    static func speakerLabel(_ s: ArraySlice<UInt8>) -> (String, ArraySlice<UInt8>)? {
        guard let colon = s.prefix(80).firstIndex(of: UInt8(ascii: ":")), colon > s.startIndex else { return nil }
        let after = colon + 1
        if after < s.endIndex, !Bytes.isSpace(s[after]) { return nil }
        let nameBytes = s[s.startIndex..<colon]
        let name = String(decoding: nameBytes, as: UTF8.self)
        if nameBytes.allSatisfy({ $0 < 0x80 }) {
            guard isASCIIName(nameBytes), !notNames.contains(name.lowercased()) else { return nil }
        } else {
            guard isName(name) else { return nil }
        }
        return (name, s[after...].drop(while: Bytes.isSpace))
    }

    /// `isName` for ASCII, without building Characters (the common case, checked per line).
    private static func isASCIIName(_ s: ArraySlice<UInt8>) -> Bool {
        var words = 0
        var wordStart = true
        var wordIsNumber = true
        for b in s {
            if b == 0x20 {
                if wordStart { return false }  // empty word: leading or double space
                wordStart = true
                continue
            }
            let upper = b >= 0x41 && b <= 0x5A
            let lower = b >= 0x61 && b <= 0x7A
            let digit = Bytes.isDigit(b)
            guard upper || lower || digit || b == 0x2E || b == 0x27 || b == 0x2D else { return false }
            if wordStart {
                words += 1
                guard words <= 4 else { return false }
                // A word starts uppercase; later words may be numbers ("Speaker 2").
                guard upper || (digit && words > 1) else { return false }
                wordIsNumber = digit
                wordStart = false
            } else if wordIsNumber, !digit {
                return false
            }
        }
        return words >= 1 && !wordStart
    }

    static func isName(_ name: String) -> Bool {
        guard !name.isEmpty, name.last != " " else { return false }
        let words = name.split(separator: " ", omittingEmptySubsequences: false)
        guard (1...4).contains(words.count) else { return false }
        for (k, w) in words.enumerated() {
            guard let f = w.first else { return false }
            let isNumber = w.allSatisfy { $0.isASCII && $0.isNumber }
            if !(f.isUppercase || (k > 0 && isNumber)) { return false }
            guard w.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "'" || $0 == "\u{2019}" || $0 == "-" })
            else { return false }
        }
        return !(words.count == 1 && notNames.contains(name.lowercased()))
    }

    // MARK: Whitespace

    /// Joins byte pieces with spaces, collapsing runs of whitespace (ASCII, no-break and other
    /// Unicode spaces, zero-width space, BOM) to one space and trimming the ends.
    static func collapse<S: Sequence>(_ pieces: S) -> String where S.Element == ArraySlice<UInt8> {
        var out: [UInt8] = []
        var pendingSpace = false
        for piece in pieces {
            pendingSpace = true
            var i = piece.startIndex
            let end = piece.endIndex
            while i < end {
                let b = piece[i]
                let width = b < 0x80 ? (b == 0x20 || (b >= 0x09 && b <= 0x0D) ? 1 : 0) : spaceWidth(piece, i)
                if width > 0 {
                    pendingSpace = true
                    i += width
                    continue
                }
                if pendingSpace, !out.isEmpty { out.append(0x20) }
                pendingSpace = false
                out.append(b)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func collapse(_ s: String) -> String {
        collapse(CollectionOfOne(Array(s.utf8)[...]))
    }

    /// Byte length of the Unicode space starting at `i`, or 0.
    static func spaceWidth(_ s: ArraySlice<UInt8>, _ i: Int) -> Int {
        let b0 = s[i]
        let b1: UInt8 = i + 1 < s.endIndex ? s[i + 1] : 0
        let b2: UInt8 = i + 2 < s.endIndex ? s[i + 2] : 0
        switch b0 {
        case 0xC2: return b1 == 0x85 || b1 == 0xA0 ? 2 : 0  // NEL, NBSP
        case 0xE1: return b1 == 0x9A && b2 == 0x80 ? 3 : 0  // U+1680
        case 0xE2:
            if b1 == 0x80, (0x80...0x8B).contains(b2) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF { return 3 }
            return b1 == 0x81 && b2 == 0x9F ? 3 : 0  // U+205F
        case 0xE3: return b1 == 0x80 && b2 == 0x80 ? 3 : 0  // U+3000
        case 0xEF: return b1 == 0xBB && b2 == 0xBF ? 3 : 0  // U+FEFF
        default: return 0
        }
    }

    /// Whitespace, zero-width space or a stray BOM; ASCII is decided without a property lookup.
    @inline(__always)
    static func isSpace(_ c: Unicode.Scalar) -> Bool {
        if c.value < 0x80 { return c.value == 0x20 || (c.value >= 0x09 && c.value <= 0x0D) }
        return c.properties.isWhitespace || c == "\u{200B}" || c == "\u{FEFF}"
    }
}

extension String {
    func trimmingSpaces() -> String {
        let s = Substring(self).drop(while: { $0 == " " || $0 == "\t" })
        var end = s.endIndex
        while end > s.startIndex, s[s.index(before: end)] == " " || s[s.index(before: end)] == "\t" {
            end = s.index(before: end)
        }
        return String(s[s.startIndex..<end])
    }
}

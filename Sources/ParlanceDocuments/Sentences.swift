/// Sentence and word boundaries on UTF-8 bytes, shared by the plain-text parser and the chunker.
public enum Sentences {
    private static let abbreviations: Set<String> = [
        "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co", "no",
        "fig", "approx", "dept", "est", "mt", "ft", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
        "sept", "oct", "nov", "dec", "gen", "gov", "sen", "rep", "capt", "lt", "col", "sgt", "u.s", "u.k",
    ]

    /// `sentence` without a speaker label at its start ("Bob: Then marketing needs the date."
    /// → "Then marketing needs the date."): the turn a plain-text line holds after another
    /// speaker's, which the parser splits at line starts only. The label is what the parser
    /// reads as one (one to four capitalised words, not "Note:").
    public static func withoutSpeakerLabel(_ sentence: String) -> String {
        let trimmed = sentence.drop { $0 == " " }
        guard let (_, rest) = CueText.speakerLabel(Array(trimmed.utf8)[...]), !rest.isEmpty else { return sentence }
        return String(decoding: rest, as: UTF8.self)
    }

    /// Splits text into sentences that tile it exactly: joining the pieces with "" gives the
    /// text back, and each piece keeps the whitespace that follows it. Breaks after `.`, `!`,
    /// `?` or `…` (plus closing quotes/brackets) followed by whitespace, except after common
    /// abbreviations and single-letter initials, and right after CJK full stops.
    public static func split(_ text: String) -> [String] {
        let b = Array(text.utf8)
        var out: [String] = []
        var start = 0
        var i = 0
        let n = b.count
        while i < n {
            let w = terminatorWidth(b, i)
            if w == 0 {
                i += 1
                continue
            }
            let cjk = w == 3 && b[i] != 0xE2  // 。！？ end a sentence without a following space
            var j = i + w
            while j < n {
                let t = terminatorWidth(b, j)
                let c = closerWidth(b, j)
                if t > 0 { j += t } else if c > 0 { j += c } else { break }
            }
            if j < n, cjk || spaceWidth(b, j) > 0, !(b[i] == UInt8(ascii: ".") && isAbbreviation(b, start: start, dot: i)) {
                while j < n, spaceWidth(b, j) > 0 { j += spaceWidth(b, j) }
                if j < n {
                    out.append(String(decoding: b[start..<j], as: UTF8.self))
                    start = j
                }
            }
            i = j
        }
        if start < n { out.append(String(decoding: b[start..<n], as: UTF8.self)) }
        return out
    }

    /// `s` without leading and trailing whitespace (ASCII and the Unicode spaces `collapse` knows).
    static func trimmed(_ s: String) -> String {
        let b = Array(s.utf8)
        var lo = 0
        while lo < b.count, spaceWidth(b, lo) > 0 { lo += spaceWidth(b, lo) }
        var hi = b.count
        while hi > lo {
            // Step back over one whitespace character (1 to 3 bytes) if there is one.
            var k = hi - 1
            while k > lo, b[k] & 0xC0 == 0x80 { k -= 1 }
            guard spaceWidth(b, k) == hi - k else { break }
            hi = k
        }
        return lo == 0 && hi == b.count ? s : String(decoding: b[lo..<hi], as: UTF8.self)
    }

    /// Words: maximal runs of non-whitespace.
    static func words(_ text: String) -> [String] {
        let b = Array(text.utf8)
        var out: [String] = []
        var i = 0, start = -1
        while i < b.count {
            let w = spaceWidth(b, i)
            if w > 0 {
                if start >= 0 { out.append(String(decoding: b[start..<i], as: UTF8.self)) }
                start = -1
                i += w
            } else {
                if start < 0 { start = i }
                i += 1
            }
        }
        if start >= 0 { out.append(String(decoding: b[start...], as: UTF8.self)) }
        return out
    }

    static func spaceWidth(_ b: [UInt8], _ i: Int) -> Int {
        let c = b[i]
        if c < 0x80 { return c == 0x20 || (c >= 0x09 && c <= 0x0D) ? 1 : 0 }
        return CueText.spaceWidth(b[...], i)
    }

    /// `.` `!` `?` (1 byte), `…` `。` `！` `？` (3 bytes), else 0.
    private static func terminatorWidth(_ b: [UInt8], _ i: Int) -> Int {
        let c = b[i]
        if c == UInt8(ascii: ".") || c == UInt8(ascii: "!") || c == UInt8(ascii: "?") { return 1 }
        guard i + 2 < b.count else { return 0 }
        let (c1, c2) = (b[i + 1], b[i + 2])
        if c == 0xE2, c1 == 0x80, c2 == 0xA6 { return 3 }  // …
        if c == 0xE3, c1 == 0x80, c2 == 0x82 { return 3 }  // 。
        if c == 0xEF, c1 == 0xBC, c2 == 0x81 || c2 == 0x9F { return 3 }  // ！ ？
        return 0
    }

    /// Closing quotes and brackets that may follow a terminator.
    private static func closerWidth(_ b: [UInt8], _ i: Int) -> Int {
        let c = b[i]
        if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") || c == UInt8(ascii: ")") || c == UInt8(ascii: "]") { return 1 }
        if c == 0xC2, i + 1 < b.count, b[i + 1] == 0xBB { return 2 }  // »
        guard i + 2 < b.count else { return 0 }
        let (c1, c2) = (b[i + 1], b[i + 2])
        if c == 0xE2, c1 == 0x80, c2 == 0x9D || c2 == 0x99 { return 3 }  // ” ’
        if c == 0xE3, c1 == 0x80, c2 == 0x8D || c2 == 0x8F { return 3 }  // 」 』
        if c == 0xEF, c1 == 0xBC, c2 == 0x89 { return 3 }  // ）
        return 0
    }

    /// The word before the dot at `dot` is an abbreviation or a single capital initial ("J.").
    private static func isAbbreviation(_ b: [UInt8], start: Int, dot: Int) -> Bool {
        var k = dot
        while k > start, k > dot - 12, spaceWidth(b, k - 1) == 0 { k -= 1 }
        guard k < dot else { return false }
        if dot - k == 1, b[k] >= 0x41, b[k] <= 0x5A { return true }
        let word = String(decoding: b[k..<dot], as: UTF8.self).lowercased()
        return abbreviations.contains(word)
    }
}

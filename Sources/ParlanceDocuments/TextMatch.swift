/// Finding quotes and names in segments, tolerant of case, accents, punctuation and cue
/// breaks, so a model's quotation can be traced back to segment ids.
public enum TextMatch {
    /// Lowercased, diacritics folded, punctuation removed (apostrophes inside words kept,
    /// curly ones straightened), whitespace collapsed to single spaces, trimmed.
    public static func normalize(_ s: String) -> String {
        let folded = Array(Folding.fold(s).unicodeScalars)
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for (i, c) in folded.enumerated() {
            let keep: Bool
            if Folding.isWordScalar(c) || c.properties.generalCategory == .nonspacingMark {
                keep = true
            } else if c == "'" {
                keep = i > 0 && Folding.isWordScalar(folded[i - 1]) && i + 1 < folded.count && Folding.isWordScalar(folded[i + 1])
            } else {
                keep = false
            }
            if keep {
                if pendingSpace, !out.isEmpty { out.append(" ") }
                pendingSpace = false
                out.append(c)
            } else {
                pendingSpace = true
            }
        }
        return String(out)
    }

    /// Ids of segments whose normalized text contains the normalized quote on word
    /// boundaries, plus quotes that run across two or three consecutive segments (then every
    /// segment of that run is included). Sorted, without duplicates; [] for an empty quote.
    public static func segmentsContaining(_ quote: String, in segments: [Segment]) -> [Int] {
        let q = Array(normalize(quote).utf8)
        guard !q.isEmpty else { return [] }
        let texts = segments.map { Array(normalize($0.text).utf8) }
        var ids = Set<Int>()
        for i in segments.indices {
            if !matches(q, in: texts[i]).isEmpty { ids.insert(segments[i].id) }
        }
        // Windows of 2 and 3 segments: the match must begin in the first and end in the last.
        for width in 2...3 {
            guard segments.count >= width else { break }
            for i in 0...(segments.count - width) {
                var joined: [UInt8] = []
                var firstEnd = 0
                for k in 0..<width {
                    if k > 0 { joined.append(0x20) }
                    joined += texts[i + k]
                    if k == 0 { firstEnd = joined.count }
                }
                let lastStart = joined.count - texts[i + width - 1].count
                for m in matches(q, in: joined) where m.lowerBound < firstEnd && m.upperBound > lastStart {
                    for k in 0..<width { ids.insert(segments[i + k].id) }
                }
            }
        }
        return ids.sorted()
    }

    /// Ids of segments that mention `name` as whole words, case- and accent-insensitively,
    /// in document order.
    public static func occurrences(of name: String, in segments: [Segment]) -> [Int] {
        let q = Array(normalize(name).utf8)
        guard !q.isEmpty else { return [] }
        return segments.filter { !matches(q, in: Array(normalize($0.text).utf8)).isEmpty }.map(\.id)
    }

    /// Byte ranges where `needle` occurs in `hay` starting and ending on word boundaries
    /// (both are normalized, so words are separated by single spaces).
    static func matches(_ needle: [UInt8], in hay: [UInt8]) -> [Range<Int>] {
        guard !needle.isEmpty, hay.count >= needle.count else { return [] }
        var out: [Range<Int>] = []
        let first = needle[0]
        var i = 0
        let last = hay.count - needle.count
        while i <= last {
            if hay[i] == first, i == 0 || hay[i - 1] == 0x20 {
                var j = 1
                while j < needle.count, hay[i + j] == needle[j] { j += 1 }
                // A word ends at a space, the end, or an apostrophe ("Priya" in "priya's").
                if j == needle.count, i + j == hay.count || hay[i + j] == 0x20 || hay[i + j] == 0x27 {
                    out.append(i..<(i + j))
                }
            }
            i += 1
        }
        return out
    }
}

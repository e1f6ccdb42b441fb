/// Where each plain-text segment sits in the text the client sent, so an editor can
/// highlight or jump to it: UTF-16 code-unit offsets (LSP's default position encoding),
/// half-open, from the segment's first to its last non-space character.
///
/// A plain-text segment is a run of the source with whitespace collapsed and a leading
/// `NAME:` label dropped, so it is found by matching its non-space characters in order,
/// skipping the source's whitespace, from where the previous segment ended. A segment that
/// cannot be matched (it never should) gets no offsets, and the search goes on after it.
enum SourceOffsets {
    static func attach(to segments: inout [Segment], source: String) {
        let scalars = Array(source.unicodeScalars)
        var utf16 = [Int](repeating: 0, count: scalars.count + 1)
        for (i, s) in scalars.enumerated() { utf16[i + 1] = utf16[i] + s.utf16.count }
        var cursor = 0
        for k in segments.indices {
            let wanted = Array(segments[k].text.unicodeScalars.filter { !isSpace($0) })
            guard let first = wanted.first, let (start, end) = find(wanted, first: first, in: scalars, from: cursor) else { continue }
            segments[k].sourceStart = utf16[start]
            segments[k].sourceEnd = utf16[end]
            cursor = end
        }
    }

    /// The first range at or after `from` whose non-space scalars are exactly `wanted`,
    /// starting within a window past `from` (labels and blank lines lie between segments;
    /// an unmatched segment must not cost a scan of the whole text).
    private static func find(_ wanted: [Unicode.Scalar], first: Unicode.Scalar, in s: [Unicode.Scalar], from: Int) -> (Int, Int)? {
        var i = from
        let last = min(s.count, from + 4096 + 4 * wanted.count)
        while i < last {
            if s[i] == first {
                var j = 0, k = i
                while j < wanted.count, k < s.count {
                    if isSpace(s[k]) { k += 1; continue }
                    if s[k] != wanted[j] { break }
                    j += 1
                    k += 1
                }
                if j == wanted.count { return (i, k) }
            }
            i += 1
        }
        return nil
    }

    /// The whitespace `CueText.collapse` folds: ASCII spaces and controls, NEL, NBSP and
    /// the Unicode spaces.
    static func isSpace(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200B, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF: return true
        default: return false
        }
    }
}

import Foundation

/// Case and diacritic folding shared by retrieval and quote matching: "Zoë Ørsted" → "zoe orsted".
enum Folding {
    private static let special: [Unicode.Scalar: String] = [
        "ø": "o", "Ø": "o", "đ": "d", "Đ": "d", "ł": "l", "Ł": "l", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe",
        "ß": "ss", "ı": "i", "þ": "th", "ð": "d", "\u{2019}": "'", "\u{2018}": "'", "\u{02BC}": "'",
    ]

    /// Lowercased, canonically decomposed, combining marks removed.
    static func fold(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        let needsDecomposition = !s.utf8.allSatisfy { $0 < 0x80 }
        let source = needsDecomposition ? s.decomposedStringWithCanonicalMapping : s
        for c in source.unicodeScalars {
            if c.value < 0x80 {
                out.append(c.value >= 0x41 && c.value <= 0x5A ? Unicode.Scalar(c.value + 32) ?? c : c)
                continue
            }
            if c.properties.generalCategory == .nonspacingMark { continue }
            if let r = special[c] { out.append(contentsOf: r.unicodeScalars); continue }
            out.append(contentsOf: c.properties.lowercaseMapping.unicodeScalars)
        }
        return String(out)
    }

    /// True for the scalars that make up words: letters, marks and digits.
    static func isWordScalar(_ c: Unicode.Scalar) -> Bool {
        if c.value < 0x80 {
            let v = c.value
            return (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
        }
        let p = c.properties
        return p.isAlphabetic || p.numericType != nil || p.generalCategory == .spacingMark
    }

    /// Han and kana are written without spaces, so each one is a word of its own.
    static func isIdeographic(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0xF900...0xFAFF, 0x20000...0x2A6DF, 0x3040...0x30FF: true
        default: false
        }
    }
}

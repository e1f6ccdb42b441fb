/// WebVTT/SRT inline markup on UTF-8 bytes: `<i>`, `<c.yellow>`, `<v Name>`, `<00:01.000>`,
/// `<font color=…>`, `{\an8}` and the common character entities.
enum Markup {
    private static let plainTags: Set<String> = [
        "i", "b", "u", "s", "c", "v", "lang", "ruby", "rt", "font", "em", "strong", "span", "sup", "sub", "br",
    ]
    private static let annotatedTags: Set<String> = ["v", "lang", "font", "span", "c"]

    /// The line without markup, and the first `<v Name>` voice, if any. Anything that only
    /// looks like markup (`a < b`, `<3`, `<unknown>`) is kept as text.
    static func strip(_ s: ArraySlice<UInt8>) -> ([UInt8], String?) {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var voice: String?
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            if c == UInt8(ascii: "<"), let close = find(UInt8(ascii: ">"), in: s, from: i + 1, limit: 200, stopAt: c) {
                if let t = tag(s[(i + 1)..<close]) {
                    if case .voice(let name) = t, voice == nil, !name.isEmpty { voice = name }
                    if case .space = t { out.append(0x20) }
                    i = close + 1
                    continue
                }
            } else if c == UInt8(ascii: "{"), i + 1 < s.endIndex, s[i + 1] == UInt8(ascii: "\\"),
                      let close = find(UInt8(ascii: "}"), in: s, from: i + 2, limit: 100, stopAt: c) {
                i = close + 1
                continue
            } else if c == UInt8(ascii: "&"), let semi = find(UInt8(ascii: ";"), in: s, from: i + 1, limit: 10, stopAt: c),
                      let decoded = entity(String(decoding: s[(i + 1)..<semi], as: UTF8.self)) {
                out.append(contentsOf: String(decoded).utf8)
                i = semi + 1
                continue
            }
            out.append(c)
            i += 1
        }
        return (out, voice)
    }

    private enum Tag { case plain, space, voice(String) }

    private static func tag(_ raw: ArraySlice<UInt8>) -> Tag? {
        var s = raw
        if s.first == UInt8(ascii: "/") { s = s.dropFirst() }
        guard let f = s.first else { return nil }
        if Bytes.isDigit(f) {  // WebVTT inline timestamp
            return s.allSatisfy({ Bytes.isDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) ? .plain : nil
        }
        let nameEnd = s.firstIndex(where: Bytes.isSpace) ?? s.endIndex
        let name = s[s.startIndex..<nameEnd]
        guard name.allSatisfy({ isASCIIAlnum($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else { return nil }
        let baseBytes = name.prefix(while: { $0 != UInt8(ascii: ".") })
        let base = String(decoding: baseBytes, as: UTF8.self).lowercased()
        guard plainTags.contains(base) else { return nil }
        if nameEnd == s.endIndex { return base == "br" ? .space : .plain }
        guard annotatedTags.contains(base) else { return nil }
        if base == "v" {
            return .voice(String(decoding: s[nameEnd...], as: UTF8.self).trimmingSpaces())
        }
        return .plain
    }

    private static func isASCIIAlnum(_ b: UInt8) -> Bool {
        Bytes.isDigit(b) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    private static func find(_ target: UInt8, in s: ArraySlice<UInt8>, from: Int, limit: Int, stopAt: UInt8) -> Int? {
        var j = from
        let end = min(s.endIndex, from + limit)
        while j < end {
            if s[j] == target { return j }
            if s[j] == stopAt { return nil }
            j += 1
        }
        return nil
    }

    private static func entity(_ name: String) -> Unicode.Scalar? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        case "nbsp": return " "
        case "lrm": return "\u{200E}"
        case "rlm": return "\u{200F}"
        default: break
        }
        guard name.hasPrefix("#") else { return nil }
        let digits = name.dropFirst()
        let value: UInt32?
        if digits.first == "x" || digits.first == "X" {
            value = digits.count <= 7 ? UInt32(digits.dropFirst(), radix: 16) : nil
        } else {
            value = digits.count <= 8 ? UInt32(digits, radix: 10) : nil
        }
        guard let v = value, v != 0, let scalar = Unicode.Scalar(v) else { return nil }
        return scalar
    }
}

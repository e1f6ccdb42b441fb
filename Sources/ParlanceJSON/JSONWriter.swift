/// Serializes `JSONValue` compactly (or pretty, for committed files), keeping key order.
extension JSONValue {
    public func serialized(pretty: Bool = false, sortKeys: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(256)
        write(into: &out, pretty: pretty, sortKeys: sortKeys, indent: 0)
        return out
    }

    public var bytes: [UInt8] { Array(serialized().utf8) }

    private func write(into out: inout String, pretty: Bool, sortKeys: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if !d.isFinite { out += "null" } else if d == d.rounded(), abs(d) < 1e15 { out += String(Int(d)) + ".0" } else {
                out += String(d)
            }
        case .string(let s): JSONValue.escape(s, into: &out)
        case .array(let a):
            if a.isEmpty { out += "[]"; return }
            out += "["
            for (n, v) in a.enumerated() {
                if n > 0 { out += "," }
                if pretty { newline(&out, indent + 1) }
                v.write(into: &out, pretty: pretty, sortKeys: sortKeys, indent: indent + 1)
            }
            if pretty { newline(&out, indent) }
            out += "]"
        case .object(let o):
            if o.isEmpty { out += "{}"; return }
            out += "{"
            let keys = sortKeys ? o.keys.sorted() : o.keys
            for (n, k) in keys.enumerated() {
                if n > 0 { out += "," }
                if pretty { newline(&out, indent + 1) }
                JSONValue.escape(k, into: &out)
                out += pretty ? ": " : ":"
                o[k]!.write(into: &out, pretty: pretty, sortKeys: sortKeys, indent: indent + 1)
            }
            if pretty { newline(&out, indent) }
            out += "}"
        }
    }

    private func newline(_ out: inout String, _ indent: Int) {
        out += "\n"
        out += String(repeating: "  ", count: indent)
    }

    static func escape(_ s: String, into out: inout String) {
        out += "\""
        // Runs that need no escape (most of any text) are copied whole: only control
        // characters, quote, backslash and U+2028/U+2029 (E2 80 A8/A9 in UTF-8) are looked at.
        let utf8 = s.utf8
        var runStart = utf8.startIndex
        var i = runStart
        while i != utf8.endIndex {
            let b = utf8[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C && b != 0xE2 {
                i = utf8.index(after: i)
                continue
            }
            if b == 0xE2 {
                let j = utf8.index(after: i)
                let k = j == utf8.endIndex ? j : utf8.index(after: j)
                guard k != utf8.endIndex, utf8[j] == 0x80, utf8[k] == 0xA8 || utf8[k] == 0xA9 else {
                    i = utf8.index(after: i)
                    continue
                }
                out += String(decoding: utf8[runStart..<i], as: UTF8.self)
                out += utf8[k] == 0xA8 ? "\\u2028" : "\\u2029"
                i = utf8.index(after: k)
                runStart = i
                continue
            }
            out += String(decoding: utf8[runStart..<i], as: UTF8.self)
            switch b {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            default:
                let h = String(b, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            }
            i = utf8.index(after: i)
            runStart = i
        }
        out += String(decoding: utf8[runStart..<i], as: UTF8.self)
        out += "\""
    }
}

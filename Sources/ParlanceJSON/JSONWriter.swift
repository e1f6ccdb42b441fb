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
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if u.value < 0x20 || u.value == 0x2028 || u.value == 0x2029 {
                    let h = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}

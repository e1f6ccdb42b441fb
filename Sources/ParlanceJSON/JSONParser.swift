/// A strict RFC 8259 parser producing `JSONValue` with object key order kept.
/// Rejects invalid UTF-8, trailing data, and nesting deeper than `maxDepth`.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public let offset: Int
    public let message: String
    public var description: String { "\(message) at byte \(offset)" }
}

public enum JSONParser {
    public static let maxDepth = 256

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let array = Array(bytes)
        var p = Parser(b: array)
        p.skipWS()
        let v = try p.value(depth: 0)
        p.skipWS()
        if p.i != array.count { throw p.err("unexpected data after the JSON value") }
        return v
    }
}

private struct Parser {
    let b: [UInt8]
    var i = 0

    func err(_ m: String) -> JSONParseError { JSONParseError(offset: i, message: m) }

    mutating func skipWS() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < JSONParser.maxDepth else { throw err("JSON nested deeper than \(JSONParser.maxDepth) levels") }
        guard i < b.count else { throw err("unexpected end of JSON") }
        switch b[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw err("unexpected character '\(Unicode.Scalar(b[i]))'")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { throw err("unexpected end of JSON") }
        let ok = word.withUTF8Buffer { w in (0..<n).allSatisfy { b[i + $0] == w[$0] } }
        guard ok else { throw err("invalid literal") }
        i += n
    }

    mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        i += 1
        var o = JSONObject()
        skipWS()
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
        while true {
            skipWS()
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw err("expected a string key") }
            let k = try string()
            skipWS()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { throw err("expected ':' after key") }
            i += 1
            skipWS()
            o[k] = try value(depth: depth + 1)
            skipWS()
            guard i < b.count else { throw err("unexpected end of JSON in object") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
            throw err("expected ',' or '}' in object")
        }
    }

    mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        i += 1
        var a: [JSONValue] = []
        skipWS()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
        while true {
            skipWS()
            a.append(try value(depth: depth + 1))
            skipWS()
            guard i < b.count else { throw err("unexpected end of JSON in array") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
            throw err("expected ',' or ']' in array")
        }
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= b.count else { throw err("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw err("invalid hex digit in \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    mutating func string() throws(JSONParseError) -> String {
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < b.count, b[i] != UInt8(ascii: "\""), b[i] != UInt8(ascii: "\\"), b[i] >= 0x20 { i += 1 }
        if i < b.count, b[i] == UInt8(ascii: "\"") {
            let s = try utf8(start..<i)
            i += 1
            return s
        }
        var out: [UInt8] = Array(b[start..<i])
        while true {
            guard i < b.count else { throw err("unterminated string") }
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c < 0x20 { throw err("unescaped control character in string") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < b.count else { throw err("unterminated escape") }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var cp = try hex4()
                if (0xD800...0xDBFF).contains(cp) {
                    guard i + 6 <= b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                        throw err("unpaired surrogate in \\u escape")
                    }
                    i += 2
                    let lo = try hex4()
                    guard (0xDC00...0xDFFF).contains(lo) else { throw err("invalid low surrogate") }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(cp) {
                    throw err("unpaired surrogate in \\u escape")
                }
                out.append(contentsOf: String(Character(Unicode.Scalar(cp)!)).utf8)
            default: throw err("invalid escape '\\\(Unicode.Scalar(e))'")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw err("invalid UTF-8 in string") }
        return s
    }

    func utf8(_ r: Range<Int>) throws(JSONParseError) -> String {
        guard let s = String(validating: b[r], as: UTF8.self) else {
            throw JSONParseError(offset: r.lowerBound, message: "invalid UTF-8 in string")
        }
        return s
    }

    mutating func number() throws(JSONParseError) -> JSONValue {
        let start = i
        var isInt = true
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, isDigit(b[i]) else { throw err("invalid number") }
        if b[i] == UInt8(ascii: "0") { i += 1 } else { while i < b.count, isDigit(b[i]) { i += 1 } }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            isInt = false
            i += 1
            guard i < b.count, isDigit(b[i]) else { throw err("invalid number: digit expected after '.'") }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            isInt = false
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, isDigit(b[i]) else { throw err("invalid number: digit expected in exponent") }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        let text = String(decoding: b[start..<i], as: UTF8.self)
        if isInt, let v = Int(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw JSONParseError(offset: start, message: "number out of range") }
        return .double(d)
    }

    func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}

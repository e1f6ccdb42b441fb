import Foundation

/// The GBNF rules being written: named, deduplicated by body, emitted root first.
///
/// Shared primitives (defined on first use):
/// - `ws`: `| " " | "\n" [ \t]{0,8}` — at most one space, or one newline and 8 indentation
///   characters, between tokens. Never unbounded: small models loop on whitespace.
/// - `char`: one JSON string character — no raw control characters, `"` or `\`; escapes
///   `\" \\ \/ \b \f \n \r \t \uXXXX`.
/// - `integer`, `number`: unbounded numbers, 16 integer digits, no exponent, up to 16
///   fraction digits.
/// - `value-N`: any JSON value nested at most N levels, for `{}` / `true` schemas.
///
/// Repetitions `{m,n}` are only put on a rule reference or a character class, and `n` stays
/// below llama.cpp's `MAX_REPETITION_THRESHOLD` (2000), which rejects larger expansions.
struct GrammarRules {
    static let reserved: Set<String> = [
        "root", "ws", "char", "boolean", "null", "integer", "number", "string", "key", "value-0", "value-1",
        "value-2", "value-3",
    ]

    private(set) var order: [String] = []
    private var bodies: [String: String] = [:]
    private var byBody: [String: String] = [:]
    private var taken: Set<String> = GrammarRules.reserved
    private(set) var size = 0

    /// A rule with this body, reusing an identical one; named after `hint`.
    mutating func add(_ hint: String, _ body: String) -> String {
        if let name = byBody[body] { return name }
        var base = Self.sanitize(hint)
        if base.isEmpty { base = "r" }
        var name = base
        var n = 2
        while taken.contains(name) {
            name = "\(base)-\(n)"
            n += 1
        }
        taken.insert(name)
        byBody[body] = name
        put(name, body)
        return name
    }

    /// A reserved rule, defined once.
    mutating func define(_ name: String, _ body: @autoclosure () -> String) -> String {
        if bodies[name] == nil {
            let b = body()
            if byBody[b] == nil { byBody[b] = name }
            put(name, b)
        }
        return name
    }

    private mutating func put(_ name: String, _ body: String) {
        bodies[name] = body
        order.append(name)
        size += name.count + body.count + 6
    }

    /// Makes `top` the `root` rule: renamed when no other rule refers to it, else referenced.
    mutating func finish(top: String) {
        guard !Self.reserved.contains(top), let body = bodies[top],
              !bodies.contains(where: { $0.key != top && Self.references($0.value).contains(top) })
        else {
            _ = define("root", top)
            return
        }
        bodies[top] = nil
        byBody[body] = "root"
        order.removeAll { $0 == top }
        put("root", body)
    }

    /// The rule names a body refers to (outside literals, classes and repetition counts).
    static func references(_ body: String) -> Set<String> {
        var out: Set<String> = []
        var word = ""
        var quote: Character?
        var escaped = false
        for c in body {
            if let q = quote {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == q { quote = nil }
                continue
            }
            if c.isASCII && (c.isLetter || c.isNumber || c == "-") { word.append(c); continue }
            if !word.isEmpty { out.insert(word); word = "" }
            switch c {
            case "\"": quote = "\""
            case "[": quote = "]"
            case "{": quote = "}"
            default: break
            }
        }
        if !word.isEmpty { out.insert(word) }
        return out
    }

    var text: String {
        var out = ""
        for name in ["root"] + order.filter({ $0 != "root" }) {
            guard let body = bodies[name] else { continue }
            out += "\(name) ::= \(body)\n"
        }
        return out
    }

    var count: Int { order.count }

    /// `[a-zA-Z0-9-]+`, at most 40 characters.
    static func sanitize(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            let ok = (u >= "a" && u <= "z") || (u >= "A" && u <= "Z") || (u >= "0" && u <= "9")
            if ok { out.unicodeScalars.append(u) } else if !out.isEmpty && !out.hasSuffix("-") { out += "-" }
            if out.count >= 40 { break }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return out
    }

    /// A GBNF string literal.
    static func literal(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7F {
                    let h = String(u.value, radix: 16, uppercase: true)
                    out += "\\x" + (h.count < 2 ? "0" + h : h)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    // MARK: Primitives

    /// No whitespace at all in compact grammars (tool calls: fewer tokens, one way to write them).
    var compact = false

    mutating func ws() -> String { compact ? "" : define("ws", "| \" \" | \"\\n\" [ \\t]{0,8}") }
    mutating func null() -> String { define("null", "\"null\"") }
    mutating func boolean() -> String { define("boolean", "\"true\" | \"false\"") }
    mutating func char() -> String {
        define("char", "[^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})")
    }
    mutating func integer() -> String { define("integer", "\"-\"? (\"0\" | [1-9] [0-9]{0,15})") }
    mutating func number() -> String {
        define("number", "\"-\"? (\"0\" | [1-9] [0-9]{0,15}) (\".\" [0-9]{1,16})?")
    }

    /// A JSON string of `min...max` characters (each escape counts as one).
    mutating func string(_ hint: String, min: Int, max: Int) -> String {
        let c = char()
        if min == 0 && max == GrammarBuilder.defaultMaxStringLength {
            return define("string", "\"\\\"\" \(c){0,\(max)} \"\\\"\"")
        }
        let body = max == 0 ? "\"\\\"\\\"\"" : "\"\\\"\" " + NumberGrammar.repeated(c, min, max) + " \"\\\"\""
        return add(hint, body)
    }

    /// An object key: a string of at most `defaultMaxKeyLength` characters.
    mutating func key() -> String {
        let c = char()
        return define("key", "\"\\\"\" \(c){0,\(GrammarBuilder.defaultMaxKeyLength)} \"\\\"\"")
    }

    /// Any JSON value nested at most `depth` levels; containers hold at most
    /// `defaultMaxItems` entries.
    mutating func anyValue(depth: Int) -> String {
        let name = "value-\(depth)"
        if bodies[name] != nil { return name }
        let scalars = "\(string("string", min: 0, max: GrammarBuilder.defaultMaxStringLength)) | \(number()) | \(boolean()) | \(null())"
        guard depth > 0 else { return define(name, scalars) }
        let inner = anyValue(depth: depth - 1)
        let w = ws()
        let key = key()
        let kv = add("\(name)-kv", "\(key) \(w) \":\" \(w) \(inner)")
        let object = container(name + "-object", open: "{", close: "}", item: kv, max: GrammarBuilder.defaultMaxItems)
        let array = container(name + "-array", open: "[", close: "]", item: inner, max: GrammarBuilder.defaultMaxItems)
        return define(name, "\(scalars) | \(object) | \(array)")
    }

    /// `open ws (item ("," ws item){min-1,max-1} ws)? close`, written so that no repetition
    /// applies to a group.
    mutating func container(_ hint: String, open: String, close: String, item: String, min: Int = 0, max: Int) -> String {
        let w = ws()
        let o = Self.literal(open)
        let c = Self.literal(close)
        guard max > 0 else { return add(hint, "\(o) \(w) \(c)") }
        var seq = item
        if max > 1 {
            let more = add(hint + "-more", "\",\" \(w) \(item)")
            seq += " " + NumberGrammar.repeated(more, Swift.max(min - 1, 0), max - 1)
        }
        if min > 0 { return add(hint, "\(o) \(w) \(seq) \(w) \(c)") }
        let items = add(hint + "-items", "\(seq) \(w)")
        return add(hint, "\(o) \(w) \(items)? \(c)")
    }
}

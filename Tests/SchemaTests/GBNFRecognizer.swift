import Foundation

/// A test-only GBNF recognizer for the constructs `GrammarBuilder` emits: rules
/// `name ::= alternatives`, literals with escapes, character classes (negated, ranges,
/// escapes), rule references, groups, and `? * + {m} {m,} {m,n}`. It matches code points,
/// as llama.cpp does, by memoized search over the sets of end positions.
///
/// It also checks what llama.cpp's parser would reject: undefined or duplicate rules, and
/// repetitions of 2000 or more (`MAX_REPETITION_THRESHOLD`) or applied to a group.
struct GBNFGrammar {
    indirect enum Node {
        case literal([UInt32])
        case charClass(negated: Bool, ranges: [ClosedRange<UInt32>])
        case ref(String)
        case seq([Node])
        case alt([Node])
        case rep(Node, min: Int, max: Int?)
    }

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    private(set) var rules: [String: Node] = [:]
    private(set) var ruleOrder: [String] = []

    init(_ text: String) throws {
        var p = Parser(s: Array(text.unicodeScalars).map(\.value))
        while true {
            p.skip(newlines: true)
            if p.atEnd { break }
            let name = try p.name()
            p.skip(newlines: false)
            try p.expect("::=")
            p.skip(newlines: false)
            let body = try p.alternatives(nested: false)
            guard rules[name] == nil else { throw ParseError(description: "rule \(name) defined twice") }
            rules[name] = body
            ruleOrder.append(name)
            p.skip(newlines: false)
            if !p.atEnd {
                guard p.peek == 10 else { throw ParseError(description: "expected end of rule \(name) at \(p.i)") }
            }
        }
        guard rules["root"] != nil else { throw ParseError(description: "no root rule") }
        for (name, node) in rules {
            for r in Self.refs(node) where rules[r] == nil {
                throw ParseError(description: "rule \(name) references undefined rule \(r)")
            }
        }
    }

    static func refs(_ n: Node) -> [String] {
        switch n {
        case .literal, .charClass: return []
        case .ref(let r): return [r]
        case .seq(let xs), .alt(let xs): return xs.flatMap(refs)
        case .rep(let x, _, _): return refs(x)
        }
    }

    // MARK: Matching

    func accepts(_ text: String) -> Bool {
        let m = Matcher(grammar: self, input: Array(text.unicodeScalars).map(\.value))
        return m.match(.ref("root"), 0).contains(m.input.count)
    }

    private final class Matcher {
        let grammar: GBNFGrammar
        let input: [UInt32]
        var memo: [String: [Int: Set<Int>]] = [:]
        var active: Set<String> = []

        init(grammar: GBNFGrammar, input: [UInt32]) {
            self.grammar = grammar
            self.input = input
        }

        func match(_ n: Node, _ pos: Int) -> Set<Int> {
            switch n {
            case .literal(let cs):
                guard pos + cs.count <= input.count, Array(input[pos..<(pos + cs.count)]) == cs else { return [] }
                return [pos + cs.count]
            case .charClass(let negated, let ranges):
                guard pos < input.count else { return [] }
                let inClass = ranges.contains { $0.contains(input[pos]) }
                return inClass != negated ? [pos + 1] : []
            case .ref(let name):
                if let m = memo[name]?[pos] { return m }
                let key = "\(name)@\(pos)"
                guard !active.contains(key) else { return [] }  // left recursion: no match
                active.insert(key)
                let r = match(grammar.rules[name]!, pos)
                active.remove(key)
                memo[name, default: [:]][pos] = r
                return r
            case .seq(let xs):
                var cur: Set<Int> = [pos]
                for x in xs {
                    var next = Set<Int>()
                    for p in cur { next.formUnion(match(x, p)) }
                    cur = next
                    if cur.isEmpty { break }
                }
                return cur
            case .alt(let xs):
                var out = Set<Int>()
                for x in xs { out.formUnion(match(x, pos)) }
                return out
            case .rep(let x, let min, let max):
                var result: Set<Int> = min == 0 ? [pos] : []
                var cur: Set<Int> = [pos]
                var seen: Set<Int> = [pos]
                var i = 0
                while !cur.isEmpty {
                    i += 1
                    if let max, i > max { break }
                    var next = Set<Int>()
                    for p in cur { next.formUnion(match(x, p)) }
                    if i >= min { result.formUnion(next) }
                    if max == nil && i >= min {  // unbounded: stop once nothing new is reached
                        next.subtract(seen)
                        seen.formUnion(next)
                    }
                    cur = next
                }
                return result
            }
        }
    }

    // MARK: Sampling

    /// A random sentence: alternatives uniformly, repetitions `min...min+3` (within max).
    /// Past `depth` rule expansions it prefers the first alternative, which is the
    /// shortest for the rules GrammarBuilder writes (scalars before containers).
    func sample<R: RandomNumberGenerator>(using rng: inout R, depth: Int = 40) -> String {
        var out = String.UnicodeScalarView()
        emit(.ref("root"), &out, &rng, depth)
        return String(out)
    }

    private static let candidates: [UInt32] = [
        0x61, 0x5A, 0x30, 0x39, 0x20, 0x22, 0x5C, 0x2F, 0x6E, 0x74, 0x75, 0x41, 0xE9, 0x4E2D, 0x1F600, 0x0A, 0x7F, 0x2D,
    ]

    private func emit<R: RandomNumberGenerator>(_ n: Node, _ out: inout String.UnicodeScalarView, _ rng: inout R, _ depth: Int) {
        switch n {
        case .literal(let cs): for c in cs { out.append(Unicode.Scalar(c)!) }
        case .charClass(let negated, let ranges):
            var pool = Self.candidates.filter { c in ranges.contains { $0.contains(c) } != negated }
            if !negated { pool += ranges.map(\.lowerBound) + ranges.map(\.upperBound) }
            out.append(Unicode.Scalar(pool.randomElement(using: &rng)!)!)
        case .ref(let name): emit(rules[name]!, &out, &rng, depth - 1)
        case .seq(let xs): for x in xs { emit(x, &out, &rng, depth) }
        case .alt(let xs): emit(depth > 0 ? xs.randomElement(using: &rng)! : xs[0], &out, &rng, depth)
        case .rep(let x, let min, let max):
            let hi = Swift.min(max ?? (min + 3), min + 3)
            let k = depth > 0 ? Int.random(in: min...hi, using: &rng) : min
            for _ in 0..<k { emit(x, &out, &rng, depth) }
        }
    }

    // MARK: Parsing

    private struct Parser {
        let s: [UInt32]
        var i = 0
        var atEnd: Bool { i >= s.count }
        var peek: UInt32? { i < s.count ? s[i] : nil }

        mutating func skip(newlines: Bool) {
            while let c = peek, c == 32 || c == 9 || (newlines && (c == 10 || c == 13)) { i += 1 }
        }

        mutating func expect(_ t: String) throws {
            for u in t.unicodeScalars {
                guard peek == u.value else { throw ParseError(description: "expected \(t) at \(i)") }
                i += 1
            }
        }

        static func isWord(_ c: UInt32) -> Bool {
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x2D
        }

        mutating func name() throws -> String {
            let start = i
            while let c = peek, Self.isWord(c) { i += 1 }
            guard i > start else { throw ParseError(description: "expected a rule name at \(i)") }
            return String(String.UnicodeScalarView(s[start..<i].map { Unicode.Scalar($0)! }))
        }

        mutating func alternatives(nested: Bool) throws -> Node {
            var alts = [try sequence(nested: nested)]
            while peek == 0x7C {  // |
                i += 1
                skip(newlines: true)
                alts.append(try sequence(nested: nested))
            }
            return alts.count == 1 ? alts[0] : .alt(alts)
        }

        mutating func sequence(nested: Bool) throws -> Node {
            var items: [Node] = []
            while let c = peek {
                var item: Node
                var isGroup = false
                if c == 0x22 {  // "
                    i += 1
                    var cs: [UInt32] = []
                    while peek != 0x22 {
                        guard !atEnd else { throw ParseError(description: "unterminated literal") }
                        cs.append(try char())
                    }
                    i += 1
                    item = .literal(cs)
                } else if c == 0x5B {  // [
                    i += 1
                    var negated = false
                    if peek == 0x5E { negated = true; i += 1 }
                    var ranges: [ClosedRange<UInt32>] = []
                    while peek != 0x5D {
                        guard !atEnd else { throw ParseError(description: "unterminated class") }
                        let lo = try char()
                        if peek == 0x2D, i + 1 < s.count, s[i + 1] != 0x5D {
                            i += 1
                            let hi = try char()
                            guard lo <= hi else { throw ParseError(description: "bad range at \(i)") }
                            ranges.append(lo...hi)
                        } else {
                            ranges.append(lo...lo)
                        }
                    }
                    i += 1
                    item = .charClass(negated: negated, ranges: ranges)
                } else if c == 0x28 {  // (
                    i += 1
                    skip(newlines: true)
                    item = try alternatives(nested: true)
                    skip(newlines: true)
                    try expect(")")
                    isGroup = true
                } else if Self.isWord(c) {
                    item = .ref(try name())
                } else {
                    break
                }
                skip(newlines: nested)
                while let q = peek, q == 0x3F || q == 0x2A || q == 0x2B || q == 0x7B {  // ? * + {
                    i += 1
                    switch q {
                    case 0x3F: item = .rep(item, min: 0, max: 1)
                    case 0x2A: item = .rep(item, min: 0, max: nil)
                    case 0x2B: item = .rep(item, min: 1, max: nil)
                    default:
                        let m = try int()
                        var mx: Int? = m
                        if peek == 0x2C {
                            i += 1
                            mx = peek == 0x7D ? nil : try int()
                        }
                        try expect("}")
                        guard (mx ?? m) < 2000 else { throw ParseError(description: "repetition of 2000 or more") }
                        guard !isGroup || (mx ?? m) <= 1 else { throw ParseError(description: "{m,n} on a group") }
                        item = .rep(item, min: m, max: mx)
                    }
                    skip(newlines: nested)
                }
                items.append(item)
            }
            return items.count == 1 ? items[0] : .seq(items)
        }

        mutating func int() throws -> Int {
            let start = i
            while let c = peek, c >= 0x30 && c <= 0x39 { i += 1 }
            guard i > start, let n = Int(String(String.UnicodeScalarView(s[start..<i].map { Unicode.Scalar($0)! }))) else {
                throw ParseError(description: "expected an integer at \(i)")
            }
            return n
        }

        mutating func hex(_ n: Int) throws -> UInt32 {
            guard i + n <= s.count else { throw ParseError(description: "short hex escape") }
            var v: UInt32 = 0
            for _ in 0..<n {
                guard let d = Int(String(Unicode.Scalar(s[i])!), radix: 16) else { throw ParseError(description: "bad hex at \(i)") }
                v = v * 16 + UInt32(d)
                i += 1
            }
            return v
        }

        mutating func char() throws -> UInt32 {
            let c = s[i]
            i += 1
            guard c == 0x5C else { return c }
            guard let e = peek else { throw ParseError(description: "dangling escape") }
            i += 1
            switch e {
            case 0x78: return try hex(2)  // x
            case 0x75: return try hex(4)  // u
            case 0x55: return try hex(8)  // U
            case 0x74: return 9
            case 0x72: return 13
            case 0x6E: return 10
            case 0x5C, 0x22, 0x5B, 0x5D, 0x2D: return e
            default: throw ParseError(description: "unknown escape at \(i)")
            }
        }
    }
}

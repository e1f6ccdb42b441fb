import Foundation

/// GBNF for bounded integers and numbers.
///
/// Integers in `[lo, hi]` are matched exactly (digit-by-digit range construction), for any
/// span. Bounded numbers are written with at most `decimals` (4) fraction digits and no
/// exponent, and matched exactly within that precision: every value the grammar admits is in
/// range, and every 4-decimal value in range is admitted. A missing side is capped at
/// 16 integer digits. Unbounded numbers use `GrammarRules.number` (no exponent either).
enum NumberGrammar {
    static let decimals = 4
    static let unit: Int128 = 10_000
    /// The largest magnitude for a missing bound: 16 nines.
    static let cap: Int128 = 9_999_999_999_999_999
    /// Bounds beyond ±this are clamped (keeps every integer part within `Int`).
    static let clamp: Int128 = 1_000_000_000_000_000_000

    // MARK: Bounds

    /// `x · 10^decimals`, rounded down and up (exact for the decimal a Double prints as).
    static func scaled(_ x: Double, decimals: Int) -> (floor: Int128, ceil: Int128) {
        let limit = 1e18
        let clamped = Swift.max(Swift.min(x, limit), -limit)
        let text = String(format: "%.6f", Swift.abs(clamped))
        let parts = text.split(separator: ".")
        let whole = Int128(parts.first.map(String.init) ?? "0") ?? 0
        let fraction = parts.count > 1 ? Int128(String(parts[1])) ?? 0 : 0
        let v6 = whole * 1_000_000 + fraction
        var div: Int128 = 1
        for _ in 0..<(6 - decimals) { div *= 10 }
        let q = v6 / div
        let up = v6 % div == 0 ? q : q + 1
        return clamped < 0 ? (-up, -q) : (q, up)
    }

    /// The inclusive range `[lo, hi]`, in units of 10^-decimals, that `minimum`, `maximum`,
    /// `exclusiveMinimum` and `exclusiveMaximum` (number or draft-4 boolean) allow.
    static func bounds(_ o: [String: JSONNumberKeyword], decimals: Int) -> (lo: Int128?, hi: Int128?) {
        var lo: Int128?
        var hi: Int128?
        func raise(_ v: Int128) { lo = Swift.max(lo ?? v, v) }
        func lower(_ v: Int128) { hi = Swift.min(hi ?? v, v) }
        if case .number(let m)? = o["minimum"] {
            let s = scaled(m, decimals: decimals)
            raise(o["exclusiveMinimum"] == .flag(true) ? s.floor + 1 : s.ceil)
        }
        if case .number(let m)? = o["maximum"] {
            let s = scaled(m, decimals: decimals)
            lower(o["exclusiveMaximum"] == .flag(true) ? s.ceil - 1 : s.floor)
        }
        if case .number(let e)? = o["exclusiveMinimum"] { raise(scaled(e, decimals: decimals).floor + 1) }
        if case .number(let e)? = o["exclusiveMaximum"] { lower(scaled(e, decimals: decimals).ceil - 1) }
        let limit = clamp * pow10(decimals)
        return (lo.map { Swift.max($0, -limit) }, hi.map { Swift.min($0, limit) })
    }

    enum JSONNumberKeyword: Equatable {
        case number(Double)
        case flag(Bool)
    }

    // MARK: Integers

    /// Alternatives matching exactly the integers in `[lo, hi]` (lo ≤ hi, |bounds| ≤ 10^18).
    static func integer(_ lo: Int128, _ hi: Int128) -> [String] {
        var alts: [String] = []
        if lo < 0 {
            let m = nonNegative(Int(Swift.max(1, -hi)), Int(-lo))
            alts.append("\"-\" " + group(m))
        }
        if hi >= 0 { alts += nonNegative(Int(Swift.max(0, lo)), Int(hi)) }
        return alts
    }

    /// Alternatives matching exactly the decimal texts (≤ 4 fraction digits) in `[lo, hi]` units.
    static func number(_ lo: Int128, _ hi: Int128) -> [String] {
        var alts: [String] = []
        if lo < 0 {
            let m = fixed(hi >= 0 ? 1 : -hi, -lo)
            alts.append("\"-\" " + group(m))
        }
        if hi >= 0 { alts += fixed(Swift.max(0, lo), hi) }
        return alts
    }

    static func group(_ alts: [String]) -> String { alts.count == 1 ? alts[0] : "(" + alts.joined(separator: " | ") + ")" }

    /// `x{min,max}` in its shortest form ("" when max is 0).
    static func repeated(_ x: String, _ min: Int, _ max: Int) -> String {
        if max == 0 { return "" }
        if min == 1 && max == 1 { return x }
        if min == 0 && max == 1 { return x + "?" }
        if min == max { return "\(x){\(min)}" }
        return "\(x){\(min),\(max)}"
    }

    static func digitClass(_ lo: Int, _ hi: Int) -> String { lo == hi ? "[\(lo)]" : "[\(lo)-\(hi)]" }

    /// Alternatives for the non-negative integers in `[a, b]`, no leading zeros. Runs of whole
    /// digit-count blocks (10…99, 100…999…) merge into one `[1-9] [0-9]{m,n}`.
    static func nonNegative(_ a: Int, _ b: Int) -> [String] {
        var blocks: [(lo: Int, hi: Int, n: Int)] = []
        var lo = a
        let n = digits(b).count
        while digits(lo).count < n {
            let k = digits(lo).count
            blocks.append((lo, Int(pow10(k)) - 1, k))
            lo = Int(pow10(k))
        }
        blocks.append((lo, b, n))
        func whole(_ i: Int) -> Bool {
            let k = blocks[i].n
            return k >= 2 && Int128(blocks[i].lo) == pow10(k - 1) && Int128(blocks[i].hi) == pow10(k) - 1
        }
        var alts: [String] = []
        var i = 0
        while i < blocks.count {
            var j = i
            while whole(i) && j + 1 < blocks.count && whole(j + 1) { j += 1 }
            if j > i {
                alts.append("[1-9] [0-9]{\(blocks[i].n - 1),\(blocks[j].n - 1)}")
            } else {
                alts.append(sameLength(digits(blocks[i].lo), digits(blocks[i].hi)))
            }
            i = j + 1
        }
        return alts
    }

    static func digits(_ n: Int) -> [Int] { String(n).compactMap { $0.wholeNumberValue } }

    static func pow10(_ n: Int) -> Int128 {
        var p: Int128 = 1
        for _ in 0..<n { p *= 10 }
        return p
    }

    /// One sequence (alternations inside are parenthesized) for `[a, b]`, same digit count.
    static func sameLength(_ a: [Int], _ b: [Int]) -> String {
        var i = 0
        while i < a.count && a[i] == b[i] { i += 1 }
        let prefix = i > 0 ? "\"" + a[0..<i].map(String.init).joined() + "\"" : ""
        guard i < a.count else { return prefix }
        let r = a.count - i - 1
        var alts: [String] = []
        var midLo = a[i]
        var midHi = b[i]
        if !a[(i + 1)...].allSatisfy({ $0 == 0 }) {
            alts.append("[\(a[i])] " + sameLength(Array(a[(i + 1)...]), Array(repeating: 9, count: r)))
            midLo += 1
        }
        var tail: String?
        if !b[(i + 1)...].allSatisfy({ $0 == 9 }) {
            tail = "[\(b[i])] " + sameLength(Array(repeating: 0, count: r), Array(b[(i + 1)...]))
            midHi -= 1
        }
        if midLo <= midHi { alts.append(digitClass(midLo, midHi) + (r > 0 ? " " + repeated("[0-9]", r, r) : "")) }
        if let tail { alts.append(tail) }
        let body = group(alts)
        return prefix.isEmpty ? body : prefix + " " + body
    }

    // MARK: Fixed-point numbers

    /// Alternatives for non-negative decimals in `[a, b]` units (a ≤ b).
    static func fixed(_ a: Int128, _ b: Int128) -> [String] {
        let (ia, fa) = (Int(a / unit), Int(a % unit))
        let (ib, fb) = (Int(b / unit), Int(b % unit))
        if ia == ib { return ["\"\(ia)\"" + fraction(fa, fb)] }
        var alts = ["\"\(ia)\"" + fraction(fa, 9999)]
        if ia + 1 <= ib - 1 { alts.append(group(nonNegative(ia + 1, ib - 1)) + fraction(0, 9999)) }
        alts.append("\"\(ib)\"" + fraction(0, fb))
        return alts
    }

    /// " <optional fraction>" whose value, padded to 4 digits, is in `[lo, hi]` (0…9999).
    static func fraction(_ lo: Int, _ hi: Int) -> String {
        let l = [lo / 1000, lo / 100 % 10, lo / 10 % 10, lo % 10]
        let h = [hi / 1000, hi / 100 % 10, hi / 10 % 10, hi % 10]
        let lt = lo != 0
        let ht = hi != 9999
        if !lt && !ht { return " (\".\" [0-9]{1,4})?" }
        let d = fractionDigits(0, lt, ht, l, h)
        return lt ? " \".\" " + d : " (\".\" " + d + ")?"
    }

    /// One digit at `p` and what may follow. `lt`/`ht`: still equal to the low/high bound's
    /// prefix (normalized away once the rest of that bound is all 0s / all 9s).
    private static func fractionDigits(_ p: Int, _ lt: Bool, _ ht: Bool, _ l: [Int], _ h: [Int]) -> String {
        var groups: [(lo: Int, hi: Int, lt: Bool, ht: Bool)] = []
        for d in (lt ? l[p] : 0)...(ht ? h[p] : 9) {
            var nlt = lt && d == l[p]
            var nht = ht && d == h[p]
            if nlt && l[(p + 1)...].allSatisfy({ $0 == 0 }) { nlt = false }
            if nht && h[(p + 1)...].allSatisfy({ $0 == 9 }) { nht = false }
            if let last = groups.last, !last.lt, !last.ht, !nlt, !nht, last.hi == d - 1 {
                groups[groups.count - 1].hi = d
            } else {
                groups.append((d, d, nlt, nht))
            }
        }
        let alts = groups.map { g -> String in
            let next: String
            if p == 3 {
                next = ""
            } else if !g.lt && !g.ht {
                next = " " + repeated("[0-9]", 0, 3 - p)
            } else {
                let more = fractionDigits(p + 1, g.lt, g.ht, l, h)
                next = g.lt ? " " + more : " (" + more + ")?"
            }
            return digitClass(g.lo, g.hi) + next
        }
        return group(alts)
    }
}

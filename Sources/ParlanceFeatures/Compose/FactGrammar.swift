import Foundation

/// A GBNF grammar for a rewrite that keeps every fact by construction: free text with each
/// of the selection's facts, verbatim and in the selection's order, between (dates as a
/// whole: "3 March", not "3" then "March"). The free text is bounded: each gap may be about
/// twice the text between the two facts in the selection plus some slack, so a model cannot
/// wander off before the next fact (maxTokens bounds the whole).
public enum FactGrammar {
    /// The facts of `selection` as the grammar forces them, in order.
    public static func units(_ selection: String) -> [(text: String, range: NSRange)] {
        let ns = selection as NSString
        var out = FactRepair.dates(selection).map { (ns.substring(with: $0.range), $0.range) }
        for fact in Facts.extract(selection) {
            guard let r = FactRepair.factRange(fact, in: selection),
                  !out.contains(where: { NSIntersectionRange($0.1, r).length > 0 }) else { continue }
            out.append((fact.text, r))
        }
        return out.sorted { $0.1.location < $1.1.location }
    }

    /// The grammar, or nil when the selection has no facts to force.
    public static func gbnf(selection: String, maxGap: Int = 360) -> String? {
        let units = units(selection)
        guard !units.isEmpty else { return nil }
        let length = (selection as NSString).length
        var rules: [String] = []
        var root: [String] = []
        var previousEnd = 0
        for (i, u) in units.enumerated() {
            let between = max(0, u.range.location - previousEnd)
            rules.append("g\(i) ::= c{0,\(min(maxGap, 2 * between + 40))}")
            root += ["g\(i)", literal(u.text)]
            previousEnd = u.range.location + u.range.length
        }
        rules.append("tail ::= c{0,\(min(maxGap, 2 * max(0, length - previousEnd) + 40))}")
        root.append("tail")
        // Any character but control characters; a newline is allowed (letters have lines).
        rules.append(#"c ::= [^\x00-\x09\x0B-\x1F]"#)
        return (["root ::= " + root.joined(separator: " ")] + rules).joined(separator: "\n")
    }

    /// A GBNF string literal.
    public static func literal(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7F { out += String(format: "\\x%02X", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }
}

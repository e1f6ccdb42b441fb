import Foundation
import ParlanceSchema
import ParlanceProtocol

/// A GBNF grammar for a rewrite that keeps facts by construction: free text with each
/// required fact of the selection, verbatim and in the selection's order, between (a date
/// as a whole: "3 March", not "3" then "March"), optionally after an opening phrase (a
/// tone's marker: "I understand", "Perhaps"). The free text is bounded: each gap may be
/// about twice the text between the two facts in the selection plus some slack, and
/// ends with a space or an opening bracket, so a fact never sticks to the word before it; a
/// model cannot wander off before the next fact (maxTokens bounds the whole).
public enum FactGrammar {
    public struct Unit: Sendable {
        /// As the grammar writes it ("3 March", "£1,150").
        public var text: String
        public var range: NSRange
        /// The facts it carries (a date: its day and month).
        public var facts: [Facts.Fact]
        public var isDate: Bool
    }

    /// The facts of `selection` as the grammar forces them, in order.
    public static func units(_ selection: String) -> [Unit] {
        let ns = selection as NSString
        let facts = Facts.extract(selection).compactMap { f in FactRepair.factRange(f, in: selection).map { (f, $0) } }
        var out = FactRepair.dates(selection).map { d in
            Unit(text: ns.substring(with: d.range), range: d.range,
                 facts: facts.filter { NSIntersectionRange($0.1, d.range).length > 0 }.map(\.0), isDate: true)
        }
        for (fact, r) in facts where !out.contains(where: { NSIntersectionRange($0.range, r).length > 0 }) {
            out.append(Unit(text: fact.text, range: r, facts: [fact], isDate: false))
        }
        return out.sorted { $0.range.location < $1.range.location }
    }

    /// The units `text` lacks: a fact missing, or a date not written as the selection writes it.
    public static func missing(_ units: [Unit], in text: String) -> [Unit] {
        units.filter { u in
            !Facts.missing(u.facts, in: text).isEmpty || (u.isDate && !text.lowercased().contains(u.text.lowercased()))
        }
    }

    /// The grammar forcing `units` (default: all the selection's) after one of `openers`;
    /// nil when there is nothing to force.
    public static func gbnf(selection: String, units required: [Unit]? = nil, openers: [String] = [], maxGap: Int = 400) -> String? {
        let units = required ?? units(selection)
        guard !units.isEmpty || !openers.isEmpty else { return nil }
        let length = (selection as NSString).length
        var rules: [String] = []
        var root: [String] = []
        if !openers.isEmpty {
            // The phrase ends where a word does: "I wonder if" never runs on into "iforexample".
            rules.append("opener ::= (" + openers.map(GrammarBuilder.literal).joined(separator: " | ") + ") [ ,.!]")
            root.append("opener")
        }
        var previousEnd = 0
        for (i, u) in units.enumerated() {
            let between = max(0, u.range.location - previousEnd)
            // Empty only at the very start; otherwise free text ending in a space or an opening mark.
            let bound = min(maxGap, 2 * between + 60)
            rules.append("g\(i) ::= " + (i == 0 && openers.isEmpty ? "(c{0,\(bound)} s)?" : "c{0,\(bound)} s"))
            root += ["g\(i)", GrammarBuilder.literal(u.text)]
            previousEnd = u.range.location + u.range.length
        }
        rules.append("tail ::= c{0,\(min(maxGap, 2 * max(0, length - previousEnd) + 60))}")
        root.append("tail")
        // Any character but control characters; a newline is allowed (letters have lines).
        rules.append(#"c ::= [^\x00-\x09\x0B-\x1F]"#)
        rules.append(#"s ::= [ \n(]"#)
        return (["root ::= " + root.joined(separator: " ")] + rules).joined(separator: "\n")
    }

    /// Opening phrases that carry a tone's marker, for a retry whose tone was off (the tones
    /// a phrase can mark: empathetic and diplomatic).
    public static func openers(for tone: Tone) -> [String] {
        switch tone {
        case .empathetic: return ["I understand", "Thank you for", "I'm sorry", "I know this", "We appreciate"]
        case .diplomatic: return ["Perhaps", "Would it be possible", "I wonder if", "Could we", "It might"]
        default: return []
        }
    }
}

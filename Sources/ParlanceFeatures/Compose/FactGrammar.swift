import Foundation
import ParlanceSchema
import ParlanceProtocol

/// The facts of a selection as grammars force them (`FactInsertion` puts the missing ones
/// back), and the grammar of a variation that opens with a tone's marker phrase ("I
/// understand", "Perhaps").
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

    /// The grammar of a variation that opens with one of `openers` (a tone's marker
    /// phrase), then free text about twice the selection's length; nil without openers.
    public static func opening(selection: String, openers: [String], maxLength: Int = 400) -> String? {
        guard !openers.isEmpty else { return nil }
        let length = (selection as NSString).length
        return [
            // The phrase ends where a word does: "I wonder if" never runs on into "iforexample".
            "root ::= opener tail",
            "opener ::= (" + openers.map(GrammarBuilder.literal).joined(separator: " | ") + ") [ ,.!]",
            "tail ::= c{0,\(min(maxLength, 2 * length + 60))}",
            // Any character but control characters; a newline is allowed (letters have lines).
            #"c ::= [^\x00-\x09\x0B-\x1F]"#,
        ].joined(separator: "\n")
    }

    /// The opening phrases of a sentence added to mend a tone that was off (`FactInsertion`):
    /// `openers`, and for formal and casual phrases that move the formality score their way
    /// and carry casual's markers (a contraction and "you"). English only, as `ToneCheck`'s
    /// markers are.
    public static func mendingOpeners(for tone: Tone) -> [String] {
        switch tone {
        case .formal: return ["Please do not hesitate to", "Should you require any", "I would be grateful if", "Kindly"]
        case .casual: return ["Let me know if you've", "Hope you're", "Give me a shout if you've"]
        default: return openers(for: tone)
        }
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

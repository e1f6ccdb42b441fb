/// Numbers that cannot be invented. A rewrite may write the numbers of its source and no
/// others: while it generates, a token is never sampled when it would make the number the
/// output is writing into one that no number of the source begins with ("10:30" in a
/// rewrite of "the review moves to Friday", "8. 9. 10." counting down a list, "£1,500" for
/// "£1,150"). The model may still stop a number early ("1" of "14"); `FactGuard` finishes a
/// fact it has begun.
///
/// A number is a run of digits with single separators (`.`, `,`, `:`) between them, read
/// as its digits: "1,150" is "1150", "10:30" is "1030", "Q3" holds "3". Source and output
/// are read by the same rule. The separators are not held to the source's: banning "1150"
/// for "£1,150" lost the fact altogether more often than `FactRepair` loses it (it puts
/// "£1150" back as written).
///
/// A separator may be left out but not put where the source has none: "48213" cannot become
/// "4,82.13" (read as its digits, it would still be a prefix of the source's), "1,150" may be
/// "1150" or "1.150", never "11,50".
///
/// A number of two digits or more that only begins one of the source's cannot end there
/// either: after "11" of "1,150" or "48" of "48213" only the tokens that go on with the
/// number are admissible (the model wrote "£11" and "order #48" and moved on). One digit
/// is no distinctive start ("2 weeks" beside "21 October"): it may end, and an invented
/// number is then the verifier's to find.
public struct NumberGuard: Sendable {
    /// Every prefix of every number of the source, as written (the empty one included).
    let prefixes: Set<String>
    /// The source's numbers, whole: a number of two digits or more may end only as one of these.
    let whole: Set<String>
    /// The digits after which a number of the source has a separator and goes on ("1" of
    /// "1,150", "10" of "10:30"): the only places a separator may stand between two digits.
    let separable: Set<String>
    /// The model's tokens that hold a digit, with their text: the only ones the guard bans
    /// where a number may end.
    let digitTokens: [(token: Token, text: String)]
    /// The tokens of separators only (`.`, `,`, `:`), which may go on with a number.
    let separatorTokens: [(token: Token, text: String)]
    /// The vocabulary's size: where a number may not end, every token but those that go on with it is banned.
    let vocabularySize: Int
    /// The tokens banned where the output is not writing a number (most steps): computed once.
    let bannedAfterText: [Token]
    private var state = Reader()

    /// `source`: the text whose numbers the output may write (the selection, the refined
    /// text, the user's instructions). `digitTokens`: the model's tokens holding a digit,
    /// `separatorTokens` those of separators only, `vocabularySize` the model's
    /// (`Engine.numberGuard` keeps them); without the last two a started number may end anywhere.
    public init(source: String, digitTokens: [(token: Token, text: String)], separatorTokens: [(token: Token, text: String)] = [],
                vocabularySize: Int = 0) {
        // Every state the reader passes through is a prefix of the number it is reading.
        var r = Reader()
        var p: Set<String> = [""]
        var w: Set<String> = []
        var sep: Set<String> = []
        for c in source + " " {
            let before = r.run
            let pending = r.separatorPending
            r.read(c)
            p.insert(r.run)
            if pending, c.isASCIIDigit { sep.insert(before) }
            // A number ends where a character neither adds a digit to it nor stands as its separator.
            let goesOn = r.run == before + String(c) || (r.run == before && r.separatorPending)
            if !before.isEmpty, !goesOn { w.insert(before) }
        }
        prefixes = p
        whole = w
        separable = sep
        self.digitTokens = digitTokens
        self.separatorTokens = separatorTokens
        self.vocabularySize = vocabularySize
        bannedAfterText = Self.banned(digitTokens, from: Reader(), prefixes: p, separable: sep)
    }

    /// The tokens that would write a number no number of the source begins with, and where
    /// the output is partway through one of them, every token that would end it.
    public var banned: [Token] {
        if state == Reader() { return bannedAfterText }
        guard mustGoOn else { return Self.banned(digitTokens, from: state, prefixes: prefixes, separable: separable) }
        let goOn = Set((digitTokens + separatorTokens).compactMap {
            Self.continues($0.text, from: state, prefixes: prefixes, separable: separable) ? $0.token : nil
        })
        return (0..<Token(vocabularySize)).filter { !goOn.contains($0) }
    }

    /// The output is partway through a number of the source: two digits or more written,
    /// and not a whole number of the source.
    var mustGoOn: Bool {
        vocabularySize > 0 && state.run.count >= 2 && !whole.contains(state.run)
    }

    /// Whether `text`, read from `state`, goes on with the number: digits and separators
    /// only, every digit keeping it a prefix of the source's numbers, a separator only where
    /// the source has one, never two in a row.
    static func continues(_ text: String, from state: Reader, prefixes: Set<String>, separable: Set<String>) -> Bool {
        var r = state
        for c in text {
            // A separator only where the source has one: a digit must follow it here.
            guard c.isASCIIDigit || ((c == "." || c == "," || c == ":") && r.afterDigit && separable.contains(r.run)) else { return false }
            if !admits(c, after: &r, prefixes: prefixes, separable: separable) { return false }
        }
        return !text.isEmpty
    }

    static func banned(_ digitTokens: [(token: Token, text: String)], from state: Reader, prefixes: Set<String>, separable: Set<String>) -> [Token] {
        digitTokens.compactMap { candidate in
            var r = state
            for c in candidate.text {
                if !admits(c, after: &r, prefixes: prefixes, separable: separable) { return candidate.token }
            }
            return nil
        }
    }

    /// Reads `c`; false when it is a digit that makes the number one the source has no
    /// beginning of: digits no number of it begins with, or a separator where it has none.
    static func admits(_ c: Character, after r: inout Reader, prefixes: Set<String>, separable: Set<String>) -> Bool {
        let separated = r.separatorPending ? r.run : nil
        r.read(c)
        guard c.isASCIIDigit else { return true }
        return prefixes.contains(r.run) && separated.map(separable.contains) != false
    }

    /// Takes the text of the token emitted (sampled or forced).
    public mutating func observe(_ text: String) {
        for c in text { state.read(c) }
    }

    /// Where the output's last number stands, one character at a time.
    struct Reader: Sendable, Equatable {
        /// The digits of the number being written ("" after anything else).
        var run = ""
        /// The last character was a digit.
        var afterDigit = false
        /// A digit then a separator: a digit next continues the number.
        var separatorPending = false

        mutating func read(_ c: Character) {
            if c.isASCIIDigit {
                run = afterDigit || separatorPending ? run + String(c) : String(c)
                afterDigit = true
                separatorPending = false
            } else if afterDigit, c == "." || c == "," || c == ":" {
                afterDigit = false
                separatorPending = true
            } else {
                run = ""
                afterDigit = false
                separatorPending = false
            }
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}

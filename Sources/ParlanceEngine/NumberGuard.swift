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
public struct NumberGuard: Sendable {
    /// Every prefix of every number of the source, as written (the empty one included).
    let prefixes: Set<String>
    /// The model's tokens that hold a digit, with their text: the only ones the guard bans.
    let digitTokens: [(token: Token, text: String)]
    /// The tokens banned where the output is not writing a number (most steps): computed once.
    let bannedAfterText: [Token]
    private var state = Reader()

    /// `source`: the text whose numbers the output may write (the selection, the refined
    /// text, the user's instructions). `digitTokens`: the model's tokens holding a digit
    /// (`Engine.numberGuard` keeps them).
    public init(source: String, digitTokens: [(token: Token, text: String)]) {
        // Every state the reader passes through is a prefix of the number it is reading.
        var r = Reader()
        var p: Set<String> = [""]
        for c in source {
            r.read(c)
            p.insert(r.run)
        }
        prefixes = p
        self.digitTokens = digitTokens
        bannedAfterText = Self.banned(digitTokens, from: Reader(), prefixes: p)
    }

    /// The tokens that would write a number no number of the source begins with.
    public var banned: [Token] {
        state == Reader() ? bannedAfterText : Self.banned(digitTokens, from: state, prefixes: prefixes)
    }

    static func banned(_ digitTokens: [(token: Token, text: String)], from state: Reader, prefixes: Set<String>) -> [Token] {
        digitTokens.compactMap { candidate in
            var r = state
            for c in candidate.text {
                r.read(c)
                if c.isASCIIDigit, !prefixes.contains(r.run) { return candidate.token }
            }
            return nil
        }
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

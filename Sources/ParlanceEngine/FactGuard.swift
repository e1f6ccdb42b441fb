import Foundation

/// Facts that cannot be mangled once started. A request names facts of its source (an
/// amount, a number with its unit, a name, an identifier). While it generates, the guard
/// watches the tokens: when the last ones are a distinctive start of exactly one fact, the
/// fact's remaining tokens are forced: the engine emits them instead of sampling, as a
/// draft that is always taken, so they cost one batched step rather than one step each.
/// The model may still leave a fact out; it cannot write "1Z999AAA" for
/// "1Z999AA10123456784" or "£1.15" for "£1,150" once it has begun them.
///
/// A start is distinctive (`distinctive`) when it cannot as well begin something else:
/// four letters of a name ("Priy" of "Priyanka"); a number's first three digits, and then
/// only its further digits are forced ("100" never becomes "100kg", "3" never "3pm"); a
/// start that mixes digits with letters or signs and ends in one of them ("£1", "1Z").
///
/// Under a grammar, only as much of a fact's rest is forced as the grammar accepts from
/// where the output is (`limit`): a fact inside a tool-call step's free answer is finished,
/// a forced token never breaks the grammar. A request without facts has no guard and
/// generates exactly as before.
public struct FactGuard: Sendable {
    /// One way a fact is written: its tokens, and after how many of them the rest is forced.
    public struct Spelling: Sendable, Equatable {
        public var tokens: [Token]
        /// `triggers[k - 1]`: the first k tokens are a distinctive start.
        public var triggers: [Bool]
        /// Whether it may begin right after a letter or digit (a spelling with a leading
        /// space carries its own word boundary; one without needs a boundary before it).
        public var needsBoundary: Bool
    }

    let spellings: [Spelling]
    /// The tokens still to force, in order.
    private(set) var forced: [Token] = []
    /// The last tokens emitted, and whether each ended at a word boundary (its text's last
    /// character neither a letter nor a digit).
    private var recent: [(token: Token, boundary: Bool)] = []
    /// Facts whose rest was forced.
    private(set) var completions = 0

    /// `facts` as text; `tokenize` without special tokens, `piece` a token's text. Each fact is
    /// spelled with and without a leading space; a spelling with no distinctive start is left out.
    public init(facts: [String], tokenize: (String) -> [Token], piece: (Token) -> String) {
        var out: [Spelling] = []
        for fact in facts {
            for (text, needsBoundary) in [(" " + fact, false), (fact, true)] {
                let tokens = tokenize(text)
                guard tokens.count > 1 else { continue }
                var prefix = ""
                var triggers: [Bool] = []
                for (i, t) in tokens.enumerated() {
                    prefix += piece(t)
                    let rest = tokens[(i + 1)...].map(piece).joined()
                    triggers.append(i + 1 < tokens.count && Self.distinctive(prefix, then: rest))
                }
                guard triggers.contains(true) else { continue }
                let s = Spelling(tokens: tokens, triggers: triggers, needsBoundary: needsBoundary)
                if !out.contains(s) { out.append(s) }
            }
        }
        spellings = out
    }

    /// Whether `prefix` is a start of the fact that nothing else would begin with, so that
    /// `rest` may be forced after it.
    static func distinctive(_ prefix: String, then rest: String) -> Bool {
        let p = prefix.trimmingCharacters(in: .whitespaces)
        guard let last = p.last, let next = rest.first else { return false }
        if p.allSatisfy(\.isNumber) { return p.count >= 3 && next.isNumber }
        if p.allSatisfy(\.isLetter) { return p.count >= 4 }
        return p.count >= 2 && (last.isLetter || last.isNumber)
    }

    public var isEmpty: Bool { spellings.isEmpty }
    var longest: Int { spellings.map(\.tokens.count).max() ?? 0 }

    /// Forces only the first `count` tokens of the rest (what a grammar accepts of it).
    mutating func limit(to count: Int) {
        if count < forced.count { forced.removeLast(forced.count - count) }
    }

    /// The next token to emit instead of sampling, if a fact is being finished.
    mutating func next() -> Token? {
        forced.isEmpty ? nil : forced.removeFirst()
    }

    /// Records an emitted token (`wasForced`: it came from `next()`); when it completes the
    /// start of one fact, that fact's rest is forced from the next token on.
    mutating func observe(_ token: Token, text: String, wasForced: Bool) {
        recent.append((token, text.last.map { !($0.isLetter || $0.isNumber) } ?? false))
        if recent.count > longest + 1 { recent.removeFirst(recent.count - longest - 1) }
        guard !wasForced, forced.isEmpty else { return }
        var rest: [Token]? = nil
        for s in spellings {
            for k in stride(from: s.tokens.count, through: 1, by: -1) where k <= recent.count && (k == s.tokens.count || s.triggers[k - 1]) {
                guard recent.suffix(k).map(\.token) == Array(s.tokens.prefix(k)) else { continue }
                if s.needsBoundary, recent.count > k, !recent[recent.count - k - 1].boundary { continue }
                let r = Array(s.tokens.dropFirst(k))
                // Two facts that begin alike (or one fact already complete here): not forced.
                if let other = rest, other != r { return }
                rest = r
                break
            }
        }
        if let rest, !rest.isEmpty {
            forced = rest
            completions += 1
        }
    }
}

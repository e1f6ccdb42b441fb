/// Words that cannot be written. A request names words its output may not contain (a
/// rewrite's weekdays and months that its source does not say, the names of the prompt's
/// worked examples): each is spelled in the model's tokens as a word may stand in text
/// (after a space or not, capitalised or in lower case, and its plural), and the token that
/// would complete a spelling is never sampled. A one-token spelling is banned at every
/// step; a longer one only after the tokens before its last (the "bad words" of
/// sequence-to-sequence decoders). A word the model began in another way ("Sat" then
/// "urday" where the spelling is one token) is not caught: the verifier still reads the
/// text.
///
/// Forced tokens are not the guard's to refuse (`RepeatGuard`): when its ban leaves nothing
/// admissible the token is sampled without it.
public struct WordGuard: Sendable, Equatable {
    /// Spellings of one token: banned at every step.
    let single: [Token]
    /// Spellings of more tokens: the tokens before the last, and the last.
    let sequences: [Sequence]
    /// The last tokens emitted, as many as the longest prefix.
    private var recent: [Token] = []
    private let longest: Int

    struct Sequence: Sendable, Equatable {
        var prefix: [Token]
        var last: Token
    }

    /// `words` as text; `tokenize` without special tokens.
    public init(words: [String], tokenize: (String) -> [Token]) {
        var single = Set<Token>()
        var sequences: [Sequence] = []
        for word in words {
            for form in Self.forms(word) {
                for text in [" " + form, form] {
                    let tokens = tokenize(text)
                    guard let last = tokens.last else { continue }
                    if tokens.count == 1 {
                        single.insert(last)
                    } else {
                        let s = Sequence(prefix: Array(tokens.dropLast()), last: last)
                        if !sequences.contains(s) { sequences.append(s) }
                    }
                }
            }
        }
        self.single = single.sorted()
        self.sequences = sequences
        longest = sequences.map(\.prefix.count).max() ?? 0
    }

    /// A word as it may be written: as given, capitalised, in lower case, and each with a plural s.
    static func forms(_ word: String) -> [String] {
        let lower = word.lowercased()
        let capitalised = lower.prefix(1).uppercased() + lower.dropFirst()
        var out: [String] = []
        for w in [word, capitalised, lower] + [word, capitalised, lower].map({ $0 + "s" }) where !out.contains(w) { out.append(w) }
        return out
    }

    public var isEmpty: Bool { single.isEmpty && sequences.isEmpty }

    /// The tokens that would complete a banned word now.
    public var banned: [Token] {
        single + sequences.compactMap { s in recent.count >= s.prefix.count && recent.suffix(s.prefix.count).elementsEqual(s.prefix) ? s.last : nil }
    }

    /// Takes the token emitted (sampled or forced).
    public mutating func observe(_ token: Token) {
        guard longest > 0 else { return }
        recent.append(token)
        if recent.count > longest { recent.removeFirst(recent.count - longest) }
    }
}

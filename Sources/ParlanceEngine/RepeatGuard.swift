/// Output that cannot write a run of its own tokens twice: a token that would complete a
/// run of `run` tokens the output has already written is never sampled (its logit is set to
/// -inf before the sampler chooses), so a sentence written once cannot be written again
/// token for token. The same rule as the "no repeat n-gram" of sequence-to-sequence
/// decoders, applied where a loop is otherwise only stopped after it was paid for: free
/// text between a grammar's forced facts, whose gaps a small model fills with the same
/// sentence again.
///
/// Forced tokens (a grammar's only choice, a fact's forced rest) are not the guard's to
/// refuse: when its ban leaves nothing admissible the token is sampled without it.
public struct RepeatGuard: Sendable, Equatable {
    /// The length of a run that may not be written twice, in tokens.
    public let run: Int
    /// The output so far.
    private var tokens: [Token] = []
    /// For each run of `run - 1` tokens the output holds, the tokens that followed it.
    private var followers: [[Token]: Set<Token>] = [:]

    /// Runs shorter than this are words and phrases a text repeats on purpose.
    public static let shortest = 4

    public init(run: Int) {
        self.run = max(Self.shortest, run)
    }

    /// The tokens that would complete a run the output already holds.
    public var banned: [Token] {
        guard tokens.count >= run - 1 else { return [] }
        return followers[Array(tokens.suffix(run - 1))].map { $0.sorted() } ?? []
    }

    /// Takes the token emitted (sampled or forced).
    public mutating func observe(_ token: Token) {
        tokens.append(token)
        guard tokens.count >= run else { return }
        followers[Array(tokens[(tokens.count - run)..<(tokens.count - 1)]), default: []].insert(token)
    }
}

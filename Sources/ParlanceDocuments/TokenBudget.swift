/// Default token budgets per operation (input = transcript tokens per call, output = tokens
/// to generate), from the product seed's table, and their scaling to smaller contexts.
public enum TokenBudget: String, Sendable, Codable, CaseIterable {
    case summary, condensedSummary, tags, entities, highlights, qa

    public struct Limits: Sendable, Codable, Hashable {
        public var input: Int
        public var output: Int
        public var total: Int { input + output }

        public init(input: Int, output: Int) {
            self.input = input
            self.output = output
        }
    }

    /// The seed's table: summary 3000/1000, condensed summary 2000/500, tags 2000/300,
    /// entities 2000/500, highlights 3000/800, Q&A 3000/500.
    public var limits: Limits {
        switch self {
        case .summary: Limits(input: 3000, output: 1000)
        case .condensedSummary: Limits(input: 2000, output: 500)
        case .tags: Limits(input: 2000, output: 300)
        case .entities: Limits(input: 2000, output: 500)
        case .highlights: Limits(input: 3000, output: 800)
        case .qa: Limits(input: 3000, output: 500)
        }
    }

    public var input: Int { limits.input }
    public var output: Int { limits.output }

    /// Tokens kept free for the system prompt, chat template and instructions.
    public static func overhead(forContext n: Int) -> Int { min(512, max(0, n) / 8) }

    /// The limits unchanged when `input + output + overhead` fits in a context of `n` tokens;
    /// otherwise both scaled down by the same factor to fit (each at least 1).
    public func scaled(toContext n: Int) -> Limits {
        let l = limits
        let available = max(2, max(0, n) - TokenBudget.overhead(forContext: n))
        guard l.total > available else { return l }
        let output = max(1, l.output * available / l.total)
        let input = max(1, min(available - output, l.input * available / l.total))
        return Limits(input: input, output: output)
    }
}

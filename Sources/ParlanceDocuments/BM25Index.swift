import Foundation

/// Okapi BM25 over a fixed set of documents (e.g. segment or chunk texts), with an inverted
/// index so a search touches only documents that share a term with the query.
public struct BM25Index: Sendable {
    public let k1: Double
    public let b: Double
    public let count: Int
    private let lengths: [Int]
    private let averageLength: Double
    /// term → (document, term frequency) postings.
    private let postings: [String: [(doc: Int, tf: Int)]]

    public init(documents: [String], k1: Double = 1.2, b: Double = 0.75) {
        self.k1 = k1.isFinite ? max(0, k1) : 1.2
        self.b = b.isFinite ? min(1, max(0, b)) : 0.75
        var lengths: [Int] = []
        var postings: [String: [(doc: Int, tf: Int)]] = [:]
        for (d, text) in documents.enumerated() {
            let terms = Tokenizer.terms(text)
            lengths.append(terms.count)
            var tf: [String: Int] = [:]
            for t in terms { tf[t, default: 0] += 1 }
            for (t, n) in tf { postings[t, default: []].append((d, n)) }
        }
        self.count = documents.count
        self.lengths = lengths
        self.averageLength = documents.isEmpty ? 0 : Double(lengths.reduce(0, +)) / Double(documents.count)
        self.postings = postings
    }

    /// The terms a text is indexed and searched by: folded words, stopwords out, light
    /// stemming, irregular forms and demonyms joined to one term (ran → run, Danish → denmark).
    public static func terms(_ text: String) -> [String] { Tokenizer.terms(text) }

    /// The best `limit` documents by score, best first (ties by index); only positive scores,
    /// so a query whose terms appear nowhere returns [].
    public func search(_ query: String, limit: Int) -> [(index: Int, score: Double)] {
        guard limit > 0, count > 0 else { return [] }
        var scores: [Int: Double] = [:]
        let n = Double(count)
        for term in Set(Tokenizer.terms(query)) {
            guard let list = postings[term] else { continue }
            let df = Double(list.count)
            let idf = log(1 + (n - df + 0.5) / (df + 0.5))
            for (doc, tf) in list {
                let f = Double(tf)
                let norm = averageLength > 0 ? Double(lengths[doc]) / averageLength : 1
                let score = idf * f * (k1 + 1) / (f + k1 * (1 - b + b * norm))
                scores[doc, default: 0] += score
            }
        }
        return scores.filter { $0.value > 0 }
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(limit)
            .map { (index: $0.key, score: $0.value) }
    }
}

import Foundation
import ParlanceDocuments
import ParlanceEngine

/// Retrieval for ask/stream: Okapi BM25 over the segments (speaker + text), the best
/// segments widened by their neighbours, packed into a token budget in transcript order.
/// Over several documents (`AskDocuments`) one index ranks all of their segments, and a
/// segment's neighbours are those of its own document.
/// A question whose content words mostly do not occur in the document is "not found".
enum Retrieval {
    struct Selection: Sendable {
        var segments: [Segment]
        var topScore: Double
        var coverage: Double
        var found: Bool
    }

    /// One index per document content, the last few kept (building one is linear in size).
    actor Indexes {
        static let shared = Indexes()
        private var items: [(hash: String, index: BM25Index)] = []
        func index(for input: AnalysisInput) -> BM25Index {
            if let i = items.firstIndex(where: { $0.hash == input.contentHash }) {
                let hit = items.remove(at: i)
                items.append(hit)
                return hit.index
            }
            let index = BM25Index(documents: input.transcript.segments.map { ($0.speaker.map { $0 + " " } ?? "") + $0.text })
            items.append((input.contentHash, index))
            if items.count > 4 { items.removeFirst() }
            return index
        }
    }

    /// Share of the query's content words (stopwords excluded, as BM25 sees them) that occur
    /// somewhere in the document.
    /// Below this share of the question's content words present in the document, the
    /// answer is "not found" with no model call (two in five: a question may paraphrase).
    static let minimumCoverage = 0.4

    static func coverage(_ query: String, index: BM25Index) -> Double {
        var seen = Set<String>()
        var informative = 0
        var present = 0
        for w in query.lowercased().split(whereSeparator: { !($0.isLetter || $0.isNumber) }) {
            let word = String(w)
            guard seen.insert(word).inserted else { continue }
            // A word BM25 keeps as a term of itself is a content word (not a stopword).
            guard !BM25Index(documents: [word]).search(word, limit: 1).isEmpty else { continue }
            informative += 1
            if !index.search(word, limit: 1).isEmpty { present += 1 }
        }
        return informative == 0 ? 0 : Double(present) / Double(informative)
    }

    /// The segments to show the model for `query`, within `budget` tokens, excluding ids
    /// already shown (a follow-up adds only new context).
    static func select(_ query: String, coverageQuery: String, input: AnalysisInput, excluding shown: Set<Int>, budget: Int,
                       tokenCount: (String) -> Int) async -> Selection {
        let index = await Indexes.shared.index(for: input)
        let hits = index.search(query, limit: 16)
        let cov = coverage(coverageQuery, index: index)
        let found = !hits.isEmpty && cov >= Retrieval.minimumCoverage
        guard found else { return Selection(segments: [], topScore: hits.first?.score ?? 0, coverage: cov, found: false) }
        let segs = input.transcript.segments
        var chosen = Set<Int>()
        var used = 0
        outer: for hit in hits {
            for k in [hit.index, hit.index - 1, hit.index + 1] where segs.indices.contains(k) {
                let s = segs[k]
                if k != hit.index, let docs = input.documents, docs.part(of: s.id)?.uri != docs.part(of: segs[hit.index].id)?.uri { continue }
                guard !chosen.contains(k), !shown.contains(s.id) else { continue }
                let cost = tokenCount(AnalysisInput.render([s])) + 1
                if used + cost > budget { break outer }
                used += cost
                chosen.insert(k)
            }
        }
        return Selection(segments: chosen.sorted().map { segs[$0] }, topScore: hits[0].score, coverage: cov, found: true)
    }

    /// Segments as prompt lines, with "…" between runs that are not consecutive; over
    /// several documents, under each one's title.
    static func render(_ segments: [Segment], of input: AnalysisInput) -> String {
        input.documents?.render(segments) ?? runs(segments)
    }

    /// Segments of one document as prompt lines, with "…" between runs that are not consecutive.
    static func runs(_ segments: [Segment]) -> String {
        var runs: [[Segment]] = []
        for s in segments {
            if let last = runs.last?.last, last.id + 1 == s.id { runs[runs.count - 1].append(s) } else { runs.append([s]) }
        }
        return runs.map { AnalysisInput.render($0) }.joined(separator: "\n…\n")
    }

    static func notFound(_ language: String) -> String {
        let messages = [
            "en": "Not found in the document.", "fr": "Introuvable dans le document.", "de": "Nicht im Dokument gefunden.",
            "es": "No se encuentra en el documento.", "it": "Non trovato nel documento.", "pt": "Não encontrado no documento.",
            "ja": "ドキュメントには見つかりません。", "ko": "문서에서 찾을 수 없습니다.", "zh": "文档中未找到。",
            "nb": "Ikke funnet i dokumentet.",
        ]
        return messages[String(language.split(separator: "-").first ?? "en")] ?? messages["en"]!
    }
}

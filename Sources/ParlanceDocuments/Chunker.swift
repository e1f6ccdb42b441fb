#if canImport(ParlanceHash)
import ParlanceHash
#endif

/// A run of consecutive segments (or a piece of one long segment) that fits a token budget.
public struct Chunk: Sendable, Codable, Hashable {
    /// 0-based position in the chunk list.
    public var index: Int
    /// Ids of the first and last segment the chunk covers. A piece of a split segment has
    /// that segment's id at both ends.
    public var segmentIds: ClosedRange<Int>
    public var start: Double?
    public var end: Double?
    /// Segment texts joined by "\n" (no ids, times or speakers; see `Chunker.promptText`).
    public var text: String
    /// `tokenCount(text)` as measured by the caller's counter; never above the budget unless
    /// a single character already is.
    public var tokenCount: Int
    /// SHA-256 of `text` (UTF-8), lowercase hex.
    public var contentHash: String

    public var firstSegment: Int { segmentIds.lowerBound }
    public var lastSegment: Int { segmentIds.upperBound }

    public init(index: Int, segmentIds: ClosedRange<Int>, start: Double?, end: Double?, text: String, tokenCount: Int) {
        self.index = index
        self.segmentIds = segmentIds
        self.start = start
        self.end = end
        self.text = text
        self.tokenCount = tokenCount
        self.contentHash = SHA256.hex(text)
    }
}

public enum Chunker {
    /// Packs whole segments greedily into chunks of at most `budget` tokens (a budget below 1
    /// is treated as 1). A segment larger than the budget is split on sentence boundaries,
    /// then on words, then (a single enormous word) on characters; its pieces keep its id
    /// and time range.
    public static func chunk(_ segments: [Segment], budget: Int, tokenCount: (String) -> Int) -> [Chunk] {
        let budget = max(1, budget)
        var chunks: [Chunk] = []
        for run in runs(segments.map(\.text), separator: "\n", budget: budget, tokenCount: tokenCount) {
            switch run {
            case .fits(let range, let text, let count):
                chunks.append(make(index: chunks.count, segments[range], text: text, tokenCount: count))
            case .oversized(let i):
                let s = segments[i]
                for (text, count) in split(s.text, level: 0, budget: budget, tokenCount: tokenCount) {
                    chunks.append(Chunk(index: chunks.count, segmentIds: s.id...s.id, start: s.start, end: s.end,
                                        text: text, tokenCount: count))
                }
            }
        }
        return chunks
    }

    private static func make(index: Int, _ group: ArraySlice<Segment>, text: String, tokenCount: Int) -> Chunk {
        let ids = group.map(\.id)
        let lo = ids.min() ?? 0, hi = ids.max() ?? 0
        return Chunk(index: index, segmentIds: lo...hi, start: group.compactMap(\.start).min(),
                     end: group.compactMap(\.end).max(), text: text, tokenCount: tokenCount)
    }

    enum Run {
        /// Consecutive units whose joined text measures within budget.
        case fits(Range<Int>, String, Int)
        /// One unit that alone is over budget.
        case oversized(Int)
    }

    /// Groups consecutive units into the longest runs whose joined text fits the budget.
    /// The sum of the units' own counts gives a first guess; the joined text is then measured
    /// and the run shrunk or grown by binary search (O(log n) measurements per run), so a
    /// run is never over budget even when the counter is not additive.
    static func runs(_ texts: [String], separator: String, budget: Int, tokenCount: (String) -> Int) -> [Run] {
        let counts = texts.map(tokenCount)
        var nextOversized = Array(repeating: texts.count, count: texts.count + 1)
        for k in stride(from: texts.count - 1, through: 0, by: -1) {
            nextOversized[k] = counts[k] > budget ? k : nextOversized[k + 1]
        }
        var out: [Run] = []
        var i = 0
        while i < texts.count {
            if counts[i] > budget {
                out.append(.oversized(i))
                i += 1
                continue
            }
            let limit = nextOversized[i]
            let start = i
            func measure(_ end: Int) -> (String, Int) {
                let text = texts[start..<end].joined(separator: separator)
                if separator.isEmpty {  // sentence pieces carry their own spacing
                    let t = Sentences.trimmed(text)
                    return (t, tokenCount(t))
                }
                return (text, end - start == 1 ? counts[start] : tokenCount(text))
            }
            var j = i
            var sum = 0
            while j < limit, sum + counts[j] <= budget {
                sum += counts[j]
                j += 1
            }
            // Invariant: `good` fits (measured as `best`); every end above `fail` is ruled out.
            var good = i + 1
            var best = measure(good)
            var fail = limit + 1
            let guess = measure(j)
            if guess.1 <= budget {
                good = j
                best = guess
            } else {
                fail = j
            }
            // Probe where the measured tokens-per-unit rate says the budget runs out, then
            // gallop outwards from the probe to bracket the last fitting end.
            let rate = Double(max(1, best.1)) / Double(good - i)
            var probe = min(fail - 1, i + max(1, Int(Double(budget) / rate)))
            var step = 1
            while probe > good, probe < fail {
                let m = measure(probe)
                if m.1 <= budget {
                    good = probe
                    best = m
                    probe = min(fail - 1, probe + step)
                } else {
                    fail = probe
                    probe = max(good, probe - step)
                }
                step *= 2
            }
            var lo = good + 1, hi = fail - 1
            while lo <= hi {
                let mid = lo + (hi - lo) / 2
                let m = measure(mid)
                if m.1 <= budget {
                    good = mid
                    best = m
                    lo = mid + 1
                } else {
                    hi = mid - 1
                }
            }
            out.append(.fits(i..<good, best.0, best.1))
            i = good
        }
        return out
    }

    /// Splits one over-budget text into sentences (level 0), then words (level 1), then
    /// characters, and packs the pieces back into within-budget texts.
    private static func split(_ text: String, level: Int, budget: Int, tokenCount: (String) -> Int) -> [(String, Int)] {
        if level >= 2 { return splitCharacters(text, budget: budget, tokenCount: tokenCount) }
        let units = level == 0 ? Sentences.split(text) : Sentences.words(text)
        if units.count <= 1, level == 1 { return splitCharacters(units.first ?? text, budget: budget, tokenCount: tokenCount) }
        var out: [(String, Int)] = []
        for run in runs(units, separator: level == 0 ? "" : " ", budget: budget, tokenCount: tokenCount) {
            switch run {
            case .fits(_, let t, let n): if !t.isEmpty { out.append((t, n)) }
            case .oversized(let k): out += split(units[k], level: level + 1, budget: budget, tokenCount: tokenCount)
            }
        }
        return out
    }

    /// Last resort for a single word over budget: the longest prefixes that fit, found by
    /// binary search (at least one character per piece, so this always terminates).
    private static func splitCharacters(_ word: String, budget: Int, tokenCount: (String) -> Int) -> [(String, Int)] {
        var out: [(String, Int)] = []
        var rest = Substring(word)
        while !rest.isEmpty {
            var lo = 1, hi = rest.count
            var best = 1
            while lo <= hi {
                let mid = lo + (hi - lo) / 2
                if tokenCount(String(rest.prefix(mid))) <= budget {
                    best = mid
                    lo = mid + 1
                } else {
                    hi = mid - 1
                }
            }
            let piece = String(rest.prefix(best))
            out.append((piece, tokenCount(piece)))
            rest = rest.dropFirst(best)
        }
        return out
    }
}

import Foundation

/// Speculative decoding drafted from the text itself (prompt lookup): a rewrite copies most
/// of its words from the selection, a refinement from the variation it refines, a quoted
/// answer from the transcript. The tokens that followed the last n-gram's latest earlier
/// occurrence are proposed as a draft; the engine verifies the draft in the step's one
/// `llama_decode` batch and keeps the prefix its sampler agrees with.
///
/// Engine-thread only (`NGramIndex`, `DraftPolicy` and `StepCost` public for their unit tests).

/// Drafting for the scheduler's steps: which generating requests draft and how far
/// (`plan`), each request's n-gram index, and how much of a decoded draft its sampler
/// keeps (`accept`). Owned by the scheduler, on its engine thread.
struct Drafter {
    /// Logits rows reserved for drafted tokens in one batch (0: never draft).
    let draftRows: Int
    /// Tokens in one batch (`--batch`): drafts share it with the step's other tokens.
    let batchSize: Int
    /// Whether a request that does not say (`GenerationRequest.speculative`) drafts (when it copies text).
    let speculative: Bool
    /// What a decode step costs by its size, for deciding how much to draft.
    var stepCost = StepCost()

    init(draftRows: Int, batchSize: Int, speculative: Bool) {
        self.draftRows = draftRows
        self.batchSize = batchSize
        self.speculative = speculative
    }

    /// Chooses this step's drafts: for each generating request that drafts, the tokens
    /// that followed its last n-gram in its own prompt and output or in its group's
    /// outputs, cut where its grammar would reject one, as long as the step's cost model
    /// expects them to pay for themselves. Requests whose drafts fare best go first.
    /// `active` holds every running request (a group's siblings among them).
    func plan(_ generating: [Job], active: [Job]) {
        // Within the logits rows reserved for drafts and the batch's room (`--batch` may be small).
        var rows = min(draftRows, batchSize - generating.count)
        var tokens = generating.count
        var yield = Double(generating.count)
        // A fact's forced rest goes first: every one of its tokens is taken. (A deterministic
        // request takes it a token a step, as it would have sampled: its batches keep their shape.)
        var forcing: Set<ObjectIdentifier> = []
        for j in generating where !j.request.deterministic && rows > 0 {
            guard let rest = j.facts?.forced, !rest.isEmpty else { continue }
            let k = min(rest.count, rows, j.request.maxTokens - j.generated.count)
            guard k > 0 else { continue }
            j.draft = Array(rest.prefix(k))
            j.draftIsForced = true
            forcing.insert(ObjectIdentifier(j))
            rows -= k
            tokens += k
            yield += Double(k)
        }
        let drafting = generating.filter { j in
            if forcing.contains(ObjectIdentifier(j)) { return false }
            j.draft = []
            j.draftIsForced = false
            // A deterministic request never drafts: llama.cpp's kernels are not bit-stable across
            // batch shapes, so verifying drafts can change its text (seen with f16 keys: a
            // deterministic refine verified with drafts ended differently).
            // A string's close that may yet be taken back is decoded alone (`SpillGuard`).
            return j.tentative == nil && !j.request.deterministic && (j.request.speculative ?? (speculative && j.request.copiesText))
                && j.policy.allows(generated: j.generated.count)
                && j.request.maxTokens - j.generated.count > 0
        }
        for j in drafting.sorted(by: { $0.policy.acceptance > $1.policy.acceptance }) where rows > 0 {
            guard let sampler = j.sampler else { continue }
            let index = Drafter.indexed(j)
            let group = j.request.draftGroup
            let others = group == 0 ? [] : active.filter { $0 !== j && $0.request.draftGroup == group && !$0.generated.isEmpty }
                .map { (index: Drafter.indexed($0), from: $0.request.prompt.count) }
            var d = index.draft(min(j.policy.length, rows, j.request.maxTokens - j.generated.count), others: others)
            if d.isEmpty { continue }
            d = Array(d.prefix(sampler.grammarPrefix(d)))
            let p = j.policy.acceptance
            // Asked for explicitly (`speculative: true`), a draft is verified whole; by
            // default, as far as the step cost model expects it to pay.
            let k = j.request.speculative == true ? d.count : stepCost.length(available: d.count, p: p, tokens: tokens, yield: yield)
            guard k > 0 else { continue }
            j.draft = Array(d.prefix(k))
            rows -= k
            tokens += k
            yield += (1...k).reduce(0.0) { $0 + pow(p, Double($1)) }
        }
    }

    /// The request's prompt and output so far, indexed for drafts (built on first use).
    private static func indexed(_ j: Job) -> NGramIndex {
        if let i = j.index { return i }
        var i = NGramIndex(j.request.prompt)
        for t in j.generated { i.append(t) }
        j.index = i
        return i
    }

    /// Adds a token the request emitted to its n-gram index (once it drafts, it has one).
    func emitted(_ tok: Token, by j: Job) {
        j.index?.append(tok)
    }

    /// Keeps what a decoded draft got right. The token after the job's pending token and
    /// after each draft token is sampled by `sample` (from the logits at that batch index,
    /// emitting it) exactly as without a draft (same logits, same sampler state, same
    /// random draws); a draft token stays while it is the token sampled. Leaves the job's
    /// draft empty and its pending token the one to decode next (nil once it has ended),
    /// records the outcome in its policy, and returns how many draft tokens were taken.
    func accept(_ j: Job, indices: [Int32], sample: (Int32) -> (Token?, ended: Bool)) -> Int {
        let draft = j.draft
        j.draft = []
        j.pending = nil
        var taken = 0
        for i in 0...draft.count {
            let (emitted, ended) = sample(indices[i])
            guard let tok = emitted else { break }
            let agrees = i < draft.count && tok == draft[i]
            if agrees { taken += 1 }
            if ended { break }
            if !agrees {
                j.pending = tok
                break
            }
        }
        if !draft.isEmpty && !j.draftIsForced { j.policy.record(drafted: draft.count, accepted: taken, generated: j.generated.count) }
        j.draftIsForced = false
        return taken
    }
}

/// Every n-gram of a token sequence (n = 4, 3, 2) and the position that followed its
/// latest occurrence. An n-gram is entered once the token after it is known, so the
/// sequence's own tail is never its own match.
public struct NGramIndex: Sendable {
    public static let sizes = [4, 3, 2]
    public private(set) var tokens: [Token] = []
    /// Per size (as in `sizes`): hash of n tokens → the position after them, latest first.
    private var tables: [[UInt64: Int32]] = Array(repeating: [:], count: NGramIndex.sizes.count)

    public init(_ tokens: [Token] = []) {
        self.tokens.reserveCapacity(tokens.count + 256)
        for t in tokens { append(t) }
    }

    public mutating func append(_ t: Token) {
        let p = tokens.count
        for (i, n) in NGramIndex.sizes.enumerated() where p >= n {
            tables[i][NGramIndex.hash(tokens[(p - n)..<p])] = Int32(p)
        }
        tokens.append(t)
    }

    static func hash(_ s: ArraySlice<Token>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for t in s { h = (h ^ UInt64(UInt32(bitPattern: t))) &* 0x0000_0100_0000_01b3 }
        return h
    }

    /// Where the continuation of `tail` (its last n tokens) starts here, for n from the
    /// longest size down; at or after `from` only. nil when no n-gram of the tail occurs.
    public func match(_ tail: ArraySlice<Token>, size: Int, from: Int = 0) -> Int? {
        guard let i = NGramIndex.sizes.firstIndex(of: size), tail.count >= size else { return nil }
        let gram = tail.suffix(size)
        guard let p = tables[i][NGramIndex.hash(gram)].map(Int.init), p >= from, p >= size,
              tokens[(p - size)..<p].elementsEqual(gram) else { return nil }
        return p
    }

    /// Up to `k` tokens that followed the tail's longest n-gram here, or in `others`
    /// (sibling sequences, read from their `from` position on: their own output, not the
    /// prompt they share with this one). This sequence's own text wins a tie.
    public func draft(_ k: Int, others: [(index: NGramIndex, from: Int)] = []) -> [Token] {
        guard k > 0 else { return [] }
        let tail = tokens[...]
        for n in NGramIndex.sizes {
            if let p = match(tail, size: n) { return Array(tokens[p..<min(p + k, tokens.count)]) }
            for o in others {
                if let p = o.index.match(tail, size: n, from: o.from) { return Array(o.index.tokens[p..<min(p + k, o.index.tokens.count)]) }
            }
        }
        return []
    }
}

/// How long a sequence's next draft may be, from how its drafts have fared: a draft taken
/// whole doubles the length (up to `maxLength`), one cut short shrinks it to what was
/// taken plus one. Three drafts in a row with nothing taken pause drafting (16, then 32
/// tokens); a sequence whose drafts keep failing (a third pause, or under a tenth of 32 or
/// more drafted tokens taken) stops drafting: free storytelling pays nothing for it.
public struct DraftPolicy: Sendable {
    public static let maxLength = 16
    public private(set) var length = 4
    public private(set) var drafted = 0
    public private(set) var accepted = 0
    /// Drafts cut short (a token after the last accepted one rejected).
    public private(set) var rejections = 0
    public private(set) var stopped = false
    private var misses = 0
    private var pauses = 0
    private var resumeAt = 0

    public init() {}

    /// Whether to draft now, `generated` tokens into the output.
    public func allows(generated: Int) -> Bool { !stopped && generated >= resumeAt }

    /// The chance that a drafted token is taken, given the ones before it were (a
    /// smoothed estimate: 1/2 before any evidence).
    public var acceptance: Double { (Double(accepted) + 1) / (Double(accepted + rejections) + 2) }

    public mutating func record(drafted d: Int, accepted a: Int, generated: Int) {
        guard d > 0 else { return }
        drafted += d
        accepted += a
        if a < d { rejections += 1 }
        length = a == d ? min(DraftPolicy.maxLength, length * 2) : max(2, a + 1)
        if a == 0 {
            misses += 1
            if misses >= 3 {
                misses = 0
                pauses += 1
                resumeAt = generated + (16 << (pauses - 1))
                if pauses >= 3 { stopped = true }
            }
        } else {
            misses = 0
        }
        if drafted >= 32, accepted * 10 < drafted { stopped = true }
    }
}

/// What a decode step costs, learned from the steps decoded: seconds ≈ fixed + perToken ×
/// tokens, fitted over small batches (generation steps). Drafts are added to a step only
/// while the tokens they are expected to yield outweigh the time they add, so a batch of
/// many generating sequences is not slowed by drafts for one of them.
///
/// Nothing is assumed before it is measured: until steps of two sizes have been timed, a
/// draft is verified only `probe` tokens long, which times a second size. (A prior share
/// per token was tried first: right for a GPU, far too cheap for a CPU, where a token in a
/// small batch costs most of a step, so early drafts slowed free text.)
public struct StepCost: Sendable {
    /// Moving average of decode seconds per batch size (1…64).
    private var seconds: [Double] = Array(repeating: 0, count: 65)
    /// The line through those averages, refitted when one changes.
    public private(set) var model: (fixed: Double, perToken: Double)?
    /// Draft tokens verified while the cost of a token is unknown.
    public static let probe = 2

    public init() {}

    public mutating func record(tokens: Int, seconds s: Double) {
        guard tokens >= 1, tokens <= 64, s > 0 else { return }
        seconds[tokens] = seconds[tokens] == 0 ? s : 0.8 * seconds[tokens] + 0.2 * s
        model = StepCost.fit(seconds)
    }

    /// Least squares over the measured sizes; nil before two sizes are measured.
    private static func fit(_ seconds: [Double]) -> (fixed: Double, perToken: Double)? {
        var n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        for (x, y) in seconds.enumerated() where y > 0 {
            let x = Double(x)
            n += 1; sx += x; sy += y; sxx += x * x; sxy += x * y
        }
        guard n >= 2 else { return nil }
        let mx = sx / n, my = sy / n
        let perToken = max(my * 0.005, (sxy - n * mx * my) / (sxx - n * mx * mx))
        return (max(0, my - perToken * mx), perToken)
    }

    /// How many of a draft's `available` tokens to verify in a step that already decodes
    /// `tokens` tokens yielding `yield` tokens: the length that most raises the step's
    /// expected tokens per second, given each drafted token's chance `p` of being taken
    /// (0 when no length raises it).
    public func length(available: Int, p: Double, tokens: Int, yield: Double) -> Int {
        guard available > 0 else { return 0 }
        guard let (a, b) = model else { return min(available, StepCost.probe) }
        let base = yield / (a + b * Double(tokens))
        var best = 0
        var bestRate = base
        var expected = 0.0
        var chance = 1.0
        for k in 1...available {
            chance *= p
            expected += chance
            let rate = (yield + expected) / (a + b * Double(tokens + k))
            if rate > bestRate * 1.0001 {
                bestRate = rate
                best = k
            }
        }
        return best
    }
}

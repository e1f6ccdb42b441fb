/// Admission by KV capacity. A waiting request starts only when the cells it may still
/// need (its prompt not already cached, plus `maxTokens`) fit beside what the running
/// requests may still need; otherwise it waits its turn, first come first served. Idle
/// cached prefixes are evicted before a decode, to make room that admission already
/// promised, never after a failed one.
///
/// A request whose prompt shares a prefix with one still being evaluated (four questions
/// on one document, sent together) follows it: it waits until that prefix is in the
/// leader's KV cache, then copies it (`llama_memory_seq_cp`, shared cells), so the
/// document is evaluated once.
extension Scheduler {
    /// Where an admitted request's cached prefix comes from.
    enum Source {
        case none
        case slot(Int)
        case disk(PrefixStore.Entry)
        case leader(Job)
    }

    struct Plan {
        var source: Source
        /// Prompt tokens the request will not evaluate itself.
        var reuse: Int
        /// Cells the request may still add (its prompt beyond `reuse`, plus `maxTokens`).
        var need: Int
        /// Cells now held only by idle sequences that the request would pin.
        var pinned: Int
    }

    /// A follower waits for at least this many more shared tokens than memory holds now.
    static let minimumShare = 32

    /// The cells a running request may still add to the cache.
    func remainingNeed(_ j: Job) -> Int {
        let prompt = j.request.prompt.count - max(j.nPast, j.follow?.upTo ?? 0)
        return max(0, prompt) + max(0, j.request.maxTokens - j.generated.count)
    }

    func admit() {
        var position = 0
        while let job = waiting.first {
            // A deterministic request runs alone: it waits for the running ones, and later
            // ones wait for it.
            if active.contains(where: { $0.request.deterministic }) { break }
            if job.request.deterministic {
                guard active.isEmpty else { break }
                waiting.removeFirst()
                startAlone(job)
                continue
            }
            guard active.count < config.maxActive, let plan = plan(for: job) else { break }
            guard fits(plan) else {
                if !active.isEmpty { break }
                // Alone it fits by construction (checked at submission), so this is a bug:
                // refuse it rather than wait for room that will never come.
                waiting.removeFirst()
                warn("KV cache accounting was wrong: a request of \(plan.need) cells did not fit an idle engine")
                settle(job, throwing: EngineError.exceededContextWindowSize(
                    promptTokens: job.request.prompt.count, maxTokens: job.request.maxTokens, contextSize: kv.capacity))
                continue
            }
            waiting.removeFirst()
            start(job, plan)
        }
        // Whoever still waits hears where it stands (once per change).
        for j in waiting {
            position += 1
            if j.queuePosition != position {
                j.queuePosition = position
                j.continuation.yield(.queued(position: position))
            }
        }
    }

    private func fits(_ plan: Plan) -> Bool {
        let committed = active.reduce(0) { $0 + remainingNeed($1) }
        return kv.heldByRunning + plan.pinned + committed + plan.need <= kv.capacity
    }

    /// Where the prompt's longest cached prefix is, without changing anything.
    func plan(for job: Job) -> Plan? {
        guard slots.contains(where: { $0.job == nil }) else { return nil }
        let prompt = job.request.prompt
        let cap = max(0, prompt.count - 1)  // the last prompt token is always evaluated: its logits start generation
        let best = longestCachedPrefix(of: prompt, upTo: cap)
        let inMemory = best?.lcp ?? 0
        var leader: (job: Job, lcp: Int)? = nil
        for j in active where j.inPrompt {
            let l = min(commonPrefix(j.request.prompt, prompt), cap)
            if l >= inMemory + Scheduler.minimumShare, l > (leader?.lcp ?? 0) { leader = (j, l) }
        }
        let maxTokens = job.request.maxTokens
        // A state file is restored whole before it is trimmed: it must fit beside the request.
        if let (entry, prefix) = store?.bestMatch(for: prompt, better: max(inMemory, leader?.lcp ?? 0)),
           entry.tokens.count + prompt.count - min(prefix, cap) + maxTokens <= kv.capacity {
            let reuse = min(prefix, cap)
            return Plan(source: .disk(entry), reuse: reuse, need: prompt.count - reuse + maxTokens, pinned: entry.tokens.count)
        }
        if let leader {
            return Plan(source: .leader(leader.job), reuse: leader.lcp, need: prompt.count - leader.lcp + maxTokens, pinned: 0)
        }
        guard let best else { return Plan(source: .none, reuse: 0, need: prompt.count + maxTokens, pinned: 0) }
        let pinned = slots[best.seq].job == nil ? best.lcp : 0
        return Plan(source: .slot(best.seq), reuse: best.lcp, need: prompt.count - best.lcp + maxTokens, pinned: pinned)
    }

    /// Starts a deterministic request the way a fresh engine would: every cached sequence
    /// retired (valuable ones saved to disk first), the cache cleared so its cells are laid
    /// out from the first one in position order, nothing reused.
    private func startAlone(_ job: Job) {
        for s in slots.indices where !slots[s].tokens.isEmpty { retire(s) }
        ctx.clear()
        let need = job.request.prompt.count + job.request.maxTokens
        start(job, Plan(source: .none, reuse: 0, need: need, pinned: 0))
    }

    /// Gives the job a sequence holding its planned prefix, and a sampler.
    private func start(_ job: Job, _ plan: Plan) {
        let (seq, reuse) = place(job, plan)
        slots[seq].job = job
        kv.setRunning(seq, true)
        slots[seq].priority = job.request.cachePriority
        job.seq = Int32(seq)
        job.nPast = reuse
        job.nCached = reuse
        job.admitted = .now
        if job.request.maxTokens > 0 {
            do {
                job.sampler = try LlamaSampler(model: model, options: job.request.sampling, seed: job.request.seed, grammar: job.request.grammar)
            } catch {
                release(job)
                settle(job, throwing: error)
                return
            }
        }
        active.append(job)
        job.continuation.yield(.prompt(evaluated: reuse, total: job.request.prompt.count, cached: reuse))
    }

    /// Fills an idle sequence with the planned prefix: in place when the source is idle
    /// and cheap to trim, else copied from a busy or valuable source, restored from disk,
    /// or (following a leader) left empty until the leader has evaluated it.
    private func place(_ job: Job, _ plan: Plan) -> (seq: Int, reuse: Int) {
        let idle = slots.indices.filter { slots[$0].job == nil }
        switch plan.source {
        case .disk(let entry):
            let target = leastValuable(idle)!
            retire(target)
            if makeFree(entry.tokens.count, keeping: [target]), let restored = store?.load(entry, into: Int32(target), ctx: ctx) {
                kv.append(target, restored.count)
                trim(target, to: plan.reuse)
                slots[target].tokens = Array(restored[..<plan.reuse])
                return (target, plan.reuse)
            }
            return (target, 0)
        case .leader(let leader):
            let target = leastValuable(idle)!
            retire(target)
            job.follow = (leader, plan.reuse)
            return (target, 0)
        case .slot(let src):
            let s = slots[src]
            if s.job == nil, s.tokens.count - plan.reuse <= 16 || s.priority == .normal {
                trim(src, to: plan.reuse)
                return (src, plan.reuse)
            }
            guard let target = leastValuable(idle.filter { $0 != src }) else {
                trim(src, to: plan.reuse)
                return (src, plan.reuse)
            }
            retire(target)
            copy(from: src, to: target, count: plan.reuse)
            return (target, plan.reuse)
        case .none:
            let target = leastValuable(idle)!
            retire(target)
            return (target, 0)
        }
    }

    /// A follower whose leader has evaluated the shared prefix (or is gone) copies what
    /// it can and goes on from there. True when it may evaluate its prompt now.
    func resolveFollower(_ j: Job) -> Bool {
        guard let (leader, upTo) = j.follow else { return true }
        if active.contains(where: { $0 === leader }), leader.nPast < upTo { return false }
        j.follow = nil
        // The leader's sequence, or any sequence holding the longest part of the prefix.
        if let best = longestCachedPrefix(of: j.request.prompt, upTo: upTo, excluding: Int(j.seq)) {
            copy(from: best.seq, to: Int(j.seq), count: best.lcp)
            j.nPast = best.lcp
            j.nCached = best.lcp
            j.continuation.yield(.prompt(evaluated: j.nPast, total: j.request.prompt.count, cached: j.nCached))
        }
        return true
    }

    /// The sequence whose KV cache holds the longest prefix of `prompt` (at most `upTo`
    /// tokens), and that length; nil when none holds any.
    func longestCachedPrefix(of prompt: [Token], upTo: Int, excluding: Int? = nil) -> (seq: Int, lcp: Int)? {
        var best: (seq: Int, lcp: Int)? = nil
        for (i, s) in slots.enumerated() where i != excluding && !s.tokens.isEmpty {
            let l = min(commonPrefix(s.tokens, prompt), upTo)
            if l > (best?.lcp ?? 0) { best = (i, l) }
        }
        return best
    }

    // MARK: cells

    func copy(from src: Int, to dst: Int, count n: Int) {
        ctx.copyTokens(from: Int32(src), to: Int32(dst), upTo: Int32(n))
        kv.copy(from: src, to: dst, count: n)
        slots[dst].tokens = Array(slots[src].tokens[..<n])
    }

    /// Keeps the first `n` tokens of a sequence.
    func trim(_ seq: Int, to n: Int) {
        ctx.removeTokens(seq: Int32(seq), from: Int32(n))
        kv.truncate(seq, from: n)
        if n < slots[seq].tokens.count { slots[seq].tokens.removeSubrange(n...) }
    }

    /// Empties an idle sequence, first saving a valuable one to the KV state store.
    func retire(_ seq: Int) {
        if slots[seq].priority > .normal { store?.save(seq: Int32(seq), tokens: slots[seq].tokens, ctx: ctx) }
        trim(seq, to: 0)
    }

    /// Evicts idle cached sequences, least valuable first, until `n` cells are free.
    /// False when even that is not enough.
    @discardableResult
    func makeFree(_ n: Int, keeping keep: Set<Int> = []) -> Bool {
        while kv.free < n {
            let candidates = slots.indices.filter { slots[$0].job == nil && !slots[$0].tokens.isEmpty && !keep.contains($0) }
            // Prefer a sequence whose eviction frees cells; one sharing all its cells is
            // evicted only when nothing else is left.
            guard let victim = leastValuable(candidates.filter { kv.freed(truncating: $0) > 0 }) ?? leastValuable(candidates) else {
                return false
            }
            retire(victim)
        }
        return true
    }

    /// Empty first, then lowest cache priority, then least recently used.
    func leastValuable(_ candidates: [Int]) -> Int? {
        candidates.min { a, b in
            let (sa, sb) = (slots[a], slots[b])
            if sa.tokens.isEmpty != sb.tokens.isEmpty { return sa.tokens.isEmpty }
            if sa.priority != sb.priority { return sa.priority < sb.priority }
            return sa.lastUsed < sb.lastUsed
        }
    }
}

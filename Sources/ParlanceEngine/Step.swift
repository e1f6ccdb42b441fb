import ParlanceJSON
import Foundation

/// One decode step: the batch composed (a token per generating sequence, its draft, and
/// prompt chunks), decoded in one `llama_decode`, and its results applied (tokens sampled
/// and streamed, drafts kept or cut, prompts advanced, requests finished).
extension Scheduler {
    private struct Entry {
        let job: Job
        let count: Int
        let logitsIndex: Int32?
        /// Batch indices of the job's drafted tokens, in order (they follow its pending token).
        var draftIndices: [Int32] = []
    }

    /// The fewest tokens of one job in a batch for a cancel of that job to abort the decode
    /// (a prompt chunk; a generated token with its draft is fewer).
    static let abortableTokens = 32

    /// Composes this step's batch, decodes it and applies its results.
    func step() {
        guard let entries = composeBatch(), decodeBatch(entries) else { return }
        applyResults(entries)
    }

    /// Fills the batch: one token per generating sequence, the drafts, then prompt chunks,
    /// with room made for them. Its entries, or nil when there is nothing to decode (or no
    /// room for the generating sequences: then the newest request has ended).
    private func composeBatch() -> [Entry]? {
        batch.clear()
        var entries: [Entry] = []
        // Generating sequences: one token each.
        for j in active where j.pending != nil {
            let idx = batch.add(j.pending!, pos: Int32(j.nPast), seq: j.seq, logits: true)
            entries.append(Entry(job: j, count: 1, logitsIndex: idx))
        }
        addDrafts(&entries)
        // Room for this step, made before the decode: idle cached prefixes go first.
        // Admission promised it; the prompt budget is capped by it all the same.
        let generating = batch.count
        addPromptChunks(&entries, generating: generating)
        if kv.free < generating {
            // Admission never lets this happen; if it does, end the newest request rather
            // than decode into a full cache.
            reportSlotFailure("\(generating) generating sequences need a cell each, \(kv.free) of \(kv.capacity) are free")
            return nil
        }
        guard !entries.isEmpty else { return nil }
        return entries
    }

    /// Drafts, verified in this same batch: positions a request was promised cells for
    /// (each draft fits in what its `maxTokens` has left). `entries` are the generating
    /// sequences' pending tokens; a job's draft follows its pending token.
    private func addDrafts(_ entries: inout [Entry]) {
        guard drafter.draftRows > 0, !entries.isEmpty else { return }
        drafter.plan(entries.map { $0.job }, active: active)
        let drafting = entries.reduce(0) { $0 + $1.job.draft.count }
        if drafting > 0, makeFree(entries.count + drafting) {
            for i in entries.indices {
                let j = entries[i].job
                for (k, t) in j.draft.enumerated() {
                    entries[i].draftIndices.append(batch.add(t, pos: Int32(j.nPast + 1 + k), seq: j.seq, logits: true))
                }
                entries[i] = Entry(job: j, count: 1 + j.draft.count, logitsIndex: entries[i].logitsIndex, draftIndices: entries[i].draftIndices)
            }
        } else {
            for e in entries { e.job.draft = [] }
        }
    }

    /// Prompt chunks, round-robin, so one long prompt never stalls the others. A
    /// follower starts once its leader has evaluated the prefix they share. Makes room
    /// for them and for the `generating` tokens already in the batch.
    private func addPromptChunks(_ entries: inout [Entry], generating: Int) {
        let prompting = active.filter { $0.inPrompt && resolveFollower($0) }
        guard !prompting.isEmpty else {
            makeFree(generating)
            return
        }
        var budget = entries.isEmpty ? config.batchSize : min(config.promptChunk, config.batchSize - generating)
        // Chunks sized by measured speed, except for a deterministic request: its prompt
        // goes in fixed chunks, as in any other run.
        if secondsPerPromptToken > 0, !prompting.contains(where: { $0.request.deterministic }) {
            budget = min(budget, max(32, Int((entries.isEmpty ? Scheduler.soloStepSeconds : Scheduler.stepSeconds) / secondsPerPromptToken)))
        }
        let wanted = prompting.reduce(0) { $0 + $1.request.prompt.count - $1.nPast }
        makeFree(generating + min(budget, wanted))
        budget = min(budget, kv.free - generating)
        rotate = (rotate + 1) % prompting.count
        let order = prompting[rotate...] + prompting[..<rotate]
        let share = max(16, budget / prompting.count)
        for j in order where budget > 0 {
            let n = min(j.request.prompt.count - j.nPast, share, budget)
            var last: Int32? = nil
            for k in 0..<n {
                let pos = j.nPast + k
                let isLast = pos == j.request.prompt.count - 1
                let idx = batch.add(j.request.prompt[pos], pos: Int32(pos), seq: j.seq, logits: isLast)
                if isLast { last = idx }
            }
            budget -= n
            entries.append(Entry(job: j, count: n, logitsIndex: last))
        }
    }

    /// Decodes the batch, which a cancel of one of its jobs can abort, and times it for
    /// the prompt chunks and the drafts. True when its cells are in the cache and its
    /// results are to be applied; after a failure its sequences are rolled back (no KV
    /// slot, aborted) or end with an error (any other return code).
    private func decodeBatch(_ entries: [Entry]) -> Bool {
        // Only a job with a prompt chunk in the batch aborts it when cancelled: for a token or
        // a draft, aborting saves nothing and throws away every other sequence's step (a
        // variation stopped as it streams cost its three siblings theirs, with llama.cpp
        // logging a failed decode each time).
        let abortable = entries.filter { $0.count >= Self.abortableTokens }
        inFlight.withLock { s in s = Set(abortable.map { $0.job.id }) }
        // The abort flag is set for this decode alone: a cancel that landed before the flag
        // was armed still aborts it, and a late `setAbort(true)` meant for the previous decode
        // (a cancel that saw its job in flight just before the flag was cleared) is dropped;
        // left set, it aborted every later decode at once, forever.
        ctx.setAbort(abortable.contains(where: { $0.job.isCancelled }) || stopRequested)
        let started = ContinuousClock.now
        let rc = ctx.decode(batch)
        if rc == 0 {
            let seconds = (ContinuousClock.now - started).inSeconds
            if batch.count >= 64 {
                let perToken = seconds / Double(batch.count)
                secondsPerPromptToken = secondsPerPromptToken == 0 ? perToken : 0.7 * secondsPerPromptToken + 0.3 * perToken
            }
            drafter.stepCost.record(tokens: batch.count, seconds: seconds)
        }
        inFlight.withLock { $0 = [] }
        ctx.setAbort(false)

        switch rc {
        case 0:
            for e in entries { kv.append(Int(e.job.seq), e.count) }
            return true
        case 1, 2:
            // No KV slot (1) or aborted (2): processed micro-batches stay in memory, so
            // roll every sequence in this batch back to where it was.
            for e in entries {
                ctx.removeTokens(seq: e.job.seq, from: Int32(e.job.nPast))
                e.job.draft = []
            }
            if rc == 1 { reportSlotFailure("llama_decode found no KV slot for \(batch.count) tokens with \(kv.free) of \(kv.capacity) cells free") }
            return false
        default:
            for e in entries {
                trim(Int(e.job.seq), to: 0)
                release(e.job)
                settle(e.job, throwing: EngineError.decodingFailure("llama_decode returned \(rc)"))
            }
            let failed = Set(entries.map { $0.job.id })
            active.removeAll { failed.contains($0.id) }
            return false
        }
    }

    /// After a successful decode: generating sequences take their sampled tokens (and
    /// what their drafts got right), prompts advance (progress reported), and a prompt
    /// just finished samples its first token; finished requests leave the batch.
    private func applyResults(_ entries: [Entry]) {
        let now = ContinuousClock.now
        var finished: Set<UInt64> = []
        for e in entries {
            let j = e.job
            if let tok = j.pending, !j.inPrompt {
                advanceGenerating(j, e, pending: tok, now: now, finished: &finished)
                continue
            }
            slots[Int(j.seq)].tokens += j.request.prompt[j.nPast..<(j.nPast + e.count)]
            j.nPast += e.count
            if j.lastProgress.map({ now - $0 > .milliseconds(250) }) ?? true || !j.inPrompt {
                j.lastProgress = now
                j.continuation.yield(.prompt(evaluated: j.nPast, total: j.request.prompt.count, cached: j.nCached))
            }
            guard let idx = e.logitsIndex else { continue }
            if j.request.maxTokens == 0 {
                finish(j, .prompt, now: now)
                finished.insert(j.id)
                continue
            }
            let (tok, ended) = emitNext(j, index: idx, now: now, finished: &finished)
            if !ended, let tok { j.pending = tok }
        }
        if !finished.isEmpty { active.removeAll { finished.contains($0.id) } }
    }

    /// A generating sequence after the decode: its pending token and any draft are in the
    /// cache. The drafter keeps the draft tokens its sampler agrees with (`Drafter.accept`),
    /// and the cells of the rest are removed.
    private func advanceGenerating(_ j: Job, _ e: Entry, pending: Token, now: ContinuousClock.Instant, finished: inout Set<UInt64>) {
        let s = Int(j.seq)
        if let t = j.tentative {
            // The pending token closed a string: it stands unless the model meant to go on.
            j.tentative = nil
            if let r = replacement(for: t, of: j, index: e.logitsIndex!) {
                trim(s, to: j.nPast)
                t.restore(j)
                (j.pending, j.draft) = (nil, [])
                let (tok, ended) = emitNext(j, index: e.logitsIndex!, now: now, finished: &finished, token: r)
                if !ended { j.pending = tok }
                return
            }
            if !t.delta.isEmpty { j.continuation.yield(.text(t.delta)) }
        }
        let start = j.nPast
        let drafted = j.draft.count
        slots[s].tokens.append(pending)
        slots[s].tokens += j.draft
        j.armable = drafted == 0
        let taken = drafter.accept(j, indices: [e.logitsIndex!] + e.draftIndices) { index in
            emitNext(j, index: index, now: now, finished: &finished)
        }
        j.armable = true
        j.nPast = start + 1 + taken
        if taken < drafted { trim(s, to: j.nPast) }
    }

    /// Samples the job's next token from the logits at batch `index` and emits it: the
    /// sampler takes it, its text streams, and the job finishes on an end-of-generation
    /// token, at `maxTokens`, or (an error) when the grammar admits nothing. The token
    /// emitted (nil when none was), and whether the job has ended.
    private func emitNext(_ j: Job, index: Int32, now: ContinuousClock.Instant, finished: inout Set<UInt64>,
                          token: Token? = nil) -> (Token?, ended: Bool) {
        guard let sampler = j.sampler else { return (nil, true) }
        // A fact begun is finished as the source writes it (the logits at `index` go unused).
        let forced = token == nil ? j.facts?.next() : nil
        let tok = token ?? forced ?? sample(j, sampler, index: index)
        if tok < 0 {
            release(j)
            settle(j, throwing: EngineError.decodingFailure("the sampler found no admissible token (grammar dead end)"))
            finished.insert(j.id)
            return (nil, true)
        }
        let piece = model.piece(tok, special: j.request.renderSpecial)
        let pieceText = String(decoding: piece, as: UTF8.self)
        let held = holdIfClose(j, tok, text: pieceText, index: index)
        sampler.accept(tok)
        if j.firstToken == nil { j.firstToken = now }
        if model.isEndOfGeneration(tok) {
            finish(j, .stop, now: now)
            finished.insert(j.id)
            return (nil, true)
        }
        j.generated.append(tok)
        j.repeats?.observe(tok)
        drafter.emitted(tok, by: j)
        j.facts?.observe(tok, text: pieceText, wasForced: forced != nil)
        if forced == nil, j.request.grammar != nil, let rest = j.facts?.forced, !rest.isEmpty {
            // Under a grammar, as much of the fact as it accepts from here (the sampler has taken `tok`).
            j.facts?.limit(to: sampler.grammarPrefix(rest))
        }
        j.numbers?.observe(pieceText)
        j.words?.observe(tok)
        let delta = j.text.append(piece)
        if j.generated.count >= j.request.maxTokens {
            if !delta.isEmpty { j.continuation.yield(.text(delta)) }
            finish(j, .length, now: now)
            finished.insert(j.id)
            return (tok, true)
        }
        if let held {
            // Streamed once the close stands (`advanceGenerating`).
            held.delta = delta
            j.tentative = held
        } else if !delta.isEmpty {
            j.continuation.yield(.text(delta))
        }
        return (tok, false)
    }

    /// The job's next token sampled, never one that repeats a run of its output
    /// (`RepeatGuard`), writes a number its source does not have (`NumberGuard`) or a word
    /// it may not write (`WordGuard`), unless nothing else is admissible (a grammar's forced literal).
    private func sample(_ j: Job, _ sampler: LlamaSampler, index: Int32) -> Token {
        let banned = (j.repeats?.banned ?? []) + (j.numbers?.banned ?? []) + (j.words?.banned ?? [])
        guard !banned.isEmpty else { return sampler.sample(ctx, index: index) }
        let tok = sampler.sample(ctx, index: index, banned: banned)
        return tok >= 0 ? tok : sampler.sample(ctx, index: index)
    }

    private func finish(_ j: Job, _ reason: FinishReason, now: ContinuousClock.Instant) {
        let tail = j.text.finish()
        if !tail.isEmpty { j.continuation.yield(.text(tail)) }
        // A long, valuable prefix evaluated here is saved once its result is delivered.
        if j.request.cachePriority > .normal, j.request.prompt.count - j.nCached >= PrefixStore.minimumTokens { saves.append(Int(j.seq)) }
        release(j)
        let result = GenerationResult(text: j.text.all, tokens: j.generated, finishReason: reason, stats: j.stats(now: now))
        settlements.append {
            j.continuation.yield(.done(result))
            j.continuation.finish()
        }
    }

    /// The cache had no room where the cell mirror said it would: a bug, logged the first
    /// time. Idle prefixes are dropped and the newest running request ends with an error,
    /// so the engine always moves on (never a retry loop).
    private func reportSlotFailure(_ detail: String) {
        slotFailures += 1
        if slotFailures == 1 { warn("KV cache accounting was wrong (\(detail)); the newest request ends with an error") }
        makeFree(kv.capacity)
        guard let j = active.max(by: { ($0.admitted ?? $0.submitted) < ($1.admitted ?? $1.submitted) }) else { return }
        trim(Int(j.seq), to: 0)
        release(j)
        settle(j, throwing: EngineError.decodingFailure("the KV cache had no room for this request beside the others (\(detail))"))
        active.removeAll { $0 === j }
    }
}

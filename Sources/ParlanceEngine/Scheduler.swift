import Foundation
import Synchronization

/// Owns the llama context on one dedicated thread and runs continuous batching:
/// every step decodes one token for each generating sequence plus a bounded chunk of
/// pending prompt tokens, all in one `llama_decode` batch.
///
/// Prefix reuse: each sequence id remembers the tokens in its KV cache. A new request
/// takes the idle sequence sharing its longest prefix (trimming the rest) or copies the
/// prefix from a busy one (`llama_memory_seq_cp`, free with the unified cache), so
/// instructions, documents and session histories are evaluated once. Admission and
/// eviction follow the cache cell by cell (`KVCells`, `Admission.swift`).
final class Scheduler: @unchecked Sendable {
    struct Slot {
        var tokens: [Token] = []   // what this sequence's KV cache holds, position by position
        var job: Job? = nil
        var lastUsed: UInt64 = 0
        var priority: CachePriority = .normal
    }

    struct Config {
        var sequences: Int      // sequence ids (active + cached)
        var maxActive: Int      // requests decoded together
        var maxQueue: Int
        var batchSize: Int
        var promptChunk: Int    // prompt tokens per step while others generate
        /// Speculative decoding for requests that do not say (`GenerationRequest.speculative`).
        var speculative: Bool = true
        /// Logits rows reserved for drafted tokens in one batch (0: never draft).
        var draftRows: Int = 0
        /// After every step, check that the cell mirror, the slots' tokens and llama.cpp's
        /// memory agree, and stop the process if they do not (tests turn this on).
        var checkKV: Bool = false
    }

    let ctx: LlamaContext
    let model: LlamaModel
    let config: Config
    private let batch: LlamaBatch
    let warn: @Sendable (String) -> Void

    // Inbox: the only state shared with other threads.
    private struct Inbox {
        var submitted: [Job] = []
        var stop = false
        /// Save the cached sequences' KV states before stopping (an unload).
        var saveOnStop = false
        var waitingCount = 0
        var stats: EngineStats
    }
    private let inbox: Mutex<Inbox>   // guards submissions, stop, and the published stats snapshot
    private let wake = NSCondition()  // signalled on submit/cancel/stop
    /// Ids of jobs in the batch being decoded now, so a cancel can abort that decode.
    private let inFlight = Mutex<Set<UInt64>>([])

    // Engine-thread state.
    var slots: [Slot]
    var waiting: [Job] = []
    var active: [Job] = []
    var kv: KVCells
    /// Decodes that found no free KV cell although the mirror said there was room (a bug:
    /// logged the first time, each one ends the newest request in the batch).
    private var slotFailures = 0
    private var tick: UInt64 = 0
    private var rotate = 0
    /// Final events (results and errors) held until the step's stats are published, so a
    /// client that reads `model/status` right after a response sees its slot free.
    private var settlements: [() -> Void] = []
    /// Sequences to save to the KV state store after this iteration's results are out.
    private var saves: [Int] = []
    let store: PrefixStore?
    /// Measured cost of a prompt token in a large batch (moving average; 0 until measured).
    /// Prompt chunks are sized so one step takes about `stepSeconds` while other requests
    /// generate (they keep their pace), and at most `soloStepSeconds` while none does (whole
    /// batches, as fast as llama.cpp evaluates a prompt, and progress still reported within
    /// 2 s), on slow machines and deep prompts alike.
    private var secondsPerPromptToken = 0.0
    static let stepSeconds = 1.0
    static let soloStepSeconds = 1.8
    /// Drafts for speculative decoding, and the step cost model that sizes them.
    private var drafter: Drafter

    init(ctx: LlamaContext, model: LlamaModel, config: Config, store: PrefixStore?, warn: @escaping @Sendable (String) -> Void) {
        self.ctx = ctx
        self.model = model
        self.config = config
        self.store = store
        self.warn = warn
        kv = KVCells(capacity: ctx.size, sequences: config.sequences)
        batch = LlamaBatch(capacity: config.batchSize, sequences: config.sequences)
        slots = Array(repeating: Slot(), count: config.sequences)
        drafter = Drafter(draftRows: config.draftRows, batchSize: config.batchSize, speculative: config.speculative)
        inbox = Mutex(Inbox(stats: EngineStats(
            sequenceSlots: config.maxActive, freeSlots: config.maxActive, activeRequests: 0, queuedRequests: 0,
            maxQueue: config.maxQueue, cachedSequences: 0, cachedTokens: 0, contextSize: ctx.size)))
    }

    // MARK: any thread

    func submit(_ job: Job) {
        let accepted = inbox.withLock { box -> Bool in
            if box.stop { return false }
            if box.waitingCount >= config.maxQueue + config.maxActive { return false }
            box.waitingCount += 1
            box.submitted.append(job)
            return true
        }
        if !accepted {
            let stopped = inbox.withLock { $0.stop }
            job.continuation.finish(throwing: stopped ? EngineError.shutDown : EngineError.queueFull(capacity: config.maxQueue))
            return
        }
        signal()
    }

    func cancel(_ job: Job) {
        job.cancelled.store(true, ordering: .releasing)
        if inFlight.withLock({ $0.contains(job.id) }) { ctx.setAbort(true) }
        signal()
    }

    func stop(saving: Bool = false) {
        inbox.withLock {
            $0.stop = true
            $0.saveOnStop = saving
        }
        if !saving { ctx.setAbort(true) }
        signal()
    }

    /// Signalled by the engine thread once it has left `run()` (and so llama.cpp) and let
    /// go of the scheduler.
    let exited = DispatchSemaphore(value: 0)

    /// Stops, then waits up to `timeout` seconds for the engine thread to leave llama.cpp,
    /// so a process that exits next never tears llama.cpp down under a running decode.
    func stopAndWait(timeout: Double, saving: Bool = false) {
        stop(saving: saving)
        _ = exited.wait(timeout: .now() + timeout)
    }

    var stats: EngineStats { inbox.withLock { $0.stats } }

    private func signal() {
        wake.lock()
        wake.signal()
        wake.unlock()
    }

    // MARK: engine thread

    func run() {
        while true {
            var new: [Job] = []
            var stopping = false
            wake.lock()
            while true {
                (new, stopping) = inbox.withLock { box in
                    defer { box.submitted = [] }
                    return (box.submitted, box.stop)
                }
                if !new.isEmpty || stopping || !active.isEmpty || !waiting.isEmpty { break }
                wake.wait()
            }
            wake.unlock()
            if stopping {
                for j in active + waiting + new { j.continuation.finish(throwing: EngineError.shutDown) }
                if inbox.withLock({ $0.saveOnStop }) {
                    // Longest first: a shorter prefix of a saved one is covered by it.
                    for seq in slots.indices.sorted(by: { slots[$0].tokens.count > slots[$1].tokens.count }) where slots[seq].job == nil {
                        store?.save(seq: Int32(seq), tokens: slots[seq].tokens, ctx: ctx)
                    }
                }
                return
            }
            waiting += new
            reapCancelled()
            admit()
            publishStats()
            if !active.isEmpty { step() }
            if config.checkKV { checkMirror() }
            publishStats()
            let done = settlements
            settlements = []
            done.forEach { $0() }
            for seq in saves where slots[seq].job == nil { store?.save(seq: Int32(seq), tokens: slots[seq].tokens, ctx: ctx) }
            saves = []
        }
    }

    /// Ends a job's stream once this iteration's stats are published.
    func settle(_ j: Job, throwing error: Error) {
        settlements.append { j.continuation.finish(throwing: error) }
    }

    private func publishStats() {
        let busy = slots.filter { $0.job != nil }.count
        let cached = slots.filter { $0.job == nil && !$0.tokens.isEmpty }
        let s = EngineStats(
            sequenceSlots: config.maxActive, freeSlots: config.maxActive - busy, activeRequests: active.count,
            queuedRequests: waiting.count, maxQueue: config.maxQueue, cachedSequences: cached.count,
            cachedTokens: cached.reduce(0) { $0 + $1.tokens.count }, contextSize: ctx.size)
        let n = active.count + waiting.count
        inbox.withLock { box in
            box.stats = s
            box.waitingCount = n + box.submitted.count
        }
    }

    private func reapCancelled() {
        waiting.removeAll { j in
            guard j.isCancelled else { return false }
            settle(j, throwing: EngineError.cancelled(partial: "", generatedTokens: 0))
            return true
        }
        for j in active where j.isCancelled {
            release(j)
            settle(j, throwing: EngineError.cancelled(partial: j.text.all + j.text.finish(), generatedTokens: j.generated.count))
        }
        active.removeAll { $0.isCancelled }
    }

    func release(_ job: Job) {
        guard job.seq >= 0 else { return }
        let s = Int(job.seq)
        tick += 1
        slots[s].job = nil
        kv.setRunning(s, false)
        slots[s].lastUsed = tick
        job.sampler = nil
    }

    // MARK: one decode step

    private struct Entry {
        let job: Job
        let count: Int
        let logitsIndex: Int32?
        /// Batch indices of the job's drafted tokens, in order (they follow its pending token).
        var draftIndices: [Int32] = []
    }

    private func step() {
        batch.clear()
        var entries: [Entry] = []
        // Generating sequences: one token each.
        for j in active where j.pending != nil {
            let idx = batch.add(j.pending!, pos: Int32(j.nPast), seq: j.seq, logits: true)
            entries.append(Entry(job: j, count: 1, logitsIndex: idx))
        }
        // Drafts, verified in this same batch: positions a request was promised cells for
        // (each draft fits in what its `maxTokens` has left).
        if drafter.draftRows > 0, !entries.isEmpty {
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
        // Room for this step, made before the decode: idle cached prefixes go first.
        // Admission promised it; the prompt budget is capped by it all the same.
        let generating = batch.count
        // Prompt chunks, round-robin, so one long prompt never stalls the others. A
        // follower starts once its leader has evaluated the prefix they share.
        let prompting = active.filter { $0.inPrompt && resolveFollower($0) }
        if !prompting.isEmpty {
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
        } else {
            makeFree(generating)
        }
        if kv.free < generating {
            // Admission never lets this happen; if it does, end the newest request rather
            // than decode into a full cache.
            reportSlotFailure("\(generating) generating sequences need a cell each, \(kv.free) of \(kv.capacity) are free")
            return
        }
        guard !entries.isEmpty else { return }

        inFlight.withLock { s in s = Set(entries.map { $0.job.id }) }
        // The abort flag is set for this decode alone: a cancel that landed before the flag
        // was armed still aborts it, and a late `setAbort(true)` meant for the previous decode
        // (a cancel that saw its job in flight just before the flag was cleared) is dropped;
        // left set, it aborted every later decode at once, forever.
        ctx.setAbort(entries.contains(where: { $0.job.isCancelled }) || inbox.withLock { $0.stop })
        let started = ContinuousClock.now
        let rc = ctx.decode(batch)
        if rc == 0 {
            let seconds = Reference.seconds(ContinuousClock.now - started)
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
        case 1, 2:
            // No KV slot (1) or aborted (2): processed micro-batches stay in memory, so
            // roll every sequence in this batch back to where it was.
            for e in entries {
                ctx.removeTokens(seq: e.job.seq, from: Int32(e.job.nPast))
                e.job.draft = []
            }
            if rc == 1 { reportSlotFailure("llama_decode found no KV slot for \(batch.count) tokens with \(kv.free) of \(kv.capacity) cells free") }
            return
        default:
            for e in entries {
                trim(Int(e.job.seq), to: 0)
                release(e.job)
                settle(e.job, throwing: EngineError.decodingFailure("llama_decode returned \(rc)"))
            }
            let failed = Set(entries.map { $0.job.id })
            active.removeAll { failed.contains($0.id) }
            return
        }

        let now = ContinuousClock.now
        var finished: Set<UInt64> = []
        for e in entries {
            let j = e.job
            let s = Int(j.seq)
            if let tok = j.pending, !j.inPrompt {
                advanceGenerating(j, e, pending: tok, now: now, finished: &finished)
                continue
            } else {
                slots[s].tokens += j.request.prompt[j.nPast..<(j.nPast + e.count)]
                j.nPast += e.count
                if j.lastProgress.map({ now - $0 > .milliseconds(250) }) ?? true || !j.inPrompt {
                    j.lastProgress = now
                    j.continuation.yield(.prompt(evaluated: j.nPast, total: j.request.prompt.count, cached: j.nCached))
                }
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

    /// Samples the job's next token from the logits at batch `index` and emits it: the
    /// sampler takes it, its text streams, and the job finishes on an end-of-generation
    /// token, at `maxTokens`, or (an error) when the grammar admits nothing. The token
    /// emitted (nil when none was), and whether the job has ended.
    private func emitNext(_ j: Job, index: Int32, now: ContinuousClock.Instant, finished: inout Set<UInt64>) -> (Token?, ended: Bool) {
        guard let sampler = j.sampler else { return (nil, true) }
        let tok = sampler.sample(ctx, index: index)
        if tok < 0 {
            release(j)
            settle(j, throwing: EngineError.decodingFailure("the sampler found no admissible token (grammar dead end)"))
            finished.insert(j.id)
            return (nil, true)
        }
        sampler.accept(tok)
        if j.firstToken == nil { j.firstToken = now }
        if model.isEndOfGeneration(tok) {
            finish(j, .stop, now: now)
            finished.insert(j.id)
            return (nil, true)
        }
        j.generated.append(tok)
        drafter.emitted(tok, by: j)
        let delta = j.text.append(model.piece(tok, special: j.request.renderSpecial))
        if !delta.isEmpty { j.continuation.yield(.text(delta)) }
        if j.generated.count >= j.request.maxTokens {
            finish(j, .length, now: now)
            finished.insert(j.id)
            return (tok, true)
        }
        return (tok, false)
    }

    /// A generating sequence after the decode: its pending token and any draft are in the
    /// cache. The drafter keeps the draft tokens its sampler agrees with (`Drafter.accept`),
    /// and the cells of the rest are removed.
    private func advanceGenerating(_ j: Job, _ e: Entry, pending: Token, now: ContinuousClock.Instant, finished: inout Set<UInt64>) {
        let s = Int(j.seq)
        let start = j.nPast
        let drafted = j.draft.count
        slots[s].tokens.append(pending)
        slots[s].tokens += j.draft
        let taken = drafter.accept(j, indices: [e.logitsIndex!] + e.draftIndices) { index in
            emitNext(j, index: index, now: now, finished: &finished)
        }
        j.nPast = start + 1 + taken
        if taken < drafted { trim(s, to: j.nPast) }
    }

    /// The debug check tests turn on: every sequence's cells in the mirror, its tokens in
    /// the slot table and its positions in llama.cpp's memory agree.
    private func checkMirror() {
        func fail(_ detail: String) -> Never {
            warn("KV check failed: \(detail)")
            fatalError("KV check failed: \(detail)")
        }
        let running = kv.held(by: slots.indices.filter { slots[$0].job != nil })
        if kv.heldByRunning != running {
            fail("the mirror counts \(kv.heldByRunning) cells held by running requests, they hold \(running)")
        }
        for s in slots.indices {
            let n = kv.count(s)
            let lo = ctx.minPosition(seq: Int32(s)), hi = ctx.maxPosition(seq: Int32(s))
            let memory = hi < 0 ? 0 : (lo == 0 ? Int(hi) + 1 : -1)
            if slots[s].tokens.count != n || memory != n {
                fail("sequence \(s): mirror \(n) cells, slot \(slots[s].tokens.count) tokens, llama.cpp positions \(lo)...\(hi)")
            }
        }
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

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
/// eviction follow the cache cell by cell (`KVCells`, `Admission.swift`). Each step is
/// composed, decoded and applied in `Step.swift`; drafts come from a `Drafter`.
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
    let batch: LlamaBatch
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
    /// Ids of jobs with a prompt chunk in the batch being decoded now, so a cancel of one can
    /// abort that decode.
    let inFlight = Mutex<Set<UInt64>>([])

    // Engine-thread state.
    var slots: [Slot]
    var waiting: [Job] = []
    var active: [Job] = []
    var kv: KVCells
    /// Decodes that found no free KV cell although the mirror said there was room (a bug:
    /// logged the first time, each one ends the newest request in the batch).
    var slotFailures = 0
    private var tick: UInt64 = 0
    /// Where the next step's round of prompt chunks starts.
    var rotate = 0
    /// Final events (results and errors) held until the step's stats are published, so a
    /// client that reads `model/status` right after a response sees its slot free.
    var settlements: [() -> Void] = []
    /// Sequences to save to the KV state store after this iteration's results are out.
    var saves: [Int] = []
    let store: PrefixStore?
    /// The model's tokens holding a `"`, refused where a string is reopened (read on first use).
    lazy var quoteTokens: [Token] = model.quoteTokens()
    /// Measured cost of a prompt token in a large batch (moving average; 0 until measured).
    /// Prompt chunks are sized so one step takes about `stepSeconds` while other requests
    /// generate (they keep their pace), and at most `soloStepSeconds` while none does (whole
    /// batches, as fast as llama.cpp evaluates a prompt, and progress still reported within
    /// 2 s), on slow machines and deep prompts alike.
    var secondsPerPromptToken = 0.0
    static let stepSeconds = 1.0
    static let soloStepSeconds = 1.8
    /// Drafts for speculative decoding, and the step cost model that sizes them.
    var drafter: Drafter

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
            job.continuation.finish(throwing: stopRequested ? EngineError.shutDown : EngineError.queueFull(capacity: config.maxQueue))
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

    /// Whether `stop` has been called.
    var stopRequested: Bool { inbox.withLock { $0.stop } }

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
            enqueue(new)
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
}

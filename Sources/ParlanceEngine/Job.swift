import ParlanceJSON
import Foundation
import Synchronization

/// One generation request as the scheduler sees it. Created on the caller's thread;
/// after submission only the engine thread touches its mutable fields, except `cancelled`.
final class Job: @unchecked Sendable {
    let id: UInt64
    let request: GenerationRequest
    let continuation: AsyncThrowingStream<GenerationEvent, any Error>.Continuation
    /// Set from any thread; polled by the engine thread each step.
    let cancelled = Atomic<Bool>(false)
    let submitted = ContinuousClock.now
    /// When the client request it serves arrived (`RequestArrival`); its submission when
    /// none is known. The waiting line is in this order.
    let arrival: ContinuousClock.Instant

    // Engine-thread state.
    var seq: Int32 = -1
    var nPast = 0            // prompt tokens already in this sequence's KV cache
    var nCached = 0          // of those, how many were reused rather than evaluated
    var pending: Token? = nil  // sampled, not yet evaluated
    var generated: [Token] = []
    var sampler: LlamaSampler? = nil
    var text = UTF8Accumulator()
    var admitted: ContinuousClock.Instant? = nil
    var firstToken: ContinuousClock.Instant? = nil
    var lastProgress: ContinuousClock.Instant? = nil
    /// A request sharing this one's prompt prefix that is evaluating it now: this one waits
    /// until the leader's KV cache holds the first `upTo` tokens, then copies them.
    var follow: (leader: Job, upTo: Int)? = nil
    /// The queue position last reported (0: never queued).
    var queuePosition = 0
    /// Speculative decoding: the prompt and output so far, indexed for drafts (nil when
    /// this request does not draft), how its drafts have fared, and this step's draft.
    var index: NGramIndex? = nil
    var policy = DraftPolicy()
    var draft: [Token] = []
    /// This step's draft is a fact's forced rest (`FactGuard`), not a guess to verify.
    var draftIsForced = false
    /// The source's facts, finished exactly once started (nil: none).
    var facts: FactGuard?
    /// Runs of the output it may not write twice (nil: no guard).
    var repeats: RepeatGuard?
    /// The numbers it may write (nil: any).
    var numbers: NumberGuard?
    /// The words it may not write (nil: any).
    var words: WordGuard?
    /// Where its output stands in JSON strings, the close last emitted while it may still be
    /// taken back, the string reopened last (its number) with how often, and how many closes
    /// were taken back in all (`SpillGuard.swift`). `armable`: this step's tokens are not a
    /// verified draft.
    var lexer = JSONStringLexer()
    var tentative: TentativeClose?
    var reopens = (string: 0, count: 0)
    var spillsUndone = 0
    var armable = true

    init(id: UInt64, request: GenerationRequest, continuation: AsyncThrowingStream<GenerationEvent, any Error>.Continuation) {
        self.id = id
        self.request = request
        self.continuation = continuation
        arrival = RequestArrival.instant ?? submitted
        if let f = request.factGuard, !f.isEmpty { facts = f }
        repeats = request.noRepeatRun.map(RepeatGuard.init(run:))
        numbers = request.numberGuard
        words = request.wordGuard.flatMap { $0.isEmpty ? nil : $0 }
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    var inPrompt: Bool { nPast < request.prompt.count }

    func stats(now: ContinuousClock.Instant) -> GenerationStats {
        func ms(_ d: Duration) -> Double { d.inMilliseconds }
        var s = GenerationStats(
            promptTokens: request.prompt.count, cachedPromptTokens: nCached, generatedTokens: generated.count,
            queuedMs: ms((admitted ?? now) - submitted),
            firstTokenMs: firstToken.map { ms($0 - submitted) } ?? 0,
            totalMs: ms(now - submitted))
        s.draftTokens = policy.drafted
        s.acceptedDraftTokens = policy.accepted
        s.spillsUndone = spillsUndone
        return s
    }
}

/// Collects token bytes and releases only whole UTF-8 characters, holding back a
/// character split across tokens until its last byte arrives.
struct UTF8Accumulator {
    private var held: [UInt8] = []
    private(set) var all = ""

    mutating func append(_ bytes: [UInt8]) -> String {
        held += bytes
        let cut = UTF8Accumulator.completePrefixLength(held)
        guard cut > 0 else { return "" }
        let s = String(decoding: held[..<cut], as: UTF8.self)
        held.removeFirst(cut)
        all += s
        return s
    }

    /// Flushes held bytes (an incomplete character becomes U+FFFD).
    mutating func finish() -> String {
        guard !held.isEmpty else { return "" }
        let s = String(decoding: held, as: UTF8.self)
        held = []
        all += s
        return s
    }

    static func completePrefixLength(_ b: [UInt8]) -> Int {
        var i = b.count - 1
        var back = 0
        while i >= 0, back < 4 {
            let c = b[i]
            if c & 0xC0 != 0x80 {
                let need = c < 0x80 ? 1 : c >> 5 == 0x6 ? 2 : c >> 4 == 0xE ? 3 : c >> 3 == 0x1E ? 4 : 1
                return back + 1 >= need ? b.count : i
            }
            i -= 1
            back += 1
        }
        return b.count
    }
}
